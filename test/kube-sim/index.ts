// A Kubernetes API server simulator for tests: no cluster can run on these machines,
// so the operator is exercised through the real @kubernetes/client-node against this.
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiServer } from './http-server.ts';
import type { InjectedFault, RecordedRequest } from './http-server.ts';
import { JobController } from './job-controller.ts';
import type { JobFailure, JobSuccess } from './job-controller.ts';
import { ObjectStore } from './object-store.ts';
import type { DeleteOptions, ListOptions } from './object-store.ts';
import { builtinTypes, loadCustomResourceTypes, ResourceTypes } from './resource-types.ts';
import type { KubeObject } from './resource-types.ts';
import { eventually } from '../../hack/fixtures/wait.ts';

export type { KubeObject, ObjectMeta, OwnerReference } from './resource-types.ts';
export type { JobFailure, JobSuccess } from './job-controller.ts';
export type { InjectedFault, RecordedRequest } from './http-server.ts';
export { StatusError } from './status-error.ts';

export type KubeSimOptions = {
  // Where the CustomResourceDefinitions are read from; the project's crds/ by default.
  crdDir?: string;
  // How often open watches that asked for bookmarks get one (0: only on sendBookmarks()).
  bookmarkIntervalMs?: number;
  // Changes kept for watches to resume from; older resourceVersions get 410 Gone.
  historyLimit?: number;
};

export type KubeSim = {
  url: string;
  // A KubeConfig for the simulator (plain HTTP, hence skipTLSVerify), default namespace `namespace`.
  kubeConfig(namespace?: string): KubeConfig;
  close(): Promise<void>;

  // State, by resource plural (`renderjobs`, `jobs`, `pods`, `leases`, `events`, …).
  resourceVersion(): number;
  get(plural: string, namespace: string, name: string): KubeObject | undefined;
  list(plural: string, namespace?: string, options?: ListOptions): KubeObject[];
  create(plural: string, namespace: string, body: object): KubeObject;
  mergePatch(plural: string, namespace: string, name: string, patch: object, subresource?: 'status'): KubeObject;
  delete(plural: string, namespace: string, name: string, options?: DeleteOptions): void;

  // The API server's failure modes.
  compact(): void;
  dropWatches(options?: { abrupt?: boolean }): number;
  sendBookmarks(): void;
  openWatches(): number;
  waitForWatches(count: number, timeoutMs?: number): Promise<void>;
  failNext(fault: InjectedFault, times?: number): void;
  readonly requests: readonly RecordedRequest[];

  // The job controller and kubelet.
  startJob(namespace: string, name: string): KubeObject;
  completeJob(namespace: string, name: string, outcome?: JobSuccess & { succeeded?: boolean } & JobFailure): void;
  failJob(namespace: string, name: string, failure?: JobFailure): void;
  jobPods(namespace: string, jobName: string): KubeObject[];

  // Resolves once `check` returns a truthy value (which it returns), rejects after timeoutMs.
  waitFor<T>(check: () => T | undefined | null | false, timeoutMs?: number): Promise<T>;
};

const defaultCrdDir = fileURLToPath(new URL('../../crds/', import.meta.url));

export async function startKubeSim(options: KubeSimOptions = {}): Promise<KubeSim> {
  const types = new ResourceTypes([...builtinTypes, ...loadCustomResourceTypes(options.crdDir ?? defaultCrdDir)]);
  const store = new ObjectStore(types, options.historyLimit ?? 10_000);
  const server = new ApiServer(store, { bookmarkIntervalMs: options.bookmarkIntervalMs ?? 10_000 });
  const jobs = new JobController(store, server.podLogs);
  const url = await server.listen();

  return {
    url,
    kubeConfig(namespace = 'default') {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'kube-sim', server: url, skipTLSVerify: true }],
        users: [{ name: 'kube-sim' }],
        contexts: [{ name: 'kube-sim', cluster: 'kube-sim', user: 'kube-sim', namespace }],
        currentContext: 'kube-sim',
      });
      return kc;
    },
    close: () => server.close(),

    resourceVersion: () => store.revision,
    get: (plural, namespace, name) => store.find(types.byPlural(plural), namespace, name),
    list: (plural, namespace, listOptions) => store.list(types.byPlural(plural), namespace, listOptions).items,
    create: (plural, namespace, body) => store.create(types.byPlural(plural), namespace, body).object,
    mergePatch: (plural, namespace, name, patch, subresource) =>
      store.patch(types.byPlural(plural), namespace, name, 'application/merge-patch+json', patch, subresource).object,
    delete: (plural, namespace, name, deleteOptions) => {
      store.delete(types.byPlural(plural), namespace, name, deleteOptions);
    },

    compact: () => store.compact(),
    dropWatches: (dropOptions) => server.dropWatches(dropOptions?.abrupt ?? false),
    sendBookmarks: () => server.sendBookmarks(),
    openWatches: () => server.openWatches,
    waitForWatches: async (count, timeoutMs = 5000) => {
      await eventually(async () => (server.openWatches >= count ? true : undefined), `kube-sim: ${count} open watch(es)`, timeoutMs, 10);
    },
    failNext: (fault, times = 1) => server.injectFault(fault, times),
    requests: server.requests,

    startJob: (namespace, name) => jobs.startJob(namespace, name),
    completeJob: (namespace, name, outcome = {}) => {
      if (outcome.succeeded === false) jobs.failJob(namespace, name, outcome);
      else jobs.completeJob(namespace, name, outcome);
    },
    failJob: (namespace, name, failure) => jobs.failJob(namespace, name, failure),
    jobPods: (namespace, jobName) => jobs.jobPods(namespace, jobName),

    waitFor: (check, timeoutMs = 5000) => eventually(async () => check() || undefined, 'kube-sim: a condition', timeoutMs, 10),
  };
}
