import type { V1Job } from '@kubernetes/client-node';
import { cutroomApiVersion, jobKinds } from '../../crds/contract/resources.ts';
import type { JobKind } from '../../crds/contract/resources.ts';
import { managedBySelector } from './builders/job.ts';
import { WatchedResources } from './informer.ts';
import { jobKindProfiles } from './job-kinds.ts';
import { JobReconciler } from './reconcilers/job-reconciler.ts';
import type { ReconcilerDeps } from './reconcilers/job-reconciler.ts';

function isJobKind(kind: string): kind is JobKind {
  return Object.hasOwn(jobKinds, kind);
}

/** The custom resource that controls a Job, from its controller ownerReference. */
function controllingResource(job: V1Job): { kind: JobKind; name: string } | undefined {
  const owner = job.metadata?.ownerReferences?.find((ref) => ref.controller && ref.apiVersion === cutroomApiVersion);
  return owner && isJobKind(owner.kind) ? { kind: owner.kind, name: owner.name } : undefined;
}

/**
 * What the leader runs: the reconcilers, and one informer on the Jobs this operator
 * made whose every change is handed to the reconciler of the Job's owner.
 */
export class JobControllers {
  readonly reconcilers: ReadonlyMap<JobKind, JobReconciler>;
  readonly #jobs: WatchedResources<V1Job>;

  constructor(deps: Omit<ReconcilerDeps, 'jobs'>) {
    const { cluster, config, metrics, logger } = deps;
    this.#jobs = new WatchedResources<V1Job>({
      resource: 'jobs',
      kubeConfig: deps.kubeConfig,
      path: `/apis/batch/v1/namespaces/${cluster.namespace}/jobs`,
      labelSelector: managedBySelector,
      list: () => cluster.listJobs(managedBySelector),
      onChange: (_type, job) => {
        const owner = controllingResource(job);
        if (owner) this.reconcilers.get(owner.kind)?.enqueue(job.metadata?.namespace ?? cluster.namespace, owner.name);
      },
      onRestart: () => metrics.watchRestarts.inc({ resource: 'jobs' }),
      retryBaseMs: config.OPERATOR_RETRY_BASE_MS,
      retryMaxMs: config.OPERATOR_RETRY_MAX_MS,
      logger,
    });
    const jobs = this.#jobs;
    this.reconcilers = new Map(
      Object.values(jobKindProfiles).map((profile) => [profile.kind, new JobReconciler(profile, { ...deps, jobs })] as const),
    );
  }

  /** Jobs first, so that the resources' first reconciles find their Jobs in the cache. */
  async start(): Promise<void> {
    await this.#jobs.start();
    await Promise.all([...this.reconcilers.values()].map((reconciler) => reconciler.start()));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.reconcilers.values()].map((reconciler) => reconciler.stop()));
    await this.#jobs.stop();
  }
}
