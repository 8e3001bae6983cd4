import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';
import { eventually, fileWhen } from '../support/wait.ts';
import { listenToUser } from '../support/events.ts';
import { makeVideo } from '../support/media.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { MediaFile, MediaItem } from '../../api/src/media/entities.ts';

describe('media cleanup: deleting a file removes every object its jobs made', function () {
  this.timeout(90_000);
  let app: TestApp;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-media-cleanup-'));
    app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '2' });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const em = () => app.services.orm.em.fork();

  /** Every key under the prefixes, listed at the store. */
  async function objectsUnder(prefixes: string[]): Promise<string[]> {
    const { client, bucket } = app.services.storage;
    const keys: string[] = [];
    for (const prefix of prefixes) {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      keys.push(...(page.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : [])));
    }
    return keys;
  }

  it('deleting the last item of a non-web-compatible file removes its source, artifacts, proxy and sprite, and everything under its jobs\' prefixes (artifact, proxy, media-edit)', async () => {
    const account = await signUpAndLogin(app);
    const clip = await makeVideo(dir, 'clip.webm', { codec: 'vp9', seconds: 2, fps: 15, width: 320, height: 180 });
    const events = await listenToUser(app.services.bus, account.user.id);
    let uploaded;
    let editedItemId: string;
    try {
      uploaded = await uploadMedia(account.client, clip, { contentType: 'video/webm' });
      await events.next('media_ready');
      const edit = await account.client.post(`/api/v1/media/${uploaded.mediaItemId}/edit`, { extract_audio: false, save_mode: 'copy', fast_mode: false, start_ms: 500 });
      expect(edit.status).to.equal(202);
      editedItemId = (await json(edit)).new_media_item_uuid;
      // next() answers the first event of a type, so wait for the edit's own media_ready
      await eventually(
        async () => events.events.find((event) => event.type === 'media_ready' && event.data.media_item_uuid === editedItemId),
        'media_ready for the edited item',
      );
    } finally {
      await events.close();
    }
    const source = await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.proxyStatus !== 'pending');
    expect(source.proxyStatus).to.equal('ready');
    const editedFileId = (await em().findOneOrFail(MediaItem, editedItemId)).file.id;

    for (const [itemId, fileId, programs] of [
      [uploaded.mediaItemId, uploaded.mediaFileId, ['artifact', 'proxy']],
      [editedItemId, editedFileId, ['media-edit']],
    ] as const) {
      const jobs = await em().find(Job, { mediaFileId: fileId });
      expect(jobs.map((job) => job.program)).to.include.members([...programs]);
      const file = await em().findOneOrFail(MediaFile, fileId);
      const prefixes = [`media/${fileId}/`, ...jobs.map((job) => `${job.outputPrefix}/`)];
      const keys = [file.storageKey, file.thumbnailKey, file.audioKey, file.proxyKey, file.spriteKey].filter((key): key is string => Boolean(key));
      expect(await objectsUnder(prefixes), 'objects exist before the delete').to.not.be.empty;

      expect((await account.client.delete(`/api/v1/media/${itemId}`)).status).to.equal(204);
      expect(await objectsUnder(prefixes), `nothing left of ${programs.join(', ')}`).to.deep.equal([]);
      for (const key of keys) expect(await app.services.storage.sizeOf(key), key).to.equal(null);
    }
  });

  it('a proxy job finishing after its file was deleted removes its own proxy and sprite', async () => {
    const jobId = randomUUID();
    const prefix = `jobs/proxy/${jobId}`;
    const { client, bucket } = app.services.storage;
    for (const name of ['proxy.mp4', 'sprite.jpg']) await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/${name}`, Body: 'x' }));
    const row = em();
    row.create(Job, { id: jobId, kind: 'ArtifactJob', program: 'proxy', userId: randomUUID(), mediaFileId: randomUUID(), input: {}, outputPrefix: prefix, status: 'running' });
    await row.flush();
    const sprite = { tile_width_px: 160, tile_height_px: 90, tiles_per_row: 1, total_tiles: 1, seconds_per_tile: 1 };
    expect(await app.services.completion.complete(jobId, { ok: true, result: { proxy_key: `${prefix}/proxy.mp4`, sprite_key: `${prefix}/sprite.jpg`, sprite } })).to.equal(true);
    expect(await objectsUnder([`${prefix}/`])).to.deep.equal([]);
  });
});
