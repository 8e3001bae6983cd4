import { ApiException, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { cutroomApiVersion, cutroomGroup, cutroomVersion, jobKinds, jobResourceLabels, jobResourceName } from '../../../crds/contract/resources.ts';
import type { JobMetrics } from '../ops/metrics.ts';
import type { CancelledJob, DispatchedJob, JobDispatcher } from './dispatcher.ts';
import type { JobKind } from '../../../crds/contract/resources.ts';

const allKinds = Object.keys(jobKinds) as JobKind[];

/**
 * The `kubernetes` backend: the api only creates the custom resource; the operator
 * turns it into a batch Job and calls the completion handlers.
 */
export class KubernetesJobDispatcher implements JobDispatcher {
  readonly backend = 'kubernetes' as const;
  readonly #api: CustomObjectsApi;
  readonly #namespace: string;
  readonly #metrics: JobMetrics | undefined;

  /** `metrics` counts the resources created; the operator, which counts the batch Jobs it makes, passes none. */
  constructor(kubeConfig: KubeConfig, namespace: string, metrics?: JobMetrics) {
    this.#api = kubeConfig.makeApiClient(CustomObjectsApi);
    this.#namespace = namespace;
    this.#metrics = metrics;
  }

  /** The cluster queues what it cannot run yet. */
  kindsWithCapacity(): readonly JobKind[] {
    return allKinds;
  }

  async dispatch(job: DispatchedJob): Promise<void> {
    const { plural } = jobKinds[job.kind];
    const name = jobResourceName(job.spec);
    const body = {
      apiVersion: cutroomApiVersion,
      kind: job.kind,
      metadata: { name, namespace: this.#namespace, labels: jobResourceLabels(job.spec) },
      spec: job.spec,
    };
    try {
      await this.#api.createNamespacedCustomObject({ group: cutroomGroup, version: cutroomVersion, namespace: this.#namespace, plural, body });
      this.#metrics?.created.inc({ kind: job.kind });
    } catch (error) {
      // Idempotent: the resource of an earlier attempt is the job.
      if (!(error instanceof ApiException && error.code === 409)) throw error;
    }
  }

  /** The API server refuses the resource itself (invalid): retrying cannot help. Outages and throttling are retried. */
  refusal(error: unknown): string | undefined {
    if (!(error instanceof ApiException) || (error.code !== 400 && error.code !== 422)) return undefined;
    try {
      const body = JSON.parse(String(error.body)) as { message?: string };
      return body.message ?? `HTTP ${error.code}`;
    } catch {
      return `HTTP ${error.code}`;
    }
  }

  /** Deleting the resource is the cancel; the operator's finalizer settles the job. */
  async cancel(job: CancelledJob): Promise<void> {
    const { plural } = jobKinds[job.kind];
    try {
      await this.#api.deleteNamespacedCustomObject({ group: cutroomGroup, version: cutroomVersion, namespace: this.#namespace, plural, name: jobResourceName(job) });
    } catch (error) {
      if (!(error instanceof ApiException && error.code === 404)) throw error;
    }
  }

  async close(): Promise<void> {}
}
