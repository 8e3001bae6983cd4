import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { fileWhen } from '../support/wait.ts';
import { listenToUser } from '../support/events.ts';
import { storedUpload as storedFile } from '../support/stored-upload.ts';
import { makeCorruptFile, makeVideo } from '../support/media.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import type { LocalJobRunner } from '../../api/src/jobs/local-runner.ts';

describe('proxy task: non-web-compatible video gets its proxy and sprite after UPLOADED (local backend)', function () {
  this.timeout(90_000);
  let app: TestApp;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-proxy-task-'));
    app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '2' });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const storedUpload = (path: string, contentType: string) => storedFile(app.services, path, contentType);
  // Clips here are unlike other suites' (24 fps): identical content would fold into their files.

  function submit(program: 'artifact' | 'proxy', upload: Awaited<ReturnType<typeof storedUpload>>) {
    return app.services.jobs.submit(app.services.orm.em.fork(), {
      program,
      userId: upload.userId,
      mediaFileId: upload.file.id,
      input: { sourceKey: upload.key, contentType: upload.file.contentType },
    });
  }

  const proxyJobsOf = (fileId: string) => app.services.orm.em.fork().find(Job, { program: 'proxy', mediaFileId: fileId });

  it('non-web-compatible upload → media_ready with proxy_status pending and the file UPLOADED; then the proxy job makes it ready', async () => {
    const upload = await storedUpload(await makeVideo(dir, 'clip.webm', { codec: 'vp9', seconds: 2, fps: 24 }), 'video/webm');
    const events = await listenToUser(app.services.bus, upload.userId);
    try {
      await submit('artifact', upload);
      const ready = await events.next('media_ready');
      expect(ready.data).to.deep.equal({
        media_file_uuid: upload.file.id,
        media_item_uuid: upload.item.id,
        display_name: 'My clip',
        proxy_status: 'pending',
      });
      expect((await app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id)).status).to.equal('UPLOADED');

      const file = await fileWhen(app.services.orm, upload.file.id, (row) => row.proxyStatus !== 'pending');
      expect([file.status, file.proxyStatus]).to.deep.equal(['UPLOADED', 'ready']);
      const [job] = await proxyJobsOf(upload.file.id);
      expect(job?.status).to.equal('succeeded');
      expect(job?.input).to.deep.equal({ sourceKey: upload.key, contentType: 'video/webm' });
      expect(file.proxyKey).to.equal(`${job?.outputPrefix}/proxy.mp4`);
      expect(file.spriteKey).to.equal(`${job?.outputPrefix}/sprite.jpg`);
      expect(file.sprite).to.deep.equal({ tile_width_px: 160, tile_height_px: 90, tiles_per_row: 2, total_tiles: 2, seconds_per_tile: 1 });
      expect(await app.services.storage.sizeOf(file.proxyKey as string)).to.be.greaterThan(0);
      expect(await app.services.storage.sizeOf(file.spriteKey as string)).to.be.greaterThan(0);
      expect(events.events.filter((event) => event.type === 'media_ready'), 'one media_ready, at UPLOADED').to.have.lengthOf(1);
    } finally {
      await events.close();
    }
  });

  it('web-compatible upload → proxy_status not_applicable and no proxy job', async () => {
    const upload = await storedUpload(await makeVideo(dir, 'web.mp4', { seconds: 1, fps: 24 }), 'video/mp4');
    const events = await listenToUser(app.services.bus, upload.userId);
    try {
      await submit('artifact', upload);
      const ready = await events.next('media_ready');
      expect(ready.data).to.include({ media_file_uuid: upload.file.id, proxy_status: 'not_applicable' });
      await (app.services.dispatcher as LocalJobRunner).idle();
      const file = await app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id);
      expect([file.status, file.proxyStatus, file.proxyKey, file.spriteKey]).to.deep.equal(['UPLOADED', 'not_applicable', null, null]);
      expect(await proxyJobsOf(upload.file.id)).to.have.lengthOf(0);
    } finally {
      await events.close();
    }
  });

  it('a failing proxy job → proxy_status unknown; the file stays UPLOADED (the source still plays)', async () => {
    const upload = await storedUpload(await makeCorruptFile(dir, 'unplayable.webm'), 'video/webm');
    await app.services.orm.em.fork().nativeUpdate(MediaFile, { id: upload.file.id }, { status: 'UPLOADED', proxyStatus: 'pending' });
    const job = await submit('proxy', upload);
    const file = await fileWhen(app.services.orm, upload.file.id, (row) => row.proxyStatus !== 'pending');
    expect([file.status, file.proxyStatus, file.proxyKey, file.spriteKey, file.error]).to.deep.equal(['UPLOADED', 'unknown', null, null, null]);
    const row = await app.services.orm.em.fork().findOneOrFail(Job, job.id);
    expect(row.status).to.equal('failed');
    expect(row.error).to.match(/corrupt or not a media file/);
  });

  it('a proxy job whose file was deleted meanwhile settles with nothing to do', async () => {
    const em = app.services.orm.em.fork();
    const jobId = randomUUID();
    em.create(Job, { id: jobId, kind: 'ArtifactJob', program: 'proxy', userId: randomUUID(), mediaFileId: randomUUID(), input: {}, outputPrefix: `jobs/proxy/${jobId}`, status: 'running' });
    await em.flush();
    const sprite = { tile_width_px: 160, tile_height_px: 90, tiles_per_row: 1, total_tiles: 1, seconds_per_tile: 1 };
    const settled = await app.services.completion.complete(jobId, { ok: true, result: { proxy_key: 'k/proxy.mp4', sprite_key: 'k/sprite.jpg', sprite } });
    expect(settled).to.equal(true);
    expect((await app.services.orm.em.fork().findOneOrFail(Job, jobId)).status).to.equal('succeeded');
  });
});
