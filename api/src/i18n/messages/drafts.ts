import { defineMessages } from '../define.ts';

/** Drafts: saved overrides and export settings of a project. */
export const draftMessages = defineMessages({
  en: {
    'drafts.not_found': 'Draft not found.',
    'drafts.end_before_start': 'edit_overrides.{edit_uuid}: end_ms ({end_ms}) must be greater than start_ms ({start_ms}).',
  },
  pt: {
    'drafts.not_found': 'Rascunho não encontrado.',
    'drafts.end_before_start': 'edit_overrides.{edit_uuid}: end_ms ({end_ms}) tem de ser maior que start_ms ({start_ms}).',
  },
  es: {
    'drafts.not_found': 'Borrador no encontrado.',
    'drafts.end_before_start': 'edit_overrides.{edit_uuid}: end_ms ({end_ms}) debe ser mayor que start_ms ({start_ms}).',
  },
});
