import { ApiException, BatchV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesListObject, V1Job, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { cutroomApiVersion, cutroomGroup, cutroomVersion, jobKinds } from '../../crds/contract/resources.ts';
import type { JobKind, JobResource, JobStatus } from '../../crds/contract/resources.ts';

export function isApiStatus(error: unknown, code: number): boolean {
  return error instanceof ApiException && error.code === code;
}

/** The message of the Status an API error carries (its body is a JSON string). */
export function apiStatusMessage(error: unknown): string {
  if (!(error instanceof ApiException)) return error instanceof Error ? error.message : String(error);
  try {
    const status = JSON.parse(String(error.body)) as { message?: unknown };
    if (typeof status.message === 'string' && status.message) return status.message;
  } catch {
    // Not a Status: fall through to the HTTP code.
  }
  return `HTTP ${error.code}`;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/**
 * The few Kubernetes calls the operator makes, in one namespace, with the client's
 * one-object parameters and its ApiException mapped to what callers decide on.
 */
export class Cluster {
  readonly namespace: string;
  readonly #custom: CustomObjectsApi;
  readonly #batch: BatchV1Api;
  readonly #core: CoreV1Api;
  readonly #reportingInstance: string;
  readonly #logger: Logger;

  constructor(kubeConfig: KubeConfig, namespace: string, reportingInstance: string, logger: Logger) {
    this.namespace = namespace;
    this.#custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.#batch = kubeConfig.makeApiClient(BatchV1Api);
    this.#core = kubeConfig.makeApiClient(CoreV1Api);
    this.#reportingInstance = reportingInstance;
    this.#logger = logger;
  }

  #resourcePath(kind: JobKind) {
    return { group: cutroomGroup, version: cutroomVersion, namespace: this.namespace, plural: jobKinds[kind].plural };
  }

  listResources(kind: JobKind): Promise<KubernetesListObject<JobResource>> {
    return this.#custom.listNamespacedCustomObject(this.#resourcePath(kind)) as Promise<KubernetesListObject<JobResource>>;
  }

  /** The resource as the API server has it now (the informer's copy may lag our own writes). */
  async readResource(kind: JobKind, name: string): Promise<JobResource | undefined> {
    try {
      return (await this.#custom.getNamespacedCustomObject({ ...this.#resourcePath(kind), name })) as JobResource;
    } catch (error) {
      if (isApiStatus(error, 404)) return undefined;
      throw error;
    }
  }

  /** Merge-patches the status subresource: only the fields given change. */
  async patchResourceStatus(kind: JobKind, name: string, status: Partial<JobStatus>): Promise<void> {
    await this.#custom.patchNamespacedCustomObjectStatus({ ...this.#resourcePath(kind), name, body: { status } }, mergePatch);
  }

  /**
   * Replaces the resource's finalizers if it is unchanged since it was read. False when it
   * changed meanwhile (409): its newer version is on its way through the watch.
   */
  async setFinalizers(resource: JobResource, finalizers: string[]): Promise<boolean> {
    try {
      await this.#custom.patchNamespacedCustomObject(
        {
          ...this.#resourcePath(resource.kind),
          name: resource.metadata.name!,
          body: { metadata: { finalizers, resourceVersion: resource.metadata.resourceVersion } },
        },
        mergePatch,
      );
      return true;
    } catch (error) {
      if (isApiStatus(error, 409) || isApiStatus(error, 404)) return false;
      throw error;
    }
  }

  listJobs(labelSelector: string): Promise<KubernetesListObject<V1Job>> {
    return this.#batch.listNamespacedJob({ namespace: this.namespace, labelSelector });
  }

  async readJob(name: string): Promise<V1Job | undefined> {
    try {
      return await this.#batch.readNamespacedJob({ namespace: this.namespace, name });
    } catch (error) {
      if (isApiStatus(error, 404)) return undefined;
      throw error;
    }
  }

  /** Creates the Job; AlreadyExists is success too (names are deterministic), answered with the stored Job. */
  async createJob(body: V1Job): Promise<{ created: boolean; job: V1Job }> {
    try {
      return { created: true, job: await this.#batch.createNamespacedJob({ namespace: this.namespace, body }) };
    } catch (error) {
      if (!isApiStatus(error, 409)) throw error;
      const job = await this.readJob(body.metadata!.name!);
      return { created: false, job: job ?? body };
    }
  }

  async listJobPods(jobName: string): Promise<V1Pod[]> {
    const pods = await this.#core.listNamespacedPod({ namespace: this.namespace, labelSelector: `batch.kubernetes.io/job-name=${jobName}` });
    return pods.items;
  }

  /** A core/v1 Event on the resource for `kubectl describe`; never fails the caller. */
  async recordEvent(resource: JobResource, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const now = new Date();
    try {
      await this.#core.createNamespacedEvent({
        namespace: this.namespace,
        body: {
          metadata: { generateName: `${resource.metadata.name}.`, namespace: this.namespace },
          involvedObject: {
            apiVersion: cutroomApiVersion,
            kind: resource.kind,
            name: resource.metadata.name!,
            namespace: this.namespace,
            uid: resource.metadata.uid!,
            resourceVersion: resource.metadata.resourceVersion!,
          },
          type,
          reason,
          message: message.slice(0, 1024),
          source: { component: 'cutroom-operator' },
          reportingComponent: 'cutroom.dev/operator',
          reportingInstance: this.#reportingInstance,
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    } catch (error) {
      this.#logger.warn({ err: error, resource: resource.metadata.name, reason }, 'could not record an event');
    }
  }
}
