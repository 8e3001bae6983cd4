import type { JobKind, JobSpec } from '../../../crds/contract/resources.ts';

/** What a dispatcher receives: the CR spec plus the kind that carries it. */
export interface DispatchedJob {
  kind: JobKind;
  spec: JobSpec;
}

/** What names a job to cancel: enough to find its resource without remembering it. */
export interface CancelledJob {
  jobId: string;
  kind: JobKind;
  program: string;
}

/**
 * Hands jobs to whoever runs them; both backends end in the same completion handlers.
 * `dispatch` must be idempotent per job id (a redispatch after a crash finds the first).
 */
export interface JobDispatcher {
  readonly backend: 'local' | 'kubernetes';
  /** Kinds that can take a job now (the local runner's free slots); every kind when unbounded. */
  kindsWithCapacity(): readonly JobKind[];
  /**
   * Kinds whose free slots take only short jobs now (long ones already hold every slot but
   * one), with the longest timeout a short job has; undefined when no slot is kept so.
   */
  shortJobsOnly?(): { kinds: readonly JobKind[]; maxTimeoutSeconds: number } | undefined;
  dispatch(job: DispatchedJob): Promise<void>;
  /** Why `dispatch`'s error is a refusal for good (the job then ends failed), or undefined for a passing fault (retried). */
  refusal(error: unknown): string | undefined;
  cancel(job: CancelledJob): Promise<void>;
  close(): Promise<void>;
}
