import type { KubeConfig } from '@kubernetes/client-node';
import { formatProgressLine } from '../../crds/contract/progress-lines.ts';
import { percentOf, type ProgramName } from '../../crds/contract/programs.ts';
import type { JobLog } from './job-log.ts';

/**
 * How a program tells the world how far it got, in its own terms: the fraction of one of
 * its steps (crds/contract/programs.ts) and, when it knows, the seconds left. Reporting
 * never throws and never fails the job.
 */
export interface ProgressReporter<Step extends string = string> {
  // a property, not a method: checked strictly, so a reporter of one program's steps takes no other step
  report: (step: Step, fraction: number, etaSeconds?: number | null) => void;
  /** Sends whatever is still pending; call before the final result or error. */
  flush(): Promise<void>;
}

/** One report as it leaves the program: the job's percentage, its step, the time left. */
interface ProgressReport {
  step: string;
  progress: number;
  etaSeconds?: number;
}

/** Where reports go: stdout lines for the local runner, the resource's status under Kubernetes. */
export interface ProgressSink {
  send(report: ProgressReport): void;
  flush(): Promise<void>;
}

/**
 * The reporter of `program`: a step's fraction becomes the job's percentage by the registry's
 * slices (a step the program does not have counts as 0). It takes any step name; a program
 * sees it as a reporter of its own steps (JobContext<StepOf<P>>), which the compiler checks.
 */
export function programProgress(program: ProgramName, sink: ProgressSink): ProgressReporter {
  return {
    report(step, fraction, etaSeconds) {
      const eta = etaSeconds === undefined || etaSeconds === null || !Number.isFinite(etaSeconds) ? {} : { etaSeconds: Math.max(0, Math.round(etaSeconds)) };
      sink.send({ step, progress: percentOf(program, step, fraction), ...eta });
    },
    flush: () => sink.flush(),
  };
}

/** A step's own progress callback (downloads, encodes report a fraction of their work). */
export function stepFraction<Step extends string>(reporter: ProgressReporter<Step>, step: Step): (fraction: number) => void {
  return (fraction) => reporter.report(step, fraction);
}

/** Rounds, clamps and drops repeats and regressions, so every backend sees the same sequence. */
function progressFilter(): (report: ProgressReport) => ProgressReport | null {
  let last: ProgressReport | null = null;
  return (report) => {
    const percent = Math.max(last?.progress ?? 0, Math.min(100, Math.max(0, Math.round(report.progress))));
    if (last && last.step === report.step && last.progress === percent) return null;
    last = { ...report, progress: percent };
    return last;
  };
}

/** `CUTROOM_PROGRESS=stdout`: `{"event":"progress","step":"…","progress":N,"eta_seconds":N}` lines for the local runner. */
export function stdoutProgressSink(write: (line: string) => void = (line) => process.stdout.write(line)): ProgressSink {
  const accept = progressFilter();
  return {
    send(report) {
      const next = accept(report);
      if (next) write(formatProgressLine({ event: 'progress', step: next.step, progress: next.progress, ...(next.etaSeconds !== undefined ? { eta_seconds: next.etaSeconds } : {}) }));
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
export type StatusPatcher = (patch: { status: { step: string; progress: number; etaSeconds: number | null } }) => Promise<void>;

/**
 * `CUTROOM_PROGRESS=kubernetes`: merge-patches `status.progress`/`step`/`etaSeconds` of the
 * job's custom resource, at most once per `intervalMs` (latest value wins), because
 * every patch is a write to etcd and a watch event for the operator.
 */
export function kubernetesProgressSink(patchStatus: StatusPatcher, log: JobLog, intervalMs = 1000): ProgressSink {
  const accept = progressFilter();
  let pending: ProgressReport | null = null;
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let lastSentAt = Number.NEGATIVE_INFINITY;

  const send = (): Promise<void> => {
    timer = null;
    const next = pending;
    pending = null;
    if (!next) return Promise.resolve();
    lastSentAt = Date.now();
    // null removes an estimate an earlier patch left
    inFlight = patchStatus({ status: { step: next.step, progress: next.progress, etaSeconds: next.etaSeconds ?? null } })
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
    send(report) {
      const next = accept(report);
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
 * Picks the sink named by `CUTROOM_PROGRESS`. A Kubernetes sink that cannot
 * be set up falls back to stdout with a warning: progress is never worth a failed job.
 */
export async function progressSinkFromEnv(
  env: NodeJS.ProcessEnv,
  log: JobLog,
  writeLine: (line: string) => void = (line) => process.stdout.write(line),
): Promise<ProgressSink> {
  const mode = env.CUTROOM_PROGRESS || 'stdout';
  if (mode === 'stdout') return stdoutProgressSink(writeLine);
  if (mode !== 'kubernetes') {
    log.warn('unknown CUTROOM_PROGRESS, reporting on stdout', { CUTROOM_PROGRESS: mode });
    return stdoutProgressSink(writeLine);
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
    return stdoutProgressSink(writeLine);
  }
  try {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromCluster();
    return kubernetesProgressSink(await customResourceStatusPatcher(kubeConfig, resource), log);
  } catch (error) {
    log.warn('no in-cluster Kubernetes config, reporting progress on stdout', {
      error: error instanceof Error ? error.message : String(error),
    });
    return stdoutProgressSink(writeLine);
  }
}
