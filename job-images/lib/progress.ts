import type { KubeConfig } from '@kubernetes/client-node';
import { formatJobEvent } from '../../crds/contract/job-events.ts';
import type { JobLog } from './job-log.ts';

/**
 * The one way a job program tells the world how far it got. `progress` is the whole
 * job's percentage (integer 0..100, never decreasing), `step` names what it is doing.
 * Reporting never throws and never fails the job.
 */
export interface ProgressReporter {
  report(step: string, progress: number): void;
  /** Sends whatever is still pending; call before the final result or error. */
  flush(): Promise<void>;
}

/** Maps a step's own 0..1 fraction onto its slice [from, to] of the job's percentage. */
export function progressSlice(reporter: ProgressReporter, step: string, from: number, to: number): (fraction: number) => void {
  return (fraction) => reporter.report(step, from + (to - from) * Math.min(1, Math.max(0, fraction)));
}

/** Rounds, clamps and drops repeats and regressions, so every backend sees the same sequence. */
function progressFilter(): (step: string, progress: number) => { step: string; progress: number } | null {
  let last: { step: string; progress: number } | null = null;
  return (step, progress) => {
    const percent = Math.max(last?.progress ?? 0, Math.min(100, Math.max(0, Math.round(progress))));
    if (last && last.step === step && last.progress === percent) return null;
    last = { step, progress: percent };
    return last;
  };
}

/** `CUTROOM_PROGRESS=stdout`: `{"event":"progress","step":"…","progress":N}` lines for the local runner. */
export function stdoutProgressReporter(write: (line: string) => void = (line) => process.stdout.write(line)): ProgressReporter {
  const accept = progressFilter();
  return {
    report(step, progress) {
      const next = accept(step, progress);
      if (next) write(formatJobEvent({ event: 'progress', ...next }));
    },
    flush: async () => {},
  };
}

export interface CustomResourceRef {
  group: string;
  version: string;
  plural: string;
  name: string;
  namespace: string;
}

/** Sends one merge patch of the custom resource's status subresource. */
export type StatusPatcher = (patch: { status: { step: string; progress: number } }) => Promise<void>;

/**
 * `CUTROOM_PROGRESS=kubernetes`: merge-patches `status.progress`/`status.step` of the
 * job's custom resource, at most once per `intervalMs` (latest value wins), because
 * every patch is a write to etcd and a watch event for the operator.
 */
export function kubernetesProgressReporter(patchStatus: StatusPatcher, log: JobLog, intervalMs = 1000): ProgressReporter {
  const accept = progressFilter();
  let pending: { step: string; progress: number } | null = null;
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let lastSentAt = Number.NEGATIVE_INFINITY;

  const send = (): Promise<void> => {
    timer = null;
    const next = pending;
    pending = null;
    if (!next) return Promise.resolve();
    lastSentAt = Date.now();
    inFlight = patchStatus({ status: next })
      .catch((error: unknown) => {
        log.warn('progress patch failed', { error: error instanceof Error ? error.message : String(error), ...next });
      })
      .finally(() => {
        inFlight = null;
        if (pending) schedule();
      });
    return inFlight;
  };

  const schedule = (): void => {
    if (timer || inFlight) return;
    // Not awaited: send() catches (and logs) a failed patch itself; flush() awaits the one in flight.
    timer = setTimeout(() => void send(), Math.max(0, lastSentAt + intervalMs - Date.now()));
    // A pending patch must not keep a finished program alive; flush() sends it.
    timer.unref();
  };

  return {
    report(step, progress) {
      const next = accept(step, progress);
      if (!next) return;
      pending = next;
      schedule();
    },
    async flush() {
      if (timer) clearTimeout(timer);
      timer = null;
      if (inFlight) await inFlight;
      if (timer) clearTimeout(timer);
      timer = null;
      await send();
    },
  };
}

const STATUS_PATCH_TIMEOUT_MS = 5000;

/** The status-subresource patcher of the real Kubernetes client. */
export async function customResourceStatusPatcher(kubeConfig: KubeConfig, resource: CustomResourceRef): Promise<StatusPatcher> {
  // Loaded only under Kubernetes: the client is large and the local runner never needs it.
  const { CustomObjectsApi, PatchStrategy, setHeaderOptions } = await import('@kubernetes/client-node');
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const options = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  return async (patch) => {
    let timer: NodeJS.Timeout | undefined;
    // A slow API server must not hold the job's end (flush waits for the last patch).
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`status patch timed out after ${STATUS_PATCH_TIMEOUT_MS} ms`)), STATUS_PATCH_TIMEOUT_MS);
    });
    try {
      await Promise.race([api.patchNamespacedCustomObjectStatus({ ...resource, body: patch }, options), timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * Picks the reporter named by `CUTROOM_PROGRESS`. A Kubernetes reporter that cannot
 * be set up falls back to stdout with a warning: progress is never worth a failed job.
 */
export async function progressReporterFromEnv(
  env: NodeJS.ProcessEnv,
  log: JobLog,
  writeLine: (line: string) => void = (line) => process.stdout.write(line),
): Promise<ProgressReporter> {
  const mode = env.CUTROOM_PROGRESS || 'stdout';
  if (mode === 'stdout') return stdoutProgressReporter(writeLine);
  if (mode !== 'kubernetes') {
    log.warn('unknown CUTROOM_PROGRESS, reporting on stdout', { CUTROOM_PROGRESS: mode });
    return stdoutProgressReporter(writeLine);
  }
  const resource = {
    group: env.CUTROOM_CR_GROUP || 'cutroom.dev',
    version: env.CUTROOM_CR_VERSION || 'v1alpha1',
    plural: env.CUTROOM_CR_PLURAL ?? '',
    name: env.CUTROOM_CR_NAME ?? '',
    namespace: env.CUTROOM_CR_NAMESPACE ?? '',
  };
  const missing = (['plural', 'name', 'namespace'] as const).filter((field) => !resource[field]);
  if (missing.length > 0) {
    log.warn('custom resource not named, reporting progress on stdout', { missing });
    return stdoutProgressReporter(writeLine);
  }
  try {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromCluster();
    return kubernetesProgressReporter(await customResourceStatusPatcher(kubeConfig, resource), log);
  } catch (error) {
    log.warn('no in-cluster Kubernetes config, reporting progress on stdout', {
      error: error instanceof Error ? error.message : String(error),
    });
    return stdoutProgressReporter(writeLine);
  }
}
