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
    const upload = await storedUpload(app.services, await makeVideo(dir, 'blink.mp4', { seconds: 2 }), 'video/mp4');
    const job = await app.services.jobs.submit(app.services.orm.em.fork(), {
      program: 'artifact',
      userId: upload.userId,
      mediaFileId: upload.file.id,
      input: { sourceKey: upload.key, contentType: 'video/mp4' },
    });
    await eventually(async () => ((await app.services.orm.em.fork().findOneOrFail(Job, job.id)).status === 'running' ? true : undefined), 'the job to run');
    proxy.cut();
    const retrying = () => app.logs.find((line) => line.msg.includes('could not be settled; retrying') && line.job_id === job.id);
    await eventually(async () => retrying(), 'a settlement refused while the database is away');
    proxy.restore();
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
