import type { z } from 'zod';
import type { JobLog } from './job-log.ts';
import type { JobSpec } from './job-spec.ts';
import type { JobStorage } from './job-storage.ts';
import type { ProgressReporter } from './progress.ts';

/** What the runtime hands a program: everything it may touch, nothing global. */
export interface JobContext {
  /** A private temp directory, removed when the program ends, whatever the outcome. */
  readonly workDir: string;
  readonly storage: JobStorage;
  readonly progress: ProgressReporter;
  /** Aborted on the spec's timeout or on SIGTERM; pass it to every child process and request. */
  readonly signal: AbortSignal;
  readonly log: JobLog;
  readonly env: NodeJS.ProcessEnv;
  /** `<outputPrefix>/<fileName>`: fixed names, so a retry overwrites. */
  outputKey(fileName: string): string;
}

/**
 * One program of a job image (`artifact`, `render`, …). The runtime parses `input`
 * with `inputSchema` before `run`, and writes the returned result as `result.json`.
 */
export interface JobProgram<Input, Result extends object> {
  readonly name: string;
  readonly inputSchema: z.ZodType<Input>;
  run(spec: JobSpec<Input>, ctx: JobContext): Promise<Result>;
}

export type AnyJobProgram = JobProgram<unknown, object>;
