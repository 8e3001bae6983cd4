import { defineMessages } from '../define.ts';

/** Manual and asset edits of a project's timeline. */
export const editMessages = defineMessages({
  en: {
    'edits.not_found': 'Edit not found.',
    'edits.too_many': 'A project holds at most {max} edits; delete some before adding more.',
    'edits.asset_not_found': 'Media item not found.',
    'edits.end_before_start': 'end_ms ({end_ms}) must be greater than start_ms ({start_ms}).',
    'edits.insert_too_long': 'An inserted asset may last at most {max_ms} ms; this one lasts {length_ms} ms.',
    'edits.asset_offset_beyond': "asset_offset_ms ({offset_ms}) must be less than the asset's duration ({duration_ms} ms).",
    'edits.asset_not_ready': 'The media item is still {status}; an asset edit can switch to it once it is uploaded.',
    'edits.asset_field_on_cut': '{field} applies to asset edits only; this edit is {type}.',
    'edits.pause_field_on_other': '{field} applies to shortened pauses only (a silence edit that carries a pause); this edit is {type}.',
    'edits.kept_leaves_nothing': 'Keeping {kept_ms} ms of this {pause_ms} ms pause would remove nothing; keep less, or turn the edit off.',
    'edits.kept_with_range': 'kept_ms and keep_breath place the removed range themselves; send them without start_ms and end_ms.',
  },
  pt: {
    'edits.not_found': 'Edição não encontrada.',
    'edits.too_many': 'Um projeto tem no máximo {max} edições; apague algumas antes de adicionar mais.',
    'edits.asset_not_found': 'Item de mídia não encontrado.',
    'edits.end_before_start': 'end_ms ({end_ms}) tem de ser maior que start_ms ({start_ms}).',
    'edits.insert_too_long': 'Um recurso inserido pode durar no máximo {max_ms} ms; este dura {length_ms} ms.',
    'edits.asset_offset_beyond': 'asset_offset_ms ({offset_ms}) tem de ser menor que a duração do recurso ({duration_ms} ms).',
    'edits.asset_not_ready': 'O item de mídia ainda está {status}; uma edição de recurso poderá usá-lo quando o carregamento terminar.',
    'edits.asset_field_on_cut': '{field} aplica-se só a edições de recurso; esta edição é {type}.',
    'edits.pause_field_on_other': '{field} aplica-se só a pausas encurtadas (uma edição de silêncio com pausa); esta edição é {type}.',
    'edits.kept_leaves_nothing': 'Manter {kept_ms} ms desta pausa de {pause_ms} ms não removeria nada; mantenha menos, ou desative a edição.',
    'edits.kept_with_range': 'kept_ms e keep_breath posicionam o trecho removido; envie-os sem start_ms e end_ms.',
  },
  es: {
    'edits.not_found': 'Edición no encontrada.',
    'edits.too_many': 'Un proyecto tiene como máximo {max} ediciones; elimina algunas antes de añadir más.',
    'edits.asset_not_found': 'Elemento multimedia no encontrado.',
    'edits.end_before_start': 'end_ms ({end_ms}) debe ser mayor que start_ms ({start_ms}).',
    'edits.insert_too_long': 'Un recurso insertado puede durar como máximo {max_ms} ms; este dura {length_ms} ms.',
    'edits.asset_offset_beyond': 'asset_offset_ms ({offset_ms}) debe ser menor que la duración del recurso ({duration_ms} ms).',
    'edits.asset_not_ready': 'El elemento multimedia aún está {status}; una edición de recurso podrá usarlo cuando termine de subirse.',
    'edits.asset_field_on_cut': '{field} solo se aplica a ediciones de recurso; esta edición es {type}.',
    'edits.pause_field_on_other': '{field} solo se aplica a pausas acortadas (una edición de silencio con pausa); esta edición es {type}.',
    'edits.kept_leaves_nothing': 'Conservar {kept_ms} ms de esta pausa de {pause_ms} ms no eliminaría nada; conserva menos, o desactiva la edición.',
    'edits.kept_with_range': 'kept_ms y keep_breath sitúan el tramo eliminado; envíalos sin start_ms ni end_ms.',
  },
});
