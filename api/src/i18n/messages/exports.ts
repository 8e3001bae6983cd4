import { defineMessages } from '../define.ts';

/** Exports: rendering a project into a downloadable video. */
export const exportMessages = defineMessages({
  en: {
    'exports.not_found': 'Export not found.',
    'exports.draft_not_found': 'Draft not found in this project.',
    'exports.overrides_with_draft': 'Send either draft_id or export_settings.edit_overrides, not both: a draft brings its own overrides.',
    'exports.media_processing': 'A video of this project is still being processed; export once it is ready.',
    'exports.nothing_kept': 'The cuts remove the whole timeline: there is nothing left to export.',
    'exports.captions_need_analysis': 'Captions need an analysed project: run the analysis first, or export without captions.',
    'exports.too_many_active': 'You already have {max} exports rendering; wait for one to finish.',
    'exports.too_long': 'The export would last {seconds} s; an export may last at most {max_seconds} s. Cut it shorter or export it in parts.',
    'exports.too_many_segments': 'The export would join {segments} pieces; an export may join at most {max} pieces. Merge or remove some cuts, canvases or inserts.',
    'exports.not_ready': 'The export is not ready to download (status: {status}).',
    'exports.expired': 'This export expired on {expired_at} and its file was deleted; export again.',
  },
  pt: {
    'exports.not_found': 'Exportação não encontrada.',
    'exports.draft_not_found': 'Rascunho não encontrado neste projeto.',
    'exports.overrides_with_draft': 'Envie draft_id ou export_settings.edit_overrides, não ambos: um rascunho traz os seus próprios ajustes.',
    'exports.media_processing': 'Um vídeo deste projeto ainda está a ser processado; exporte quando estiver pronto.',
    'exports.nothing_kept': 'Os cortes removem toda a linha do tempo: não resta nada para exportar.',
    'exports.captions_need_analysis': 'As legendas precisam de um projeto analisado: execute a análise primeiro ou exporte sem legendas.',
    'exports.too_many_active': 'Já tem {max} exportações em curso; espere que uma termine.',
    'exports.too_long': 'A exportação duraria {seconds} s; uma exportação pode durar no máximo {max_seconds} s. Encurte-a ou exporte-a em partes.',
    'exports.too_many_segments': 'A exportação juntaria {segments} partes; uma exportação pode juntar no máximo {max} partes. Junte ou remova alguns cortes, telas ou inserções.',
    'exports.not_ready': 'A exportação ainda não está pronta para transferir (estado: {status}).',
    'exports.expired': 'Esta exportação expirou em {expired_at} e o ficheiro foi apagado; exporte de novo.',
  },
  es: {
    'exports.not_found': 'Exportación no encontrada.',
    'exports.draft_not_found': 'Borrador no encontrado en este proyecto.',
    'exports.overrides_with_draft': 'Envía draft_id o export_settings.edit_overrides, no ambos: un borrador trae sus propios ajustes.',
    'exports.media_processing': 'Un vídeo de este proyecto aún se está procesando; exporta cuando esté listo.',
    'exports.nothing_kept': 'Los cortes eliminan toda la línea de tiempo: no queda nada que exportar.',
    'exports.captions_need_analysis': 'Los subtítulos necesitan un proyecto analizado: ejecuta el análisis primero o exporta sin subtítulos.',
    'exports.too_many_active': 'Ya tienes {max} exportaciones en curso; espera a que termine una.',
    'exports.too_long': 'La exportación duraría {seconds} s; una exportación puede durar como máximo {max_seconds} s. Acórtala o expórtala por partes.',
    'exports.too_many_segments': 'La exportación uniría {segments} fragmentos; una exportación puede unir como máximo {max} fragmentos. Une o elimina algunos cortes, lienzos o inserciones.',
    'exports.not_ready': 'La exportación aún no está lista para descargar (estado: {status}).',
    'exports.expired': 'Esta exportación caducó el {expired_at} y su archivo se eliminó; exporta de nuevo.',
  },
});
