import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { eventually } from '../support/wait.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { startKubeSim, type KubeSim } from '../kube-sim/index.ts';

/**
 * The jobs table is an outbox on the kubernetes backend too: a row whose custom resource
 * could not be created (the API server down or failing) stays in the table and is
 * dispatched again, and creation is idempotent by name, so a redispatch never makes a
 * second resource.
 */
describe('job outbox, kubernetes backend: the API server down or failing when a job is asked for', function () {
  this.timeout(60_000);
  const namespace = 'cutroom-outbox';
  let sim: KubeSim;
  let proxy: TcpProxy;
  let app: TestApp;

  before(async () => {
    sim = await startKubeSim({ bookmarkIntervalMs: 0 });
    const server = new URL(sim.url);
    proxy = await startTcpProxy(server.hostname, Number(server.port));
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'through-proxy', server: `${server.protocol}//127.0.0.1:${proxy.port}`, skipTLSVerify: true }],
      users: [{ name: 'tester', token: 'test' }],
      contexts: [{ name: 'through-proxy', cluster: 'through-proxy', user: 'tester', namespace }],
      currentContext: 'through-proxy',
    });
    app = await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: namespace, JOB_DISPATCH_POLL_MS: '100' }, { kubeConfig });
  });
  after(async () => {
    proxy?.restore();
    await app?.close();
    await proxy?.close();
    await sim?.close();
  });

  const submit = () =>
    app.services.jobs.submit(app.services.orm.em.fork(), {
      program: 'artifact',
      userId: randomUUID(),
      input: { sourceKey: 'media/none/source', contentType: 'video/mp4' },
    });
  const resourcesOf = (jobId: string) => sim.list('artifactjobs', namespace, { labelSelector: `cutroom.dev/job-id=${jobId}` });
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
    expect(resourcesOf(job.id)).to.deep.equal([]);

    proxy.restore();
    const dispatched = await eventually(async () => ((await row(job.id)).dispatchedAt ? row(job.id) : undefined), 'the dispatch once the server is back');
    expect(dispatched.dispatchError).to.equal(null);
    expect(resourcesOf(job.id)).to.have.length(1);
  });

  it('API server answering 503 to the create: retried with backoff until it succeeds — one resource', async () => {
    sim.failNext({ method: 'POST', path: `/apis/cutroom.dev/v1alpha1/namespaces/${namespace}/artifactjobs`, code: 503 }, 3);
    const job = await submit();
    const dispatched = await eventually(async () => ((await row(job.id)).dispatchedAt ? row(job.id) : undefined), 'the dispatch after three refusals');
    expect(dispatched.dispatchAttempts).to.equal(3);
    expect(resourcesOf(job.id)).to.have.length(1);
  });

  it('a redispatch of a row whose resource already exists (the create answered, the commit of dispatched_at was lost) makes no second resource', async () => {
    const job = await submit();
    await eventually(async () => ((await row(job.id)).dispatchedAt ? true : undefined), 'the first dispatch');
    // as if the process died between the create and recording it; the outbox's poll finds the row again
    await app.services.orm.em.fork().nativeUpdate(Job, { id: job.id }, { dispatchedAt: null });
    await eventually(async () => ((await row(job.id)).dispatchedAt ? true : undefined), 'the redispatch');
    expect(resourcesOf(job.id)).to.have.length(1);
  });
});
