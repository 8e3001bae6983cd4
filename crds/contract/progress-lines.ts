import { z } from 'zod';

/**
 * What a job program prints on stdout under the local runner: one progress report per
 * JSON line. The outcome is not here: it is result.json or error.json, for both backends.
 * Lines that do not parse as a report are the program's own output.
 */
const progressLineSchema = z.object({
  event: z.literal('progress'),
  step: z.string(),
  progress: z.int().min(0).max(100),
  /** The program's own estimate of the time left, when it has one. */
  eta_seconds: z.int().min(0).optional(),
});

export type ProgressLine = z.infer<typeof progressLineSchema>;

export function formatProgressLine(line: ProgressLine): string {
  return `${JSON.stringify(line)}\n`;
}

/** Reads one stdout line of a job program; null for lines that are not progress reports. */
export function parseProgressLine(line: string): ProgressLine | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  const parsed = progressLineSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}
