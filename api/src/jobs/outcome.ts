import { errorFileSchema, ERROR_FILE_NAME, jobSystemFailures, outputKey, RESULT_FILE_NAME } from '../../../crds/contract/outcome.ts';
import { isNotFound } from '../../../crds/contract/s3-client.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import type { JobFailed, JobOutcome } from './completion.ts';

/**
 * How a finished program's run looked from outside: whether it exited cleanly and, when
 * it did not, why the backend thinks it ended (deadline, memory, cancel) — which wins
 * over anything the program wrote, since the program only saw a SIGTERM.
 */
export interface RunEnd {
  exitedCleanly: boolean;
  /** A cause the backend itself knows; overrides error.json. */
  imposed?: JobFailed;
  /** What to say when the program left neither file (exit code, log tail). */
  crashDetail: string;
}

/**
 * The failures a backend imposes on a run (the program only saw a SIGTERM or never
 * started), worded once so that both backends store the same code, params and text.
 */
export const imposedFailures = {
  cancelled: (): JobFailed => ({ error: 'The job was cancelled.', code: jobSystemFailures.cancelled }),
  timedOut: (seconds: number): JobFailed => ({ error: `The job did not finish within its time limit of ${seconds} s.`, code: jobSystemFailures.timedOut, params: { seconds } }),
  outOfMemory: (): JobFailed => ({ error: 'The job ran out of memory.', code: jobSystemFailures.outOfMemory }),
  spawnFailed: (detail: string): JobFailed => ({ error: `The job program could not be started: ${detail}`, code: jobSystemFailures.spawnFailed, params: { detail } }),
};

/**
 * One outcome reader for both backends: result.json means success, error.json carries the
 * program's own failure code, neither means the program crashed. S3 faults other than a
 * missing object are thrown (the caller retries; a job is never failed for a store blip).
 */
export async function readJobOutcome(storage: ObjectStorage, outputPrefix: string, end: RunEnd): Promise<JobOutcome> {
  if (end.imposed) return { ok: false, ...end.imposed };
  if (end.exitedCleanly) {
    const result = await readObject(storage, outputKey(outputPrefix, RESULT_FILE_NAME));
    if (result === undefined) return failed('The job finished without writing its result.', jobSystemFailures.noResult);
    if (!result || typeof result !== 'object' || Array.isArray(result)) return failed('The job wrote a result that is not a JSON object.', jobSystemFailures.invalidResult);
    return { ok: true, result: result as Record<string, unknown> };
  }
  const written = errorFileSchema.safeParse(await readObject(storage, outputKey(outputPrefix, ERROR_FILE_NAME)));
  if (written.success) {
    const { code, params, message } = written.data;
    return { ok: false, error: message, code: code ?? jobSystemFailures.failed, params: code ? (params ?? undefined) : { detail: message } };
  }
  return failed(`The job program ended without reporting why (${end.crashDetail}).`, jobSystemFailures.crashed, { detail: end.crashDetail });
}

/**
 * Deletes everything a job left under its output prefix (its input, result.json or
 * error.json, its output): for a job whose subject is gone, nothing of it stays in the store.
 */
export async function removeJobFiles(storage: ObjectStorage, outputPrefix: string): Promise<void> {
  for await (const { key } of storage.listObjects(`${outputPrefix}/`)) await storage.delete(key);
}

function failed(error: string, code: string, params?: Record<string, string | number>): JobOutcome {
  return { ok: false, error, code, ...(params ? { params } : {}) };
}

/** The parsed object, undefined when missing; unparseable JSON counts as missing. */
async function readObject(storage: ObjectStorage, key: string): Promise<unknown> {
  try {
    return await storage.readJson<unknown>(key);
  } catch (error) {
    if (isNotFound(error) || error instanceof SyntaxError) return undefined;
    throw error;
  }
}
