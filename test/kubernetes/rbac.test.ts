// The chart's RBAC enforced by a real API server (--authorization-mode=RBAC): each component's
// ServiceAccount token may do what that component does, and is refused what it has no business
// with. That the operator's and the api's rules are enough is shown by the job-path tests, which
// run them under these same tokens.
import { expect } from 'chai';
import { ApiException, BatchV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { applyCrds, kubeCluster, testNamespace } from '../support/kube-cluster.ts';
import type { KubeCluster } from '../support/kube-cluster.ts';
import { installRelease } from '../support/kube-release.ts';
import type { Release } from '../support/kube-release.ts';

async function status(request: Promise<unknown>): Promise<number> {
  try {
    await request;
    return 200;
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
}

describe('the chart\'s RBAC on a real API server', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let release: Release;
  let elsewhere: string;

  before(async () => {
    cluster = await kubeCluster();
    await applyCrds(cluster);
    release = await installRelease(cluster, 'rbac');
    elsewhere = await testNamespace(cluster, 'rbac-elsewhere');
  });

  /** `kubectl auth can-i` as a ServiceAccount of the release: the server's own authorizer answers. */
  async function canI(serviceAccount: string, verb: string, resource: string): Promise<boolean> {
    // kind.group/subresource: a subresource (status, finalizers) rather than an object's name.
    const [, kind, sub] = /^([^/]+\.[^/]+)\/(status|finalizers)$/.exec(resource) ?? [];
    const args = kind ? [verb, kind, `--subresource=${sub}`] : [verb, resource];
    const kubeconfig = await cluster.kubeconfigFile(await release.tokenOf(serviceAccount), release.namespace);
    const answer = await cluster.kubectl(['auth', 'can-i', ...args], { kubeconfig });
    if (answer.code !== 0 && answer.code !== 1) throw new Error(answer.stderr);
    return answer.stdout.trim() === 'yes';
  }

  it('the operator may do what it does: follow job resources and their status, run Jobs, read Pods, hold its Lease, record Events', async () => {
    const sa = 'cutroom-operator';
    const lease = release.operatorEnv.OPERATOR_LEASE_NAME!;
    for (const [verb, resource] of [
      // create: its job outbox hands over follow-up jobs (found refused by this server before the chart granted it).
      ['watch', 'renderjobs.cutroom.dev'], ['create', 'artifactjobs.cutroom.dev'], ['patch', 'analysisjobs.cutroom.dev/status'], ['update', 'artifactjobs.cutroom.dev/finalizers'],
      ['create', 'jobs.batch'], ['delete', 'jobs.batch'], ['list', 'pods'], ['create', 'leases.coordination.k8s.io'],
      ['update', `leases.coordination.k8s.io/${lease}`], ['create', 'events'],
    ] as const) {
      expect(await canI(sa, verb, resource), `${verb} ${resource}`).to.equal(true);
    }
  });

  it('the operator is refused what it has no business with: Secrets, another namespace, another Lease, deleting Pods or job resources', async () => {
    const kc = release.operatorKubeConfig;
    const secrets = await status(kc.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: release.namespace }));
    expect(secrets, 'list Secrets').to.equal(403);
    const secret = await status(kc.makeApiClient(CoreV1Api).readNamespacedSecret({ name: release.operatorEnv.JOB_ENV_SECRET!, namespace: release.namespace }));
    expect(secret, 'read the job Secret').to.equal(403);
    const job = { metadata: { name: 'intruder' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'x', image: 'x' }] } } } };
    expect(await status(kc.makeApiClient(BatchV1Api).createNamespacedJob({ namespace: elsewhere, body: job })), 'a Job in another namespace').to.equal(403);
    expect(await status(kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ group: 'cutroom.dev', version: 'v1alpha1', namespace: elsewhere, plural: 'renderjobs' })), 'job resources of another namespace').to.equal(403);
    expect(await canI('cutroom-operator', 'update', 'leases.coordination.k8s.io/someone-else')).to.equal(false);
    expect(await canI('cutroom-operator', 'delete', 'pods')).to.equal(false);
    expect(await canI('cutroom-operator', 'delete', 'renderjobs.cutroom.dev')).to.equal(false);
  });

  it('the api may create, follow and delete job resources, and nothing of the operator\'s: no Jobs, no Pods, no status', async () => {
    for (const verb of ['create', 'get', 'list', 'watch', 'delete']) expect(await canI('cutroom-api', verb, 'renderjobs.cutroom.dev'), verb).to.equal(true);
    expect(await canI('cutroom-api', 'create', 'jobs.batch')).to.equal(false);
    expect(await canI('cutroom-api', 'list', 'pods')).to.equal(false);
    expect(await canI('cutroom-api', 'patch', 'renderjobs.cutroom.dev/status')).to.equal(false);
    expect(await canI('cutroom-api', 'get', 'secrets')).to.equal(false);
    const kc = release.apiKubeConfig;
    expect(await status(kc.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: release.namespace }))).to.equal(403);
  });

  it('a job Pod\'s ServiceAccount patches its own kind\'s status and nothing else', async () => {
    const render = release.operatorEnv.JOB_SERVICE_ACCOUNT_RENDER!;
    expect(await canI(render, 'patch', 'renderjobs.cutroom.dev/status')).to.equal(true);
    expect(await canI(render, 'patch', 'analysisjobs.cutroom.dev/status')).to.equal(false);
    expect(await canI(render, 'patch', 'renderjobs.cutroom.dev')).to.equal(false);
    expect(await canI(render, 'get', 'secrets')).to.equal(false);
    expect(await canI(render, 'list', 'pods')).to.equal(false);
  });
});
