import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { listenToUser } from '../support/events.ts';
import { makeVideo } from '../support/media.ts';
import { chargeStorage, storageUsed } from '../../api/src/accounts/storage-usage.ts';
import { MediaFile, MediaItem } from '../../api/src/media/entities.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { eventually } from '../support/wait.ts';

/** A local double of the Mux endpoints the importer uses: playback id → asset → asset, and the MP4 rendition. */
async function startMuxDouble(assets: Record<string, { assetId: string; duration: number; title: string; mp4?: Buffer }>, mp4: Buffer) {
  const downloads: string[] = [];
  /** Downloads of these playback ids wait until the gate opens (the import stays processing). */
  const gates = new Map<string, Promise<void>>();
  /** Paths answered with a redirect to the given location. */
  const redirects = new Map<string, string>();
  const answer = async (request: IncomingMessage, response: ServerResponse) => {
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
    const redirect = redirects.get(path);
    if (redirect) {
      response.writeHead(302, { location: redirect });
      return response.end();
    }
    match = /^\/(\w+)\/highest\.mp4$/.exec(path);
    if (match && assets[match[1]!]) {
      downloads.push(match[1]!);
      await gates.get(match[1]!);
      const bytes = assets[match[1]!]!.mp4 ?? mp4;
      response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': bytes.length });
      return response.end(bytes);
    }
    reply(404, { error: { type: 'not_found' } });
  };
  // A failure of the double shows in the log and as a reset connection, not as an unhandled rejection.
  const server: Server = createServer((request, response) => {
    answer(request, response).catch((error: unknown) => {
      console.error('the Mux double failed:', error);
      response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  /** Holds the downloads of `playbackId` until the returned function is called. */
  const hold = (playbackId: string) => {
    let open!: () => void;
    gates.set(playbackId, new Promise<void>((resolve) => (open = resolve)));
    return () => {
      gates.delete(playbackId);
      open();
    };
  };
  return { origin, downloads, hold, redirects, close: () => new Promise((resolve) => server.close(resolve)) };
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
    // distinct bytes per asset: identical content would be folded onto one file by sha256
    const own = async (name: string) => readFile(await makeVideo(dir, name, { seconds: 1, width: 160, height: 90 }));
    const twin = await own('twin.mp4');
    mux = await startMuxDouble(
      {
        PlaybackShort0001: { assetId: 'AssetShort0001', duration: 2.0, title: 'Short clip' },
        PlaybackLong00001: { assetId: 'AssetLong00001', duration: 3601.5, title: 'Long talk' },
        PlaybackProject01: { assetId: 'AssetProject01', duration: 1.0, title: 'Project clip', mp4: await own('project.mp4') },
        PlaybackRace00001: { assetId: 'AssetRace00001', duration: 1.0, title: 'Raced clip', mp4: await own('race.mp4') },
        PlaybackCharge001: { assetId: 'AssetCharge001', duration: 1.0, title: 'Charged clip', mp4: await own('charge.mp4') },
        // two assets of the host holding the same bytes: the second import folds onto the first's file
        PlaybackTwinA0001: { assetId: 'AssetTwinA0001', duration: 1.0, title: 'Twin A', mp4: twin },
        PlaybackTwinB0001: { assetId: 'AssetTwinB0001', duration: 1.0, title: 'Twin B', mp4: twin },
        PlaybackNulTitle1: { assetId: 'AssetNulTitle1', duration: 1.0, title: 'Nul\u0000title\u0007 ', mp4: await own('nul.mp4') },
        PlaybackLongTitle: { assetId: 'AssetLongTitle', duration: 1.0, title: `${'é'.repeat(300)}`, mp4: await own('long-title.mp4') },
        PlaybackAway00001: { assetId: 'AssetAway00001', duration: 1.0, title: 'Redirected away', mp4: await own('away.mp4') },
        PlaybackHop000001: { assetId: 'AssetHop000001', duration: 1.0, title: 'Redirected within', mp4: await own('hop.mp4') },
        PlaybackHopTarget: { assetId: 'AssetHopTarget', duration: 1.0, title: 'Hop target', mp4: await own('hop-target.mp4') },
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

  /** Imports and waits for the importer's media_ready; the 202 body. */
  async function importReady(who: SignedIn, playbackId: string) {
    const events = await listenToUser(app.services.bus, who.user.id);
    try {
      const accepted = await json(await importUrl(who, playbackId));
      await events.next('media_ready');
      return accepted;
    } finally {
      await events.close();
    }
  }

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

  it('import with scope project → the item in the caller\'s project with a SINGLE canvas (CANVAS_FILL) at the end of the spine; another user\'s project → 404', async () => {
    const project = await json(await admin.client.post('/api/v1/projects/', { name: 'Imports' }));
    const upload = await admin.client.post('/api/v1/media/presign', { filename: 'a.png', content_type: 'image/png', size_bytes: 10, scope: 'project', scope_project_id: project.uuid });
    const uploaded = await json(upload);
    const events = await listenToUser(app.services.bus, admin.user.id);
    try {
      const first = await json(await importUrl(admin, 'PlaybackProject01', { scope: 'project', scope_project_id: project.uuid }));
      expect(first.deduplicated).to.equal(false);
      await events.next('media_ready');
      const second = await importUrl(admin, 'PlaybackProject01', { scope: 'project', scope_project_id: project.uuid });
      expect(second.status).to.equal(202);
      const deduplicated = await json(second);
      expect(deduplicated).to.include({ media_file_id: first.media_file_id, deduplicated: true });

      const spine = (await json(await admin.client.get(`/api/v1/projects/${project.uuid}/spine`))).data;
      expect(spine.map((s: { media_item_id: string }) => s.media_item_id)).to.deep.equal([uploaded.media_item_id, first.media_item_id, deduplicated.media_item_id]);
      expect(spine.map((s: { sequence_position: number }) => s.sequence_position)).to.deep.equal([0, 1, 2]);
      const canvases = (await json(await admin.client.get(`/api/v1/projects/${project.uuid}/canvases`))).data;
      expect(canvases.map((c: { type: string }) => c.type)).to.deep.equal(['SINGLE', 'SINGLE', 'SINGLE']);
      expect(canvases[1].media).to.deep.equal([{ media_item_id: first.media_item_id, role: 'CANVAS_FILL' }]);
      const item = await app.services.orm.em.fork().findOneOrFail(MediaItem, first.media_item_id);
      expect([item.scope, item.scopeProjectId]).to.deep.equal(['project', project.uuid]);
    } finally {
      await events.close();
    }

    const stranger = await signUpAndLogin(app);
    const theirs = await json(await stranger.client.post('/api/v1/projects/', { name: 'Theirs' }));
    const refused = await importUrl(admin, 'PlaybackProject01', { scope: 'project', scope_project_id: theirs.uuid });
    expect(refused.status).to.equal(404);
    expect((await importUrl(admin, 'PlaybackProject01', { scope: 'library', scope_project_id: project.uuid })).status, 'a project id with library scope').to.equal(422);
    expect((await importUrl(admin, 'PlaybackProject01', { scope: 'project' })).status, 'project scope without a project id').to.equal(422);
  });

  it('concurrent imports of the same external id create one file: the loser of the race dedupes onto it (202 deduplicated true)', async () => {
    const racer = await signUpAndLogin(app, { superuser: true });
    const events = await listenToUser(app.services.bus, racer.user.id);
    try {
      const answers = await Promise.all([1, 2, 3].map(() => importUrl(racer, 'PlaybackRace00001')));
      expect(answers.map((answer) => answer.status)).to.deep.equal([202, 202, 202]);
      const bodies = await Promise.all(answers.map((answer) => json(answer)));
      expect(new Set(bodies.map((body) => body.media_file_id)).size, 'one file').to.equal(1);
      expect(bodies.filter((body) => !body.deduplicated)).to.have.length(1);
      expect(new Set(bodies.map((body) => body.media_item_id)).size, 'an item each').to.equal(3);
      expect(await app.services.orm.em.fork().count(MediaFile, { externalVideoId: 'mux:AssetRace00001' })).to.equal(1);
      await events.next('media_ready');
      expect(mux.downloads.filter((id) => id === 'PlaybackRace00001')).to.have.length(1);
      const em = app.services.orm.em.fork();
      const size = (await em.findOneOrFail(MediaFile, bodies[0].media_file_id)).sizeBytes!;
      const items = await em.find(MediaItem, { id: { $in: bodies.map((body) => body.media_item_id) } });
      expect(items.map((item) => item.chargedBytes), 'items deduplicated while processing are charged at completion').to.deep.equal([size, size, size]);
      expect(await storageUsed(em, racer.user.id)).to.equal(3 * size);
    } finally {
      await events.close();
    }
  });

  it('the database holds one live file per external id; a FAILED one does not count', async () => {
    const em = app.services.orm.em.fork();
    const file = (status: 'FAILED' | 'PROCESSING') =>
      em.create(MediaFile, { id: randomUUID(), uploaderId: admin.user.id, status, storageKey: `media/${randomUUID()}/imported`, contentType: 'video/mp4', originalFilename: 'x.mp4', declaredSizeBytes: 0, externalVideoId: 'mux:AssetUnique0001' });
    file('FAILED');
    file('PROCESSING');
    await em.flush();
    file('PROCESSING');
    await em.flush().then(
      () => expect.fail('a second live file with the same external id was stored'),
      (error: Error) => expect(error.name).to.equal('UniqueConstraintViolationException'),
    );
  });

  it('a deduplicated import item is charged the file\'s size, as a second uploader of identical content is; over quota → 422 and nothing created; deleting it refunds the charge', async () => {
    const importer = await signUpAndLogin(app, { superuser: true });
    const em = () => app.services.orm.em.fork();
    const used = () => storageUsed(em(), importer.user.id);
    const first = await importReady(importer, 'PlaybackCharge001');
    const size = (await em().findOneOrFail(MediaFile, first.media_file_id)).sizeBytes!;
    expect(size).to.be.greaterThan(0);
    expect(await used()).to.equal(size);

    const again = await json(await importUrl(importer, 'PlaybackCharge001'));
    expect(again).to.include({ media_file_id: first.media_file_id, deduplicated: true });
    expect((await em().findOneOrFail(MediaItem, again.media_item_id)).chargedBytes).to.equal(size);
    expect(await used()).to.equal(2 * size);

    const quota = (await app.services.billing.limitsOf(em(), importer.user.id)).storageQuotaBytes;
    await chargeStorage(em(), importer.user.id, quota - 2 * size - size + 1, quota);
    const before = await used();
    const refused = await importUrl(importer, 'PlaybackCharge001');
    expect(refused.status).to.equal(422);
    expect(await json(refused)).to.include({ code: 'ValidationError' });
    expect(await used()).to.equal(before);
    expect(await em().count(MediaItem, { userId: importer.user.id })).to.equal(2);

    expect((await importer.client.delete(`/api/v1/media/${again.media_item_id}`)).status).to.equal(204);
    expect(await used()).to.equal(before - size);
    expect(await em().findOne(MediaFile, first.media_file_id), 'the file stays for the first item').to.not.equal(null);
  });

  describe('an import whose bytes are already stored, deduplicated onto while still processing', () => {
    it('every item ends uploaded on the one stored file, each charged to its owner (storage_used_bytes exact); the second job succeeds', async () => {
      const [first, second] = await Promise.all([signUpAndLogin(app, { superuser: true }), signUpAndLogin(app, { superuser: true })]);
      const em = () => app.services.orm.em.fork();
      const stored = await importReady(first, 'PlaybackTwinA0001');
      const release = mux.hold('PlaybackTwinB0001');
      let twin, joined;
      try {
        twin = await json(await importUrl(first, 'PlaybackTwinB0001'));
        expect(twin.deduplicated).to.equal(false);
        joined = await json(await importUrl(second, 'PlaybackTwinB0001'));
        expect(joined).to.include({ media_file_id: twin.media_file_id, deduplicated: true });
        expect((await em().findOneOrFail(MediaFile, twin.media_file_id)).status, 'still processing when deduplicated onto').to.equal('PROCESSING');
      } finally {
        release();
      }
      const itemIds = [stored.media_item_id, twin.media_item_id, joined.media_item_id];
      const items = await eventually(async () => {
        const found = await em().find(MediaItem, { id: { $in: itemIds } }, { populate: ['file'] });
        return found.length === 3 && found.every((item) => item.file.status === 'UPLOADED') && found.every((item) => item.file.id === stored.media_file_id) ? found : undefined;
      }, 'the three items uploaded on the first file');
      const file = items[0]!.file;
      expect(items.map((item) => item.chargedBytes)).to.deep.equal([file.sizeBytes, file.sizeBytes, file.sizeBytes]);
      for (const user of [first, second]) {
        const charged = (await em().find(MediaItem, { userId: user.user.id })).reduce((sum, item) => sum + item.chargedBytes, 0);
        expect(await storageUsed(em(), user.user.id), 'storage_used_bytes of each owner').to.equal(charged);
      }
      expect(await storageUsed(em(), first.user.id)).to.equal(2 * file.sizeBytes!);
      expect(await em().count(MediaFile, { sha256Hash: file.sha256Hash }), 'one stored file').to.equal(1);
      expect(await em().findOne(MediaFile, twin.media_file_id)).to.equal(null);
      const [job] = await em().find(Job, { program: 'media-import', mediaFileId: twin.media_file_id });
      expect([job?.status, job?.completedAt ? 'completed' : 'open']).to.deep.equal(['succeeded', 'completed']);
      expect(await app.services.storage.sizeOf(`${job!.outputPrefix}/imported.mp4`), "the folded import's object deleted").to.equal(null);
    });
  });

  it('a NUL (or other control character) in the host\'s title is stripped, not a 500: the item is named without it', async () => {
    const response = await importUrl(admin, 'PlaybackNulTitle1');
    expect(response.status, await response.clone().text()).to.equal(202);
    const { media_item_id: itemId } = await json(response);
    const view = await json(await admin.client.get(`/api/v1/media/${itemId}`));
    expect(view.display_name).to.equal('Nultitle');
    // eslint-disable-next-line no-control-regex -- the control characters are what must be gone
    expect(view.original_filename).to.not.match(/[\u0000-\u001f]/);
  });

  it("a host's title longer than an item's display name (255 characters) is cut, not a 500", async () => {
    const response = await importUrl(admin, 'PlaybackLongTitle');
    expect(response.status, await response.clone().text()).to.equal(202);
    const view = await json(await admin.client.get(`/api/v1/media/${(await json(response)).media_item_id}`));
    expect(view.display_name).to.equal('é'.repeat(255));
  });

  describe('the download follows redirects only within the host\'s download origin', () => {
    let elsewhere: Server;
    let elsewhereHits = 0;
    let elsewhereOrigin: string;
    before(async () => {
      elsewhere = createServer((_request, response) => {
        elsewhereHits++;
        response.writeHead(200, { 'content-type': 'video/mp4' });
        response.end('not a video');
      });
      await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
      // another origin on the same machine (another port): as foreign as another host
      elsewhereOrigin = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
    });
    after(() => new Promise((resolve) => elsewhere.close(resolve)));

    it('a redirect to another origin → the import fails (media_failed naming the host), nothing fetched there', async () => {
      mux.redirects.set('/PlaybackAway00001/highest.mp4', `${elsewhereOrigin}/internal/secret.mp4`);
      const importer = await signUpAndLogin(app, { superuser: true });
      const events = await listenToUser(app.services.bus, importer.user.id);
      try {
        const accepted = await json(await importUrl(importer, 'PlaybackAway00001'));
        const failed = await events.next('media_failed');
        expect(failed.data).to.include({ media_item_uuid: accepted.media_item_id });
        expect((failed.data as { error: string }).error).to.include(new URL(elsewhereOrigin).host).and.match(/redirect/i);
        const file = await app.services.orm.em.fork().findOneOrFail(MediaFile, accepted.media_file_id);
        expect([file.status, file.errorCode]).to.deep.equal(['FAILED', 'import.redirect_refused']);
        expect(elsewhereHits).to.equal(0);
      } finally {
        await events.close();
      }
    });

    it('a redirect within the download origin is followed', async () => {
      mux.redirects.set('/PlaybackHop000001/highest.mp4', '/PlaybackHopTarget/highest.mp4');
      await importReady(await signUpAndLogin(app, { superuser: true }), 'PlaybackHop000001');
      expect(mux.downloads).to.include('PlaybackHopTarget');
    });
  });
});
