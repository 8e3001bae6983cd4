import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { eventually } from '../support/wait.ts';
import { storedUpload } from '../support/stored-upload.ts';
import { makeVideo } from '../support/media.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { Job } from '../../api/src/jobs/entities.ts';

/** An artifact job over a fresh 2 s upload, once it runs: the moment a test cuts a dependency. */
async function runningArtifactJob(app: TestApp, dir: string, name: string) {
  const upload = await storedUpload(app.services, await makeVideo(dir, name, { seconds: 2 }), 'video/mp4');
  const job = await app.services.jobs.submit(app.services.orm.em.fork(), {
    program: 'artifact',
    userId: upload.userId,
    mediaFileId: upload.file.id,
    input: { sourceKey: upload.key, contentType: 'video/mp4' },
  });
  await eventually(async () => ((await app.services.orm.em.fork().findOneOrFail(Job, job.id)).status === 'running' ? true : undefined), 'the job to run');
  return { upload, job };
}

/** Cuts the hop until the local runner says it retries the job's end step (reading or settling its outcome), then restores it. */
async function cutUntilRetried(app: TestApp, hop: TcpProxy, jobId: string, step: 'read' | 'settled'): Promise<void> {
  hop.cut();
  await eventually(async () => app.logs.find((line) => line.msg.includes(`could not be ${step}; retrying`) && line.job_id === jobId), `the outcome ${step === 'read' ? 'read' : 'settlement'} refused while the dependency is away`);
  hop.restore();
}

describe('job system: a database blink at job completion, or down at boot (hardening #9)', function () {
  this.timeout(90_000);
  let dir: string;
  let proxy: TcpProxy;
  let app: TestApp;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-blink-'));
    const database = new URL(process.env.DATABASE_URL!);
    proxy = await startTcpProxy(database.hostname, Number(database.port || 5432));
    const throughProxy = new URL(database);
    throughProxy.port = String(proxy.port);
    app = await startTestApp({ JOB_BACKEND: 'local', DATABASE_URL: throughProxy.toString() });
  });
  after(async () => {
    proxy.restore();
    await app.close();
    await proxy.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('PostgreSQL unreachable when a local job ends: the settlement is retried with backoff, and the upload becomes UPLOADED once the database is back — no restart', async () => {
    const { upload, job } = await runningArtifactJob(app, dir, 'blink.mp4');
    await cutUntilRetried(app, proxy, job.id, 'settled');
    const file = await eventually(async () => {
      const row = await app.services.orm.em.fork().findOne(MediaFile, upload.file.id);
      return row?.status === 'UPLOADED' ? row : undefined;
    }, 'the file to become UPLOADED after the database came back');
    expect(file.sha256Hash).to.match(/^[0-9a-f]{64}$/);
    const settled = await app.services.orm.em.fork().findOneOrFail(Job, job.id);
    expect(settled.status).to.equal('succeeded');
    expect(settled.completedAt).to.be.instanceOf(Date);
  });

  it('PostgreSQL down at boot: the api starts (readyz 503), and once the database is back a job the previous process left unfinished runs again and settles — no restart', async () => {
    const upload = await storedUpload(app.services, await makeVideo(dir, 'boot.mp4', { seconds: 1 }), 'video/mp4');
    const em = app.services.orm.em.fork();
    const id = randomUUID();
    // as a crash mid-run leaves it: handed to a local runner, never completed
    em.create(Job, {
      id, kind: 'ArtifactJob', program: 'artifact', backend: 'local', outputPrefix: `jobs/artifact/${id}`, status: 'running',
      userId: upload.userId, mediaFileId: upload.file.id, input: { sourceKey: upload.key, contentType: 'video/mp4' }, dispatchedAt: new Date(),
    });
    await em.flush();

    const database = new URL(process.env.DATABASE_URL!);
    const down = await startTcpProxy(database.hostname, Number(database.port || 5432));
    down.cut();
    const throughDown = new URL(database);
    throughDown.port = String(down.port);
    // as main.ts starts it: the local backend recovers unfinished jobs
    const booted = await startTestApp({ JOB_BACKEND: 'local', DATABASE_URL: throughDown.toString(), JOB_DISPATCH_POLL_MS: '200' }, { recoverJobs: true });
    try {
      expect((await booted.fetch('/readyz')).status, 'up, but not ready without its database').to.equal(503);
      down.restore();
      await eventually(async () => ((await app.services.orm.em.fork().findOne(MediaFile, upload.file.id))?.status === 'UPLOADED' ? true : undefined), 'the recovered job to settle');
      expect((await app.services.orm.em.fork().findOneOrFail(Job, id)).status).to.equal('succeeded');
      expect((await booted.fetch('/readyz')).status).to.equal(200);
    } finally {
      await booted.close();
      await down.close();
    }
  });
});

describe('job system: an object-store blip as a local job ends (issue 25 item 8)', function () {
  this.timeout(90_000);
  let dir: string;
  let store: TcpProxy;
  let app: TestApp;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-store-blip-'));
    const endpoint = new URL(process.env.S3_ENDPOINT!);
    store = await startTcpProxy(endpoint.hostname, Number(endpoint.port));
    app = await startTestApp({ JOB_BACKEND: 'local', S3_ENDPOINT: `http://127.0.0.1:${store.port}` });
  });
  after(async () => {
    store.restore();
    await app.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the store unreachable when a local job ends: reading its outcome is retried with backoff, and the job settles once the store is back — it is not left running until a restart', async () => {
    const { upload, job } = await runningArtifactJob(app, dir, 'store-blip.mp4');
    await cutUntilRetried(app, store, job.id, 'read');
    const settled = await eventually(async () => {
      const row = await app.services.orm.em.fork().findOneOrFail(Job, job.id);
      return row.status === 'running' ? undefined : row;
    }, 'the job to settle after the store came back');
    expect(settled.completedAt).to.be.instanceOf(Date);
    expect((await app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id)).status, 'its file settles with it').to.not.equal('PROCESSING');
  });
});
