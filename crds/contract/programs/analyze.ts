// The `analyze` program's input and result (AnalysisJob): the api writes the input, the
// whisper image's program reads it and writes the result, the api's completion reads that.
import { z } from 'zod';

export const analysisModes = ['ai_edit', 'captions_only'] as const;

const analyzeSettingsSchema = z.object({
  pacing_level: z.int().min(0).max(100),
  false_start_sensitivity: z.int().min(0).max(100),
  /** ISO 639-1 code, or null to let the recognizer detect it. */
  language: z.string().min(2).max(8).nullable(),
  analysis_mode: z.enum(analysisModes),
  director_notes: z.string().max(4000).optional(),
});
export type AnalyzeSettings = z.infer<typeof analyzeSettingsSchema>;

/** One spine source, in timeline order, with where it starts on the timeline. */
const analyzeSourceSchema = z.object({
  media_file_id: z.uuid(),
  media_item_id: z.uuid(),
  /** The 16 kHz mono WAV the artifact job made; null for a source without audio. */
  audio_key: z.string().min(1).nullable(),
  /** How long the source plays on the timeline (its stretch, for a split clip). */
  duration_ms: z.int().min(0),
  timeline_offset_ms: z.int().min(0),
  /** Where in the audio the stretch starts (0 unless the clip was split). */
  source_start_ms: z.int().min(0).default(0),
});
export type AnalyzeSource = z.infer<typeof analyzeSourceSchema>;

export const analyzeInputSchema = z.object({
  settings: analyzeSettingsSchema,
  sources: z.array(analyzeSourceSchema).min(1),
});
export type AnalyzeInput = z.infer<typeof analyzeInputSchema>;

/** AI edit kinds the analysis produces (the spec's "AI-detected kind"). */
export const aiEditTypes = ['silence', 'false_start', 'filler'] as const;
export type AiEditType = (typeof aiEditTypes)[number];

/** Times are timeline times (ms). */
export const aiEditSchema = z.object({
  type: z.enum(aiEditTypes),
  start_ms: z.int().min(0),
  end_ms: z.int().min(1),
  active: z.boolean(),
  /** Why, for a person: "Pause of 2.3 s", 'False start, restarted: "…", said again as "…" (its first words said again)'; "(offered, not cut: …)" ends an edit offered on weak evidence. */
  reason: z.string().max(1000),
  /** How sure, 0–1, from the evidence (beyond the spec; docs/decisions.md, issue 21). Absent from an older program's edits. */
  confidence: z.number().min(0).max(1).optional(),
  /** A shortened pause (issue 39; crds/contract/editing/kept-pause.ts): the pause the edit lies in, what of it stays and how it is split, the breath it holds; start_ms/end_ms are what it removes. Absent from other edits and an older program's. */
  pause: z
    .object({
      start_ms: z.int().min(0),
      end_ms: z.int().min(1),
      kept_ms: z.int().min(0),
      kept_split: z.number().min(0).max(1),
      breath: z.object({ start_ms: z.int().min(0), end_ms: z.int().min(0) }).nullable(),
    })
    .optional(),
});
export type AiEdit = z.infer<typeof aiEditSchema>;

const transcriptWordSchema = z.object({
  word: z.string(),
  start_ms: z.int().min(0),
  end_ms: z.int().min(0),
  confidence: z.number().min(0).max(1).nullable(),
  /** Index of the source in the input's `sources`. */
  source_index: z.int().min(0),
});
export type TranscriptWord = z.infer<typeof transcriptWordSchema>;

/** transcript.json: timeline-timed words, what captions and the editor read. */
export const transcriptSchema = z.object({
  language: z.string().nullable(),
  text: z.string(),
  words: z.array(transcriptWordSchema),
});
export type Transcript = z.infer<typeof transcriptSchema>;

/** edits.json */
export const aiEditsSchema = z.array(aiEditSchema);

/** result.json: small; the transcript and the edits are objects it names. */
export const analyzeResultSchema = z.object({
  transcript_key: z.string().min(1),
  edits_key: z.string().min(1),
  language: z.string().nullable(),
  /** Audio analysed, ms: what the AI minutes are charged for. */
  audio_ms: z.int().min(0),
  counts: z.object({ silence: z.int().min(0), false_start: z.int().min(0), filler: z.int().min(0) }),
  word_count: z.int().min(0),
  /** Sources whose speech could not be told from their noise: their pauses were offered inactive, not cut (issue 21). */
  weak_evidence: z.array(z.object({ source_index: z.int().min(0), reason: z.string().max(500) })).default([]),
});
export type AnalyzeResult = z.infer<typeof analyzeResultSchema>;
