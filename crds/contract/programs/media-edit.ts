// The `media-edit` program's input and result (ArtifactJob): the api writes the input,
// the ffmpeg image's program reads it and writes the result, the api's produced-media
// completion reads that. `producedMediaResultSchema` is what that completion reads of
// both programs that produce a new stored file (media-edit and media-import).
import { z } from 'zod';
import { artifactResultSchema } from './artifact.ts';

const timeRangeSchema = z.object({ startMs: z.int().min(0), endMs: z.int().min(0) });

export const mediaEditInputSchema = z.object({
  sourceKey: z.string().min(1),
  contentType: z.string().min(1),
  /** What the api knew; null while the source had no measured duration (the program then clamps). */
  durationMs: z.int().min(0).nullable(),
  startMs: z.int().min(0).optional(),
  endMs: z.int().min(0).optional(),
  extractAudio: z.boolean(),
  fastMode: z.boolean(),
  /** Regions to remove, clipped to [startMs, endMs); overlapping cuts remove their union. */
  cuts: z.array(timeRangeSchema).default([]),
});
/** What the program reads. */
export type MediaEditInput = z.infer<typeof mediaEditInputSchema>;

/** A program's stored output and the artifact program's description of it (run in the same job). */
export const producedMediaResultSchema = z.object({
  output_key: z.string().min(1),
  size_bytes: z.int().min(0),
  content_type: z.string().min(1),
  artifact: artifactResultSchema,
});
export type ProducedMediaResult = z.infer<typeof producedMediaResultSchema>;

export const mediaEditResultSchema = producedMediaResultSchema.extend({
  duration_ms: z.int().min(0),
  /** Whether the pieces were copied (fast_mode on a source already H.264/AAC) or re-encoded. */
  stream_copied: z.boolean(),
});
export type MediaEditResult = z.infer<typeof mediaEditResultSchema>;
