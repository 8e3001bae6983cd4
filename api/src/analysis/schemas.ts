import { z } from 'zod';
import { issueKey } from '../i18n/index.ts';
import { analysisModes } from '../../../crds/contract/programs/analyze.ts';
import { analysisRunStatuses, type AnalysisRunRow } from './entities.ts';

/** ISO 639-1: two lowercase letters (the recognizer decides which it supports). */
const isoLanguage = z.string().regex(/^[a-z]{2}$/, issueKey('validation.iso_639_1'));

export const AnalyzeBody = z
  .strictObject({
    preset_id: z.uuid().optional().describe("One of the caller's analysis presets, applied as stored: its pacing_level, false_start_sensitivity, language and director_notes fill the fields this request leaves out."),
    pacing_level: z.int().min(0).max(100).optional().describe('Required unless preset_id gives it.'),
    false_start_sensitivity: z
      .int()
      .min(0)
      .max(100)
      .optional()
      .describe(
        "Required unless preset_id gives it. How readily disfluencies are found, 0–100: false starts (a take must resemble its restart less, the higher it is) and fillers heard by their sound (\"um\", \"uh\", \"mm\": Whisper leaves them out of the transcript). Such a filler is an edit of type filler (reason \"filler 'uh' 420 ms\") offered from confidence 0.85 − 0.4 × sensitivity / 100 (0.65 at 50) and applied by default from confidence 0.85 at any sensitivity; a filler never overlaps the sound of a word the recognizer heard.",
      ),
    language: isoLanguage.nullable().optional().describe('ISO code, or null to auto-detect. Required unless preset_id gives it.'),
    director_notes: z
      .string()
      .max(4000)
      .optional()
      .describe("The transcription's prompt (names, terms, spelling Whisper should follow). Tiers without can_use_ai_director: 403 unless blank."),
    analysis_mode: z.enum(analysisModes).default('ai_edit').describe('ai_edit (cuts and captions) or captions_only (transcript only; no cut is active).'),
  })
  .superRefine((body, ctx) => {
    if (body.preset_id) return;
    for (const field of ['pacing_level', 'false_start_sensitivity', 'language'] as const) {
      if (body[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'Required (or give a preset_id whose preset has it)' });
    }
  })
  .meta({ id: 'AnalyzeRequest' });

export const ProjectRunParams = z.object({ project_uuid: z.uuid(), run_uuid: z.uuid() });
export const RunsQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) });

export const EstimatedCredits = z
  .object({
    estimated_minutes: z.number(),
    balance: z.number().describe("AI minutes, as the billing status's credits.ai_minutes.balance"),
    reserved: z.number().describe('Minutes held by analyses in progress (credits.ai_minutes.reserved)'),
    available: z.number().describe('balance less reserved: what an analysis may use now'),
    sufficient: z.boolean(),
  })
  .meta({ id: 'EstimatedCredits' });

export const AnalysisRunSummary = z
  .object({
    uuid: z.uuid(),
    status: z.enum(analysisRunStatuses),
    pacing_level: z.int(),
    false_start_sensitivity: z.int(),
    language: z.string().nullable(),
    edit_count: z.int(),
    silence_count: z.int(),
    false_start_count: z.int(),
    filler_count: z.int(),
    credits_charged: z.number().nullable(),
    duration_ms: z.int().nullable(),
    created_at: z.iso.datetime(),
    weak_evidence: z
      .array(z.object({ source_index: z.int(), reason: z.string() }))
      .describe(
        'Beyond the spec: the sources (index in timeline order) whose speech could not be told from their noise, and why; their pauses are offered inactive instead of cut. Empty when every source was clear or the run has not completed.',
      ),
  })
  .meta({ id: 'AnalysisRunSummary' });

export function runSummary(run: AnalysisRunRow): z.infer<typeof AnalysisRunSummary> {
  return {
    uuid: run.id,
    status: run.status,
    pacing_level: run.pacingLevel,
    false_start_sensitivity: run.falseStartSensitivity,
    language: run.language ?? null,
    edit_count: run.editCount,
    silence_count: run.silenceCount,
    false_start_count: run.falseStartCount,
    filler_count: run.fillerCount,
    credits_charged: run.creditsCharged === null || run.creditsCharged === undefined ? null : Number(run.creditsCharged),
    duration_ms: run.durationMs ?? null,
    created_at: run.createdAt.toISOString(),
    weak_evidence: run.weakEvidence ?? [],
  };
}
export type AnalyzeRequest = z.infer<typeof AnalyzeBody>;
