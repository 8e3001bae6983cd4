import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { listenToUser } from '../support/events.ts';
import { storedUpload as storedFile } from '../support/stored-upload.ts';
import { makeCorruptFile, makeVideo, sha256OfFile } from '../support/media.ts';
import { MediaFile, MediaItem } from '../../api/src/media/entities.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import type { LocalJobRunner } from '../../api/src/jobs/local-runner.ts';
import { signUpAndLogin } from '../support/users.ts';
import { channelFlushed, eventually } from '../support/wait.ts';

describe('job system: local backend with artifact jobs', function () {
  this.timeout(90_000);
  let app: TestApp;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-local-jobs-'));
    app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '2' });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const storedUpload = (path: string, contentType: string) => storedFile(app.services, path, contentType);

  async function submitArtifact(upload: Awaited<ReturnType<typeof storedUpload>>) {
    return app.services.jobs.submit(app.services.orm.em.fork(), {
      program: 'artifact',
      userId: upload.userId,
      mediaFileId: upload.file.id,
      input: { sourceKey: upload.key, contentType: upload.file.contentType },
    });
  }

  it('artifact job success: MediaFile UPLOADED with its metadata, media_ready on the owner channel with the spec payload', async () => {
    const clip = await makeVideo(dir, 'ok.mp4', { seconds: 2 });
    const upload = await storedUpload(clip, 'video/mp4');
    const events = await listenToUser(app.services.bus, upload.userId);
    try {
      const job = await submitArtifact(upload);
      const ready = await events.next('media_ready');
      expect(ready.data).to.deep.equal({
        media_file_uuid: upload.file.id,
        media_item_uuid: upload.item.id,
        display_name: 'My clip',
        proxy_status: 'not_applicable',
      });
      const em = app.services.orm.em.fork();
      const file = await em.findOneOrFail(MediaFile, upload.file.id);
      expect(file.status).to.equal('UPLOADED');
      expect(file.sha256Hash).to.equal(await sha256OfFile(clip));
      expect(file.durationMs).to.be.within(1900, 2200);
      expect([file.width, file.height, file.hasAudio]).to.deep.equal([640, 360, true]);
      expect(file.waveformJson).to.be.an('array').that.is.not.empty;
      expect(file.thumbnailKey).to.equal(`${job.outputPrefix}/thumbnail.jpg`);
      const row = await em.findOneOrFail(Job, job.id);
      expect(row.status).to.equal('succeeded');
      expect(row.completedAt).to.be.instanceOf(Date);
      expect(row.progress).to.equal(100);
    } finally {
      await events.close();
    }
  });

  it('artifact job failure: MediaFile FAILED and media_failed with a clear error', async () => {
    const corrupt = await makeCorruptFile(dir, 'corrupt.mp4');
    const upload = await storedUpload(corrupt, 'video/mp4');
    const events = await listenToUser(app.services.bus, upload.userId);
    try {
      const job = await submitArtifact(upload);
      const failed = await events.next('media_failed');
      expect(failed.data).to.include({ media_file_uuid: upload.file.id, media_item_uuid: upload.item.id });
      const error = (failed.data as { error: string }).error;
      expect(error).to.be.a('string').and.not.match(/exited with code/);
      const em = app.services.orm.em.fork();
      expect((await em.findOneOrFail(MediaFile, upload.file.id)).status).to.equal('FAILED');
      const row = await em.findOneOrFail(Job, job.id);
      // the job keeps the program's own message; the event shows the catalog's text of its code
      expect(row.status).to.equal('failed');
      expect(row.error).to.match(/corrupt or not a media file/);
      expect(error).to.equal('The file is corrupt or not a media file that can be read.');
    } finally {
      await events.close();
    }
  });

  it('identical content is stored once: the second file folds into the first and its items follow', async () => {
    const clip = await makeVideo(dir, 'twin.mp4', { seconds: 1, audio: 'none' });
    const first = await storedUpload(clip, 'video/mp4');
    const firstEvents = await listenToUser(app.services.bus, first.userId);
    await submitArtifact(first);
    await firstEvents.next('media_ready');
    await firstEvents.close();

    const second = await storedUpload(clip, 'video/mp4');
    const events = await listenToUser(app.services.bus, second.userId);
    try {
      await submitArtifact(second);
      const ready = await events.next('media_ready');
      // the uploader hears the ids their client holds, never the earlier file's (issue 22 item 11)
      expect(ready.data).to.include({ media_file_uuid: second.file.id, media_item_uuid: second.item.id });
      const em = app.services.orm.em.fork();
      expect(await em.findOne(MediaFile, second.file.id)).to.equal(null);
      const item = await em.findOneOrFail(MediaItem, second.item.id);
      expect(item.file.id).to.equal(first.file.id);
      expect(await app.services.storage.sizeOf(second.key)).to.equal(null);
      expect(await app.services.storage.sizeOf(first.key)).to.be.greaterThan(0);
    } finally {
      await events.close();
    }
  });

  it('completion handlers run exactly once per job, however often the end is reported', async () => {
    const corrupt = await makeCorruptFile(dir, 'once.mp4', 1024, 7);
    const upload = await storedUpload(corrupt, 'video/mp4');
    const events = await listenToUser(app.services.bus, upload.userId);
    try {
      const job = await submitArtifact(upload);
      await events.next('media_failed');
      await (app.services.dispatcher as LocalJobRunner).idle();
      const again = await app.services.completion.complete(job.id, { ok: false, error: 'reported twice' });
      expect(again, 'the second report settles nothing').to.equal(false);
      // complete() returns after its after-commit publishing: a marker published now reaches
      // the listener after anything either report published (one channel, one order).
      await channelFlushed(app.services.redis, app.services.bus.userChannel(upload.userId), events.events);
      expect(events.events.filter((event) => event.type === 'media_failed')).to.have.lengthOf(1);
      const row = await app.services.orm.em.fork().findOneOrFail(Job, job.id);
      expect(row.error).to.not.equal('reported twice');
    } finally {
      await events.close();
    }
  });

  it('a cancelled job ends failed with a clear error and its handler runs', async () => {
    const clip = await makeVideo(dir, 'cancel.mp4', { seconds: 2 });
    const upload = await storedUpload(clip, 'video/mp4');
    const events = await listenToUser(app.services.bus, upload.userId);
    try {
      const job = await submitArtifact(upload);
      await app.services.jobs.cancel(app.services.orm.em.fork(), job.id);
      const failed = await events.next('media_failed');
      expect((failed.data as { error: string }).error).to.equal('The job was cancelled.');
    } finally {
      await events.close();
    }
  });
  it('service-raised messages go through the catalogs: a failed upload is explained in the owner\'s language (event) and the reader\'s (read model)', async () => {
    const owner = await signUpAndLogin(app, { locale: 'pt' });
    const corrupt = await makeCorruptFile(dir, 'corrupt-pt.mp4');
    const upload = await storedFile(app.services, corrupt, 'video/mp4', owner.user.id);
    const events = await listenToUser(app.services.bus, owner.user.id);
    try {
      await submitArtifact(upload);
      const failed = await events.next('media_failed');
      expect((failed.data as { error: string }).error).to.equal('O ficheiro está corrompido ou não é um ficheiro de mídia legível.');
      const file = await app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id);
      expect([file.status, file.errorCode]).to.deep.equal(['FAILED', 'media.corrupt']);
      expect(file.error).to.match(/corrupt or not a media file/);
      const response = await owner.fetch(`/api/v1/media/${upload.item.id}`, { headers: { 'Accept-Language': 'es' } });
      expect(response.status).to.equal(200);
      const view = (await response.json()) as { status: string; error: string };
      expect(view).to.include({ status: 'failed', error: 'El archivo está dañado o no es un archivo multimedia legible.' });
    } finally {
      await events.close();
    }
  });

  it('service-raised messages go through the catalogs: a cancelled job is announced in the owner\'s language', async () => {
    const owner = await signUpAndLogin(app, { locale: 'pt' });
    const clip = await makeVideo(dir, 'cancel-pt.mp4', { seconds: 2 });
    const upload = await storedFile(app.services, clip, 'video/mp4', owner.user.id);
    const events = await listenToUser(app.services.bus, owner.user.id);
    try {
      const job = await submitArtifact(upload);
      await app.services.jobs.cancel(app.services.orm.em.fork(), job.id);
      const failed = await events.next('media_failed');
      expect((failed.data as { error: string }).error).to.equal('A tarefa foi cancelada.');
      const file = await app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id);
      expect([file.error, file.errorCode]).to.deep.equal(['The job was cancelled.', 'job.cancelled']);
    } finally {
      await events.close();
    }
  });

  it('job metrics: created, succeeded and failed by kind, duration and queue depth on /metrics', async () => {
    const text = await (await app.fetch('/metrics')).text();
    expect(text).to.match(/^cutroom_jobs_created_total\{kind="ArtifactJob"\} [1-9]\d*$/m);
    expect(text).to.match(/^cutroom_jobs_succeeded_total\{kind="ArtifactJob"\} [1-9]\d*$/m);
    expect(text).to.match(/^cutroom_jobs_failed_total\{kind="ArtifactJob"\} [1-9]\d*$/m);
    expect(text).to.match(/^cutroom_job_duration_seconds_count\{kind="ArtifactJob",outcome="succeeded"\} [1-9]\d*$/m);
    // the depth of the whole run's table at that moment (other tests' jobs may be waiting): a count, reported per kind
    expect(text).to.match(/^cutroom_job_queue_depth\{kind="ArtifactJob"\} \d+$/m);
    expect(text).to.match(/^cutroom_job_queue_depth\{kind="RenderJob"\} \d+$/m);
  });
});

describe('job system: local backend fairness', function () {
  this.timeout(90_000);
  it('one user filling the queue cannot delay another user: jobs are handed over round-robin across users', async () => {
    const app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '1' });
    try {
      const busy = randomUUID();
      const other = randomUUID();
      const em = app.services.orm.em.fork();
      // Written in one transaction, so the outbox sees them all at once: six of one user, then one of another.
      const jobs = await em.transactional(async (tx) => {
        const submit = (userId: string) => app.services.jobs.submit(tx, { program: 'artifact', userId, input: { sourceKey: 'missing', contentType: 'video/mp4' } });
        const rows = [];
        for (let i = 0; i < 6; i++) rows.push(await submit(busy));
        rows.push(await submit(other));
        return rows;
      });
      const settled = await eventually(async () => {
        const rows = await app.services.orm.em.fork().find(Job, { id: { $in: jobs.map((job) => job.id) } }, { orderBy: { startedAt: 'asc' } });
        return rows.every((row) => row.completedAt) ? rows : undefined;
        // seven program starts one after another: a few seconds each on a loaded machine
      }, 'every job settled', 50_000);
      // Nothing was refused, and the other user's job ran second, not seventh.
      expect(settled.every((row) => row.status === 'failed' && /does not exist/.test(row.error ?? ''))).to.equal(true);
      expect(settled.map((row) => row.userId).indexOf(other)).to.be.at.most(1);
    } finally {
      await app.close();
    }
  });

  it('attack: one user queueing 140 jobs (140 confirms) neither fails nor delays another user\'s upload: nothing is refused, the other job runs next', async () => {
    const app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '1' });
    try {
      const flooder = randomUUID();
      const victim = randomUUID();
      const submit = (tx: Parameters<typeof app.services.jobs.submit>[0], userId: string) =>
        app.services.jobs.submit(tx, { program: 'artifact', userId, input: { sourceKey: 'missing', contentType: 'video/mp4' } });
      const flood = await app.services.orm.em.fork().transactional(async (tx) => {
        const rows = [];
        for (let i = 0; i < 140; i++) rows.push(await submit(tx, flooder));
        return rows;
      });
      const victims = await submit(app.services.orm.em.fork(), victim);
      const ran = await eventually(async () => {
        const row = await app.services.orm.em.fork().findOneOrFail(Job, victims.id);
        return row.completedAt ? row : undefined;
      }, "the victim's job settled");
      expect(ran.error, 'run, not refused').to.match(/does not exist/);
      const flooderBefore = await app.services.orm.em.fork().count(Job, { id: { $in: flood.map((job) => job.id) }, startedAt: { $lt: ran.startedAt! } });
      expect(flooderBefore, "only the flooder's job already running when the victim's arrived went before it").to.be.at.most(1);
      const refused = await app.services.orm.em.fork().count(Job, { id: { $in: flood.map((job) => job.id) }, errorCode: 'job.rejected' });
      expect(refused, 'no job of the flood is refused either: they wait in the table').to.equal(0);
    } finally {
      await app.close();
    }
  });
});
