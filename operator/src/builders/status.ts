import { isDeepStrictEqual } from 'node:util';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { JobCondition, JobPhase, JobStatus } from '../../../crds/contract/resources.ts';

/** Kubernetes timestamps: RFC 3339 in UTC to the second. Informer caches hold Dates or strings. */
export function kubeTime(value: Date | string | undefined | null): string | undefined {
  if (value === undefined || value === null) return undefined;
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return undefined;
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Where a batch Job stands, read from its status. */
export interface JobObservation {
  phase: JobPhase;
  startedAt?: string | undefined;
  finishedAt?: string | undefined;
  /** The Job's Failed condition, when it failed. */
  failure?: { reason: string; message: string } | undefined;
}

function trueCondition(job: V1Job, type: string) {
  return job.status?.conditions?.find((condition) => condition.type === type && condition.status === 'True');
}

/**
 * Complete and Failed are the terminal conditions (SuccessCriteriaMet and FailureTarget
 * come earlier, while pods may still be terminating); a Job with pods in flight, or one
 * retrying after a failed pod, is running.
 */
export function observeJob(job: V1Job): JobObservation {
  const status = job.status ?? {};
  const startedAt = kubeTime(status.startTime);
  const complete = trueCondition(job, 'Complete');
  if (complete) {
    return { phase: 'Succeeded', startedAt, finishedAt: kubeTime(status.completionTime) ?? kubeTime(complete.lastTransitionTime) };
  }
  const failed = trueCondition(job, 'Failed');
  if (failed) {
    return {
      phase: 'Failed',
      startedAt,
      finishedAt: kubeTime(failed.lastTransitionTime),
      failure: { reason: failed.reason ?? 'Failed', message: failed.message ?? '' },
    };
  }
  if ((status.active ?? 0) > 0 || (status.failed ?? 0) > 0) return { phase: 'Running', startedAt };
  return { phase: 'Pending', startedAt };
}

/** A terminated container's message, newest pod first (what /dev/termination-log held, or the log tail). */
function terminationMessages(pods: readonly V1Pod[]): string[] {
  const terminated = pods.flatMap((pod) =>
    (pod.status?.containerStatuses ?? []).flatMap((container) => {
      const state = container.state?.terminated;
      const message = state?.message?.trim();
      return state && message ? [{ message, at: kubeTime(state.finishedAt) ?? '' }] : [];
    }),
  );
  return terminated.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).map((entry) => entry.message);
}

/** Whether the newest terminated container of the Job was killed for memory. */
export function outOfMemory(pods: readonly V1Pod[]): boolean {
  return pods.some((pod) => (pod.status?.containerStatuses ?? []).some((container) => container.state?.terminated?.reason === 'OOMKilled' || container.lastState?.terminated?.reason === 'OOMKilled'));
}

/**
 * Why a failed Job failed, in words for the user: the deadline when it ran out of time
 * (its killed pod only says it was stopped), else what the program wrote, else the
 * Job's own condition.
 */
export function failureMessage(job: V1Job, failure: JobObservation['failure'], pods: readonly V1Pod[]): string {
  if (failure?.reason === 'DeadlineExceeded') {
    return `The job did not finish within its time limit of ${job.spec?.activeDeadlineSeconds ?? '?'} s.`;
  }
  const [programMessage] = terminationMessages(pods);
  if (programMessage) return programMessage;
  return failure?.message ? `The job failed: ${failure.message}` : 'The job failed without saying why.';
}

/** metav1.Condition semantics: lastTransitionTime moves only when status does. */
export function setCondition(conditions: readonly JobCondition[], next: Omit<JobCondition, 'lastTransitionTime'>, now: string): JobCondition[] {
  const existing = conditions.find((condition) => condition.type === next.type);
  const lastTransitionTime = existing && existing.status === next.status ? existing.lastTransitionTime : now;
  const updated: JobCondition = { ...next, lastTransitionTime };
  return existing ? conditions.map((condition) => (condition === existing ? updated : condition)) : [...conditions, updated];
}

/** The CRD's limit on condition messages and status.error. */
const MESSAGE_MAX = 32768;

/** Condition reasons are CamelCase identifiers; anything else becomes the generic one. */
function conditionReason(reason: string | undefined): string {
  return reason && /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/.test(reason) ? reason : 'JobFailed';
}

/** What the operator knows about a resource's run; it owns these status fields only. */
export interface MirroredState {
  phase: JobPhase;
  /** Unset when no Job was made (the resource was refused). */
  jobName?: string | undefined;
  startedAt?: string | undefined;
  finishedAt?: string | undefined;
  /** For Failed: what the user is told, and the reason behind it (CamelCase). */
  error?: string | undefined;
  reason?: string | undefined;
  generation: number;
}

/**
 * The operator's part of a resource's status. progress and step belong to the program
 * (it patches them itself), except progress 100 once the job succeeded.
 */
export function mirroredStatus(current: JobStatus | undefined, state: MirroredState, now: string): JobStatus {
  const observedGeneration = state.generation;
  let conditions = current?.conditions ?? [];
  const set = (type: string, status: JobCondition['status'], reason: string, message: string) => {
    conditions = setCondition(conditions, { type, status, reason, message, observedGeneration }, now);
  };
  if (state.jobName) set('JobCreated', 'True', 'JobCreated', `Job ${state.jobName} runs the program.`);
  if (state.phase === 'Running') set('Running', 'True', 'JobActive', 'The program is running.');
  else if (state.phase === 'Succeeded' || state.phase === 'Failed') {
    if (state.jobName) set('Running', 'False', 'JobFinished', 'The program has finished.');
  }
  if (state.phase === 'Succeeded') set('Complete', 'True', 'JobSucceeded', 'The program succeeded and its result was recorded.');
  const error = (state.error ?? 'The job failed.').slice(0, MESSAGE_MAX);
  if (state.phase === 'Failed') set('Failed', 'True', conditionReason(state.reason), error);

  return {
    phase: state.phase,
    ...(state.jobName ? { jobName: state.jobName } : {}),
    ...(state.startedAt ? { startedAt: state.startedAt } : {}),
    ...(state.finishedAt ? { finishedAt: state.finishedAt } : {}),
    ...(state.phase === 'Failed' ? { error } : {}),
    ...(state.phase === 'Succeeded' ? { progress: 100 } : {}),
    conditions,
    observedGeneration,
  };
}

/** The fields of `desired` that differ from `current`, or null when the status is already right. */
export function statusPatch(current: JobStatus | undefined, desired: JobStatus): Partial<JobStatus> | null {
  const patch: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(desired)) {
    if (!isDeepStrictEqual((current as Record<string, unknown> | undefined)?.[field], value)) patch[field] = value;
  }
  return Object.keys(patch).length > 0 ? (patch as Partial<JobStatus>) : null;
}

export function isTerminal(phase: JobPhase | undefined): phase is 'Succeeded' | 'Failed' {
  return phase === 'Succeeded' || phase === 'Failed';
}
