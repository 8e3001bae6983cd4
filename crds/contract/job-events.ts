import { z } from 'zod';

/**
 * The stdout protocol of every job program, one JSON object per line. The local
 * runner reads it; under Kubernetes the final line is also the pod's log tail.
 * Anything on stdout that does not parse as an event is not part of the protocol.
 */
export const jobEventSchema = z.discriminatedUnion('event', [
  z.object({ event: z.literal('progress'), step: z.string(), progress: z.number().int().min(0).max(100) }),
  z.object({ event: z.literal('result'), result: z.record(z.string(), z.unknown()) }),
  z.object({
    event: z.literal('error'),
    message: z.string(),
    code: z.string().optional(),
    params: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  }),
]);

export type JobEvent = z.infer<typeof jobEventSchema>;

export function formatJobEvent(event: JobEvent): string {
  return `${JSON.stringify(event)}\n`;
}

/** Reads one stdout line of a job program; null for lines that are not job events. */
export function parseJobEvent(line: string): JobEvent | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  const parsed = jobEventSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}
