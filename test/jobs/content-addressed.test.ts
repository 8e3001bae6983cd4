import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { listenToUser } from '../support/events.ts';
import { storedUpload as storedFile } from '../support/stored-upload.ts';
import { eventually } from '../support/wait.ts';
import { makeAudio, sha256OfFile } from '../support/media.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { MediaFile, MediaItem } from '../../api/src/media/entities.ts';
import type { LocalJobRunner } from '../../api/src/jobs/local-runner.ts';

describe('content addressing: identical uploads completing at once are stored once', function () {
  this.timeout(120_000);
  let app: TestApp;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-content-addressed-'));
    app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '2' });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const em = () => app.services.orm.em.fork();
  type Upload = Awaited<ReturnType<typeof storedFile>>;
  // each call makes new bytes (makeAudio tags every file), so rounds never fold onto each other's files
  async function twinUploads(name: string): Promise<{ path: string; uploads: [Upload, Upload] }> {
    const path = await makeAudio(dir, name, { seconds: 1 });
    const uploads = await Promise.all([storedFile(app.services, path, 'audio/mp4'), storedFile(app.services, path, 'audio/mp4')]);
    return { path, uploads };
  }

  /** Asserts the settled state: one UPLOADED file holding both items, both owners told, the other file and its objects gone. */
  async function expectFolded(uploads: [Upload, Upload], sha256: string, listeners: Awaited<ReturnType<typeof listenToUser>>[], loserObjects: (loserId: string) => string[]) {
    const files = await em().find(MediaFile, { sha256Hash: sha256 });
    expect(files.map((file) => file.status), 'exactly one file for the content').to.deep.equal(['UPLOADED']);
    const winner = files[0]!;
    expect([uploads[0].file.id, uploads[1].file.id]).to.include(winner.id);
    const loser = uploads.find((upload) => upload.file.id !== winner.id)!;
    expect(await em().findOne(MediaFile, loser.file.id), 'the other file row is gone').to.equal(null);
    const items = await em().find(MediaItem, { id: { $in: uploads.map((upload) => upload.item.id) } });
    expect(items.map((item) => item.file.id)).to.deep.equal([winner.id, winner.id]);
    for (const [index, upload] of uploads.entries()) {
      // each owner hears the file id their client was given, never the twin's (issue 22 item 11)
      const ready = await listeners[index]!.next('media_ready');
      expect(ready.data).to.include({ media_file_uuid: upload.file.id, media_item_uuid: upload.item.id });
      expect(listeners[index]!.events.filter((event) => event.type === 'media_failed')).to.have.lengthOf(0);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    // and only once: the earlier uploader is not told again when the later upload folds onto their file
    for (const listener of listeners) expect(listener.events.filter((event) => event.type === 'media_ready')).to.have.lengthOf(1);
    expect(await app.services.storage.sizeOf(winner.storageKey)).to.be.greaterThan(0);
    // the loser's objects go after the commit
    for (const key of loserObjects(loser.file.id)) {
      await eventually(async () => ((await app.services.storage.sizeOf(key)) === null ? true : undefined), `object ${key} deleted`, 10_000);
    }
  }

  it('two completions of the same content run concurrently, round after round: one UPLOADED file, both items on it, each owner hears media_ready once naming the file they uploaded, the other file\'s objects deleted', async () => {
    for (let round = 0; round < 6; round += 1) {
      const { path, uploads } = await twinUploads(`race-${round}.m4a`);
      const sha256 = await sha256OfFile(path);
      const listeners = await Promise.all(uploads.map((upload) => listenToUser(app.services.bus, upload.userId)));
      try {
        const jobs = uploads.map((upload) => {
          const id = randomUUID();
          return { id, upload, prefix: `jobs/artifact/${id}` };
        });
        const tx = em();
        for (const { id, upload, prefix } of jobs) {
          tx.create(Job, { id, kind: 'ArtifactJob', program: 'artifact', userId: upload.userId, mediaFileId: upload.file.id, input: {}, outputPrefix: prefix, status: 'running' });
          await app.services.storage.client.send(new PutObjectCommand({ Bucket: app.services.storage.bucket, Key: `${prefix}/thumbnail.jpg`, Body: 'thumb' }));
        }
        await tx.flush();
        const resultFor = (prefix: string) => ({
          sha256,
          size_bytes: 1,
          kind: 'audio',
          duration_ms: 1000,
          width: null,
          height: null,
          has_audio: true,
          video_codec: null,
          audio_codec: 'aac',
          container: 'mov,mp4,m4a,3gp,3g2,mj2',
          proxy_status: 'not_applicable',
          artifacts: { waveform_key: null, thumbnail_key: `${prefix}/thumbnail.jpg`, audio_key: null },
        });
        const settled = await Promise.all(jobs.map(({ id, prefix }) => app.services.completion.complete(id, { ok: true, result: resultFor(prefix) })));
        expect(settled).to.deep.equal([true, true]);
        const prefixOf = (fileId: string) => jobs.find((job) => job.upload.file.id === fileId)!.prefix;
        await expectFolded(uploads, sha256, listeners, (loserId) => [`media/${loserId}/source`, `${prefixOf(loserId)}/thumbnail.jpg`]);
      } finally {
        await Promise.all(listeners.map((listener) => listener.close()));
      }
    }
  });

  it('two artifact jobs of the same content submitted at once on the local backend end as one UPLOADED file', async () => {
    const { path, uploads } = await twinUploads('jobs.m4a');
    const listeners = await Promise.all(uploads.map((upload) => listenToUser(app.services.bus, upload.userId)));
    try {
      const jobs = await Promise.all(
        uploads.map((upload) =>
          app.services.jobs.submit(em(), { program: 'artifact', userId: upload.userId, mediaFileId: upload.file.id, input: { sourceKey: upload.key, contentType: 'audio/mp4' } }),
        ),
      );
      await eventually(async () => ((await em().count(Job, { id: { $in: jobs.map((job) => job.id) }, completedAt: { $ne: null } })) === 2 ? true : undefined), 'both artifact jobs settled', 60_000);
      await (app.services.dispatcher as LocalJobRunner).idle();
      await expectFolded(uploads, await sha256OfFile(path), listeners, (loserId) => [`media/${loserId}/source`]);
    } finally {
      await Promise.all(listeners.map((listener) => listener.close()));
    }
  });

  it('the database refuses a second UPLOADED file with the same sha256 (FAILED and PROCESSING twins are allowed)', async () => {
    const sha256 = randomUUID().replaceAll('-', '').repeat(2);
    const row = (status: 'UPLOADED' | 'FAILED' | 'PROCESSING') => {
      const id = randomUUID();
      return { id, uploaderId: randomUUID(), status, storageKey: `media/${id}/source`, contentType: 'audio/mp4', originalFilename: 'clip', declaredSizeBytes: 1, sizeBytes: 1, sha256Hash: sha256, createdAt: new Date(), updatedAt: new Date() };
    };
    await em().insert(MediaFile, row('UPLOADED'));
    await em().insert(MediaFile, row('FAILED'));
    const processing = row('PROCESSING');
    await em().insert(MediaFile, processing);
    let refused: unknown = null;
    try {
      await em().insert(MediaFile, row('UPLOADED'));
    } catch (error) {
      refused = error;
    }
    expect(refused).to.be.instanceOf(UniqueConstraintViolationException);
    expect(String((refused as Error).message)).to.include('media_files_sha256_hash_uploaded_unique');
    refused = null;
    try {
      await em().nativeUpdate(MediaFile, { id: processing.id }, { status: 'UPLOADED' });
    } catch (error) {
      refused = error;
    }
    expect(refused, 'moving a twin to UPLOADED is refused too').to.be.instanceOf(UniqueConstraintViolationException);
  });
});
