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
  },
});
