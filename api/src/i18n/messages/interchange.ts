import { defineMessages } from '../define.ts';

/** Timelines and sidecar files of an edit. */
export const interchangeMessages = defineMessages({
  en: { 'interchange.draft_or_export': 'Send either draft_id or export_id, not both.' },
  pt: { 'interchange.draft_or_export': 'Envie draft_id ou export_id, não ambos.' },
  es: { 'interchange.draft_or_export': 'Envía draft_id o export_id, no ambos.' },
});
