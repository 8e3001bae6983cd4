// Plays the job controller and the kubelet for tests: no container runs, so a test
// decides when a Job's pod starts, succeeds or fails, and with what termination message.
import type { ObjectStore } from './object-store.ts';
import type { KubeObject, ResourceType } from './resource-types.ts';

export type JobSuccess = {
  // Termination message of the pod's container (what a program writes to /dev/termination-log).
  message?: string;
  logs?: string;
};

export type JobFailure = {
  message?: string;
  logs?: string;
  exitCode?: number;
  // Why the job controller gave up: retries used up, or activeDeadlineSeconds passed.
  reason?: 'BackoffLimitExceeded' | 'DeadlineExceeded';
};

const failureMessages = {
  BackoffLimitExceeded: 'Job has reached the specified backoff limit',
  DeadlineExceeded: 'Job was active longer than specified deadline',
} as const;

const nowTimestamp = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

type Container = { name?: string; image?: string };
type JobShape = {
  spec?: { template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: { containers?: Container[] } } };
  status?: Record<string, unknown>;
};

const condition = (type: string, reason: string, message: string, at: string) => ({
  type,
  status: 'True',
  lastProbeTime: at,
  lastTransitionTime: at,
  reason,
  message,
});

export class JobController {
  readonly #store: ObjectStore;
  readonly #podLogs: Map<string, string>;
  readonly #jobs: ResourceType;
  readonly #pods: ResourceType;

  constructor(store: ObjectStore, podLogs: Map<string, string>) {
    this.#store = store;
    this.#podLogs = podLogs;
    this.#jobs = store.types.byPlural('jobs');
    this.#pods = store.types.byPlural('pods');
  }

  jobPods(namespace: string, jobName: string): KubeObject[] {
    return this.#store.list(this.#pods, namespace, { labelSelector: `batch.kubernetes.io/job-name=${jobName}` }).items;
  }

  #pod(job: KubeObject): KubeObject {
    const { name, namespace, uid } = job.metadata as { name: string; namespace: string; uid: string };
    const existing = this.jobPods(namespace, name).find((p) => p.metadata.ownerReferences?.some((r) => r.uid === uid));
    if (existing) return existing;
    const template = (job as JobShape).spec?.template ?? {};
    return this.#store.create(this.#pods, namespace, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${name}-`,
        labels: { ...template.metadata?.labels, 'batch.kubernetes.io/job-name': name, 'job-name': name },
        ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: { ...template.spec, nodeName: 'kube-sim' },
    }).object;
  }

  #writeStatus(type: ResourceType, object: KubeObject, status: unknown): KubeObject {
    const { namespace = '', name = '' } = object.metadata;
    return this.#store.replace(type, namespace, name, { ...object, status }, 'status').object;
  }

  #containerStatuses(pod: KubeObject, state: Record<string, unknown>, running: boolean) {
    const containers = ((pod.spec as { containers?: Container[] } | undefined)?.containers ?? []);
    return containers.map((c) => ({
      name: c.name,
      image: c.image,
      imageID: '',
      ready: running,
      started: running,
      restartCount: 0,
      state,
    }));
  }

  // Pod running, Job active: the program has started.
  startJob(namespace: string, name: string): KubeObject {
    const job = this.#store.get(this.#jobs, namespace, name);
    const pod = this.#pod(job);
    const at = nowTimestamp();
    const running = this.#writeStatus(this.#pods, pod, {
      phase: 'Running',
      startTime: at,
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at }],
      containerStatuses: this.#containerStatuses(pod, { running: { startedAt: at } }, true),
    });
    const status = (job as JobShape).status ?? {};
    this.#writeStatus(this.#jobs, job, { ...status, startTime: status['startTime'] ?? at, active: 1, ready: 1 });
    return running;
  }

  // Pod Succeeded with exit code 0; Job gets SuccessCriteriaMet and Complete.
  completeJob(namespace: string, name: string, outcome: JobSuccess = {}): void {
    this.#finish(namespace, name, true, {
      exitCode: 0,
      reason: 'Completed',
      ...(outcome.message !== undefined ? { message: outcome.message } : {}),
    }, outcome.logs);
  }

  // Pod Failed with the given termination message; Job gets FailureTarget and Failed.
  failJob(namespace: string, name: string, failure: JobFailure = {}): void {
    this.#finish(namespace, name, false, {
      exitCode: failure.exitCode ?? 1,
      reason: 'Error',
      ...(failure.message !== undefined ? { message: failure.message } : {}),
    }, failure.logs, failure.reason ?? 'BackoffLimitExceeded');
  }

  #finish(
    namespace: string,
    name: string,
    succeeded: boolean,
    terminated: { exitCode: number; reason: string; message?: string },
    logs: string | undefined,
    failureReason: keyof typeof failureMessages = 'BackoffLimitExceeded',
  ): void {
    const job = this.#store.get(this.#jobs, namespace, name);
    const pod = this.#pod(job);
    const at = nowTimestamp();
    const podStatus = (pod.status ?? {}) as Record<string, unknown>;
    const startedAt = (podStatus['startTime'] as string | undefined) ?? at;
    if (logs !== undefined) this.#podLogs.set(`${namespace}/${pod.metadata.name}`, logs);
    this.#writeStatus(this.#pods, pod, {
      ...podStatus,
      phase: succeeded ? 'Succeeded' : 'Failed',
      startTime: startedAt,
      conditions: [{ type: 'Ready', status: 'False', reason: 'PodCompleted', lastTransitionTime: at }],
      containerStatuses: this.#containerStatuses(pod, { terminated: { ...terminated, startedAt, finishedAt: at } }, false),
    });
    const status = (job as JobShape).status ?? {};
    const conditions = succeeded
      ? [
          condition('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods', at),
          condition('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods', at),
        ]
      : [
          condition('FailureTarget', failureReason, failureMessages[failureReason], at),
          condition('Failed', failureReason, failureMessages[failureReason], at),
        ];
    this.#writeStatus(this.#jobs, job, {
      startTime: status['startTime'] ?? startedAt,
      ...(succeeded ? { completionTime: at, succeeded: 1 } : { failed: 1 }),
      ready: 0,
      terminating: 0,
      uncountedTerminatedPods: {},
      conditions,
    });
  }
}
