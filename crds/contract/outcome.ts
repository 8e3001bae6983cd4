// How a job ends, as both backends read it: the program writes `result.json` on success
// or `error.json` on failure under its output prefix; stdout carries progress only.
import { z } from 'zod';

export const RESULT_FILE_NAME = 'result.json';
export const ERROR_FILE_NAME = 'error.json';
/** A program's input when it travels by reference (see JOB_INPUT_INLINE_MAX_BYTES). */
export const INPUT_FILE_NAME = 'input.json';

/** Inputs larger than this travel as `<outputPrefix>/input.json` instead of inside the spec (an env var is capped at 128 KiB). */
export const JOB_INPUT_INLINE_MAX_BYTES = 16 * 1024;

/** Output keys live under the spec's prefix with fixed names, so a retry overwrites rather than duplicates. */
export function outputKey(outputPrefix: string, fileName: string): string {
  return `${outputPrefix.replace(/^\/+|\/+$/g, '')}/${fileName}`;
}

const failureParamsSchema = z.record(z.string(), z.union([z.string(), z.number()]));
export type FailureParams = z.infer<typeof failureParamsSchema>;

/** What a failed program leaves in error.json. */
export const errorFileSchema = z.object({
  code: z.string().min(1).nullable(),
  params: failureParamsSchema.nullable(),
  message: z.string(),
});
export type ErrorFile = z.infer<typeof errorFileSchema>;

/**
 * Failure codes of the job system itself (a program's own codes, `media.corrupt` and the
 * like, come from the program). Each has a catalog entry `failure.<code>` in the api.
 */
export const jobSystemFailures = {
  cancelled: 'job.cancelled',
  timedOut: 'job.timed_out',
  /** Exited without result.json or error.json (killed, crashed before writing). */
  crashed: 'job.crashed',
  /** The local runner could not start the program. */
  spawnFailed: 'job.spawn_failed',
  /** The Job succeeded but left no result.json. */
  noResult: 'job.no_result',
  /** result.json does not match the program's result schema. */
  invalidResult: 'job.invalid_result',
  /** The Job disappeared before its outcome was read. */
  lost: 'job.lost',
  /** The resource's spec could not become a Job. */
  invalidSpec: 'job.invalid_spec',
  /** The cluster refused the Job. */
  rejected: 'job.rejected',
  outOfMemory: 'job.out_of_memory',
  /** A failure without any other code. */
  failed: 'job.failed',
} as const;
