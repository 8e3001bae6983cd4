import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Services } from '../../api/src/app.ts';
import { Job, type JobRow } from '../../api/src/jobs/entities.ts';
import { LocalJobRunner } from '../../api/src/jobs/local-runner.ts';
import { JobOutbox } from '../../api/src/jobs/outbox.ts';
import { JobService } from '../../api/src/jobs/service.ts';
import { ObjectStorage } from '../../api/src/storage/storage.ts';
import { resourceNamespace } from '../support/kube-cluster.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { eventually } from '../support/wait.ts';

const misbehavingProgram = fileURLToPath(new URL('./misbehaving-program.ts', import.meta.url));

/**
 * Issue 25 item 8: an object-store blip as a job ends left it `running` (and its export
 * `rendering`) until the api restarted: the outcome could not be read and nothing retried.
 * The runner here reads outcomes through a TCP hop in front of the embedded store that the
 * test cuts and restores (the program itself writes straight to the store), so the blip
 * starts before the program ends and lasts exactly as long as the test says: no timing
 * race. Each runner is closed by its test, and close() must end every retry at once.
 */
describe('attack: an object-store blip as a job ends (outcome read retried, overdue jobs swept)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let proxy: TcpProxy;

  before(async () => {
    // the app's backend is kubernetes (its outbox takes only those rows); the local rows are this test's runners'
    const { namespace, kubeConfig } = await resourceNamespace('outcome-blip');
    app = await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: namespace }, { kubeConfig });
    const endpoint = new URL(app.services.storage.settings.endpoint!);
    proxy = await startTcpProxy(endpoint.hostname, Number(endpoint.port));
  });
  after(async () => {
    await proxy?.close();
    await app?.close();
  });

  /** A local backend whose outcome reads go through the proxy; its outbox is kicked by each submit. */
  function localBackend(services: Services, options: { overdueMarginMs?: number } = {}) {
    const storage = new ObjectStorage({ ...services.storage.settings, endpoint: `http://127.0.0.1:${proxy.port}` });
    const runner = new LocalJobRunner({
      concurrency: 2,
      s3: services.storage.settings,
      storage,
      completion: services.completion,
      logger: services.logger,
      metrics: services.jobMetrics,
      onSlotFree: () => outbox.kick(),
      command: () => ({ file: process.execPath, args: [misbehavingProgram] }),
      overdueSweepMs: 0,
      ...options,
    });
    const outbox: JobOutbox = new JobOutbox({
      orm: services.orm, dispatcher: runner, completion: services.completion, storage: services.storage, logger: services.logger,
      databaseUrl: services.config.DATABASE_URL, channel: `${services.config.REDIS_KEY_PREFIX}jobs-blip`, pollMs: 1000, recoverOnStart: false,
    });
    const jobs = new JobService({ dispatcher: runner, completion: services.completion, outbox, billing: services.billing, defaultTimeoutSeconds: 60 });
    return { jobs, runner, outbox, close: async () => { await outbox.close(); await runner.close(); } };
  }

  const row = (id: string) => app.services.orm.em.fork().findOneOrFail(Job, id, { refresh: true });
  /** A job whose program fails with its own code (error.json written straight to the store). */
  const submit = (jobs: JobService, timeoutSeconds = 60): Promise<JobRow> =>
    jobs.submit(app.services.orm.em.fork(), {
      program: 'artifact',
      userId: randomUUID(),
      timeoutSeconds,
      input: { sourceKey: 'missing', contentType: 'video/mp4', behaviour: 'coded', failure: { message: 'The clip is upside down.', code: 'media.upside_down', params: null } } as never,
    });
  const retries = (jobId: string) => app.logs.filter((line) => line.job_id === jobId && line.msg === 'the outcome of a local job could not be read; retrying').length;

  it('the outcome is read again with backoff while the store is cut, and the job settles once when it answers', async () => {
    const local = localBackend(app.services);
    try {
      proxy.cut();
      const job = await submit(local.jobs);
      await eventually(async () => (retries(job.id) >= 2 ? true : undefined), 'two retries of the outcome read', 30_000);
      expect((await row(job.id)).completedAt, 'not settled while the store is cut').to.equal(null);
      proxy.restore();
      const settled = await eventually(async () => ((await row(job.id)).completedAt ? row(job.id) : undefined), 'the job settled after the store came back', 30_000);
      expect(settled).to.deep.include({ status: 'failed', errorCode: 'media.upside_down' });
      expect(app.logs.some((line) => line.job_id === job.id && line.msg === 'the outcome of a local job was read after retries')).to.equal(true);
    } finally {
      proxy.restore();
      await local.close();
    }
  });

  it('close() during the retries returns at once (no backoff timer outlives it) and leaves the job for the next start', async () => {
    const local = localBackend(app.services);
    let closed = false;
    try {
      proxy.cut();
      const job = await submit(local.jobs);
      await eventually(async () => (retries(job.id) >= 1 ? true : undefined), 'a retry of the outcome read', 30_000);
      // the store stays cut: close() must not wait for it (a retry loop it could not end would hold it until the deadline)
      await local.close();
      closed = true;
      expect((await row(job.id)).completedAt, 'left for the next start').to.equal(null);
      expect(app.logs.some((line) => line.job_id === job.id && /before shutdown; the next start runs it again/.test(line.msg))).to.equal(true);
    } finally {
      proxy.restore();
      if (!closed) await local.close();
    }
  });

  it('an outcome still unreadable past the deadline plus the margin: the job is failed as timed out and settled once', async () => {
    const local = localBackend(app.services, { overdueMarginMs: 0 });
    try {
      proxy.cut();
      const job = await submit(local.jobs, 2);
      const settled = await eventually(async () => ((await row(job.id)).completedAt ? row(job.id) : undefined), 'the job settled as timed out', 30_000);
      expect(settled).to.deep.include({ status: 'failed', errorCode: 'job.timed_out' });
    } finally {
      proxy.restore();
      await local.close();
    }
  });

  it('the sweep settles a local job running past its deadline that no run holds (once), and leaves one within its time', async () => {
    const local = localBackend(app.services, { overdueMarginMs: 1000 });
    try {
      const em = app.services.orm.em.fork();
      const make = (startedSecondsAgo: number) =>
        em.create(Job, {
          id: randomUUID(), kind: 'ArtifactJob', program: 'artifact', userId: randomUUID(), input: {}, outputPrefix: `jobs/artifact/${randomUUID()}`,
          backend: 'local', timeoutSeconds: 60, status: 'running', dispatchedAt: new Date(Date.now() - startedSecondsAgo * 1000), startedAt: new Date(Date.now() - startedSecondsAgo * 1000),
        });
      const lost = make(3600);
      const fresh = make(10);
      await em.flush();
      expect(await local.runner.sweepOverdue()).to.be.at.least(1);
      expect(await row(lost.id)).to.deep.include({ status: 'failed', errorCode: 'job.timed_out' });
      expect((await row(fresh.id)).completedAt).to.equal(null);
      const settledAt = (await row(lost.id)).completedAt!.getTime();
      await local.runner.sweepOverdue();
      expect((await row(lost.id)).completedAt!.getTime(), 'settled once').to.equal(settledAt);
      await app.services.orm.em.fork().nativeDelete(Job, { id: fresh.id });
    } finally {
      await local.close();
    }
  });
});
