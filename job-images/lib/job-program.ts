import type { ParsedInputOf, ProgramName, ResultOf, StepOf } from '../../crds/contract/programs.ts';
import type { JobLog } from './job-log.ts';
import type { JobSpec } from './job-spec.ts';
import type { JobStorage } from './job-storage.ts';
import type { ProgressReporter } from './progress.ts';

/** What the runtime hands a program: everything it may touch, nothing global. */
export interface JobContext<Step extends string = string> {
  /** A private temp directory, removed when the program ends, whatever the outcome. */
  readonly workDir: string;
  readonly storage: JobStorage;
  /** Progress in the program's own steps (its entry in crds/contract/programs.ts). */
  readonly progress: ProgressReporter<Step>;
  /** Aborted on the spec's timeout or on SIGTERM; pass it to every child process and request. */
  readonly signal: AbortSignal;
  readonly log: JobLog;
  readonly env: NodeJS.ProcessEnv;
  /** `<outputPrefix>/<fileName>`: fixed names, so a retry overwrites. */
  outputKey(fileName: string): string;
}

/**
 * One program of a job image (`artifact`, `render`, …). Its input, result and steps are
 * its registry entry's: the runtime parses the input by it before `run`, and writes the
 * returned result as `result.json`.
 */
export interface JobProgram<P extends ProgramName = ProgramName> {
  readonly name: P;
  run(spec: JobSpec<ParsedInputOf<P>>, ctx: JobContext<StepOf<P>>): Promise<ResultOf<P>>;
}

/** Any program of any image, as a runtime hosts them side by side. */
export type AnyJobProgram = { [P in ProgramName]: JobProgram<P> }[ProgramName];
