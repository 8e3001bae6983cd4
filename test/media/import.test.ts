import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { listenToUser } from '../support/events.ts';
import { makeVideo } from '../support/media.ts';
import { MediaFile, MediaItem } from '../../api/src/media/entities.ts';

/** A local double of the Mux endpoints the importer uses: playback id → asset → asset, and the MP4 rendition. */
async function startMuxDouble(assets: Record<string, { assetId: string; duration: number; title: string }>, mp4: Buffer) {
  const downloads: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '';
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    let match = /^\/video\/v1\/playback-ids\/(\w+)$/.exec(path);
    if (match) {
      const asset = assets[match[1]!];
      return asset ? reply(200, { data: { id: match[1], policy: 'public', object: { type: 'asset', id: asset.assetId } } }) : reply(404, { error: { type: 'not_found', messages: ['Not found'] } });
    }
    match = /^\/video\/v1\/assets\/(\w+)$/.exec(path);
    const asset = match && Object.values(assets).find((candidate) => candidate.assetId === match![1]);
    if (asset) return reply(200, { data: { id: asset.assetId, status: 'ready', duration: asset.duration, meta: { title: asset.title } } });
    match = /^\/(\w+)\/highest\.mp4$/.exec(path);
    if (match && assets[match[1]!]) {
      downloads.push(match[1]!);
      response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': mp4.length });
      return response.end(mp4);
    }
    reply(404, { error: { type: 'not_found' } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, downloads, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('external video import: POST /media/videohost (Mux)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let dir: string;
  let mux: Awaited<ReturnType<typeof startMuxDouble>>;
  let admin: SignedIn;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-import-'));
    const mp4 = await readFile(await makeVideo(dir, 'hosted.mp4', { seconds: 2, width: 160, height: 90 }));
    mux = await startMuxDouble(
      {
        PlaybackShort0001: { assetId: 'AssetShort0001', duration: 2.0, title: 'Short clip' },
        PlaybackLong00001: { assetId: 'AssetLong00001', duration: 3601.5, title: 'Long talk' },
      },
      mp4,
    );
    app = await startTestApp({ JOB_BACKEND: 'local', MUX_API_BASE: mux.origin, MUX_TOKEN_ID: 'token-id', MUX_TOKEN_SECRET: 'token-secret', MAX_EXTERNAL_VIDEO_DURATION_SECONDS: '3600' });
    admin = await signUpAndLogin(app, { superuser: true });
  });
  after(async () => {
    await app.close();
    await mux.close();
    await rm(dir, { recursive: true, force: true });
  });

  const importUrl = (who: SignedIn, playbackId: string, extra: Record<string, unknown> = {}) =>
    who.client.post('/api/v1/media/videohost', { url: `${mux.origin}/${playbackId}.m3u8`, scope: 'library', ...extra });

  it('a non-superuser → 403', async () => {
    const user = await signUpAndLogin(app);
    expect((await importUrl(user, 'PlaybackShort0001')).status).to.equal(403);
  });

  it('duration beyond MAX_EXTERNAL_VIDEO_DURATION_SECONDS → 422 with a clear message', async () => {
    const response = await importUrl(admin, 'PlaybackLong00001');
    expect(response.status).to.equal(422);
    expect((await json(response)).detail).to.match(/3602 s.*3600 s/);
  });

  it('metadata that cannot be fetched → 422', async () => {
    const response = await importUrl(admin, 'PlaybackMissing01');
    expect(response.status).to.equal(422);
    expect((await json(response)).detail).to.match(/could not be fetched from Mux/);
  });

  it('a URL that is not a Mux video → 422', async () => {
    const response = await admin.client.post('/api/v1/media/videohost', { url: 'https://example.com/video.mp4', scope: 'library' });
    expect(response.status).to.equal(422);
  });

  it('success → 202 then media_ready; the same external id again → deduplicated true with no new download', async () => {
    const events = await listenToUser(app.services.bus, admin.user.id);
    try {
      const response = await importUrl(admin, 'PlaybackShort0001', { display_name: 'Imported', tags: ['b-roll'] });
      expect(response.status).to.equal(202);
      const first = await json(response);
      expect(first.deduplicated).to.equal(false);
      const ready = await events.next('media_ready');
      expect(ready.data).to.include({ media_file_uuid: first.media_file_id, media_item_uuid: first.media_item_id, display_name: 'Imported' });
      const em = app.services.orm.em.fork();
      const file = await em.findOneOrFail(MediaFile, first.media_file_id);
      expect([file.status, file.externalVideoId, file.kind]).to.deep.equal(['UPLOADED', 'mux:AssetShort0001', 'video']);
      expect(file.durationMs).to.be.closeTo(2000, 150);
      expect(await app.services.storage.sizeOf(file.storageKey)).to.equal(file.sizeBytes);
      expect(mux.downloads).to.deep.equal(['PlaybackShort0001']);

      const again = await importUrl(admin, 'PlaybackShort0001');
      expect(again.status).to.equal(202);
      const second = await json(again);
      expect(second).to.deep.include({ media_file_id: first.media_file_id, deduplicated: true });
      expect(second.media_item_id).to.not.equal(first.media_item_id);
      expect((await app.services.orm.em.fork().findOneOrFail(MediaItem, second.media_item_id)).file.id).to.equal(first.media_file_id);
      expect(mux.downloads).to.have.length(1);
    } finally {
      await events.close();
    }
  });
});
