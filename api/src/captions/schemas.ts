import { z } from 'zod';
import { pageQuery, pageSchema } from '../http/pagination.ts';
import type { CaptionLineRow } from './entities.ts';
import { DEFAULT_MAX_WORDS, MAX_MAX_WORDS, MIN_MAX_WORDS } from './lines.ts';

export const GenerateQuery = z.object({
  max_words: z.coerce
    .number()
    .int()
    .min(MIN_MAX_WORDS)
    .max(MAX_MAX_WORDS)
    .default(DEFAULT_MAX_WORDS)
    .describe(`Most words on one line, ${MIN_MAX_WORDS}–${MAX_MAX_WORDS} (default ${DEFAULT_MAX_WORDS}). Guidance: 3–5 for 9:16, 7–10 for 16:9.`),
  force: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true')
    .describe('Replace the lines the active run already has (default false: they are kept).'),
});

export const CaptionListQuery = z.object(pageQuery);
export const CaptionLineParams = z.object({ caption_line_uuid: z.uuid() });
export const CaptionLinePatch = z.strictObject({ text: z.string().trim().min(1).max(500) }).meta({ id: 'CaptionLinePatch' });

export const GenerateResult = z
  .object({ project_uuid: z.uuid(), lines_created: z.int(), message: z.string() })
  .meta({ id: 'CaptionGenerateResult' });

export const CaptionLineRead = z
  .object({
    uuid: z.uuid(),
    run_id: z.uuid(),
    sequence: z.int(),
    start_ms: z.int(),
    end_ms: z.int(),
    text: z.string(),
    original_text: z.string(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'CaptionLine' });

export const CaptionLinePage = pageSchema(CaptionLineRead, 'CaptionLinePage');

export function captionLineRead(line: CaptionLineRow): z.infer<typeof CaptionLineRead> {
  return {
    uuid: line.id,
    run_id: line.run.id,
    sequence: line.sequence,
    start_ms: line.startMs,
    end_ms: line.endMs,
    text: line.text,
    original_text: line.originalText,
    created_at: line.createdAt.toISOString(),
    updated_at: line.updatedAt.toISOString(),
  };
}
