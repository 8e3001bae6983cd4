import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { eventually } from '../support/wait.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { cutroomGroup, cutroomVersion } from '../../crds/contract/resources.ts';
import { applyCrds, kubeCluster, testNamespace, type KubeCluster } from '../support/kube-cluster.ts';
import { startFaultProxy, type FaultProxy } from '../support/kube-faults.ts';

/**
 * The jobs table is an outbox on the kubernetes backend too: a row whose custom resource
 * could not be created (the API server down or failing) stays in the table and is
 * dispatched again, and creation is idempotent by name, so a redispatch never makes a
 * second resource.
 */
describe('job outbox, kubernetes backend: the API server down or failing when a job is asked for', function () {
  this.timeout(60_000);
  let cluster: KubeCluster;
  let namespace: string;
  let faults: FaultProxy;
  let proxy: TcpProxy;
  let app: TestApp;

  before(async () => {
    cluster = await kubeCluster();
    await applyCrds(cluster);
    namespace = await testNamespace(cluster, 'outbox');
    // The api reaches the real API server through a TCP hop the test cuts, then a proxy that refuses requests.
    faults = await startFaultProxy(cluster);
    const server = new URL(faults.url);
    proxy = await startTcpProxy(server.hostname, Number(server.port));
    const kubeConfig = faults.kubeConfig(namespace);
    kubeConfig.clusters = kubeConfig.clusters.map((entry) => ({ ...entry, server: `https://127.0.0.1:${proxy.port}` }));
    app = await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: namespace, JOB_DISPATCH_POLL_MS: '100' }, { kubeConfig });
  });
  after(async () => {
    proxy?.restore();
    await app?.close();
    await proxy?.close();
    await faults?.close();
  });

  const submit = () =>
    app.services.jobs.submit(app.services.orm.em.fork(), {
      program: 'artifact',
      userId: randomUUID(),
      input: { sourceKey: 'media/none/source', contentType: 'video/mp4' },
    });
  const resourcesOf = async (jobId: string) =>
    ((await cluster.kubeConfig(namespace).makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      group: cutroomGroup, version: cutroomVersion, namespace, plural: 'artifactjobs', labelSelector: `cutroom.dev/job-id=${jobId}`,
    })) as { items: unknown[] }).items;
  const row = (jobId: string) => app.services.orm.em.fork().findOneOrFail(Job, jobId);

  it('API server unreachable: the committed row waits with its attempts counted, and is dispatched once the server answers — one resource', async () => {
    proxy.cut();
    const job = await submit();
    const waiting = await eventually(async () => {
      const current = await row(job.id);
      return current.dispatchAttempts >= 2 ? current : undefined;
    }, 'two failed dispatch attempts');
    expect(waiting.dispatchedAt).to.equal(null);
    expect(waiting.completedAt, 'not failed: the server being away is no refusal').to.equal(null);
    expect(await resourcesOf(job.id)).to.deep.equal([]);

    proxy.restore();
    const dispatched = await eventually(async () => ((await row(job.id)).dispatchedAt ? row(job.id) : undefined), 'the dispatch once the server is back');
    expect(dispatched.dispatchError).to.equal(null);
    expect(await resourcesOf(job.id)).to.have.length(1);
  });

  it('API server answering 503 to the create: retried with backoff until it succeeds — one resource', async () => {
    faults.failNext({ method: 'POST', path: `/apis/cutroom.dev/v1alpha1/namespaces/${namespace}/artifactjobs`, code: 503 }, 3);
    const job = await submit();
    const dispatched = await eventually(async () => ((await row(job.id)).dispatchedAt ? row(job.id) : undefined), 'the dispatch after three refusals');
    expect(dispatched.dispatchAttempts).to.equal(3);
    expect(await resourcesOf(job.id)).to.have.length(1);
  });

  it('a redispatch of a row whose resource already exists (the create answered, the commit of dispatched_at was lost) makes no second resource', async () => {
    const job = await submit();
    await eventually(async () => ((await row(job.id)).dispatchedAt ? true : undefined), 'the first dispatch');
    // as if the process died between the create and recording it; the outbox's poll finds the row again
    await app.services.orm.em.fork().nativeUpdate(Job, { id: job.id }, { dispatchedAt: null });
    await eventually(async () => ((await row(job.id)).dispatchedAt ? true : undefined), 'the redispatch');
    expect(await resourcesOf(job.id)).to.have.length(1);
  });
});
