import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { json, startTestApp, type TestApp, failCloseOnContractViolations } from '../support/harness.ts';
import { mb } from '../../hack/fixtures/units.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { listenToUser } from '../support/events.ts';
import { makeAudio, makeImage, makeVideo } from '../support/media.ts';
import { putBytes, uploadMedia } from '../support/media-upload.ts';
import { chargeStorage, storageUsed } from '../../api/src/accounts/storage-usage.ts';
import { MediaFile, MediaItem } from '../../api/src/media/entities.ts';
import { reconcileStorage } from '../../api/src/media/storage-reconciliation.ts';
import { createUploads } from '../../api/src/media/uploads/feature.ts';

const FREE_QUOTA = mb(500);

describe('media uploads: single PUT (presign and confirm), content addressing and delete accounting', function () {
  this.timeout(60_000);
  let app: TestApp;
  let dir: string;
  let clip: string;
  let clipSize: number;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-uploads-'));
    app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '2' });
    // Every answer of this file is checked against the served document; a violation fails the close (after).
    await failCloseOnContractViolations(app);
    clip = await makeVideo(dir, 'clip.mp4', { seconds: 1 });
    clipSize = (await stat(clip)).size;
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const em = () => app.services.orm.em.fork();
  const used = (account: SignedIn) => storageUsed(em(), account.user.id);
  const stored = (fileId: string) => app.services.storage.sizeOf(`media/${fileId}/source`);
  const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
  const objectBytes = async (key: string) => {
    const answer = await app.services.storage.client.send(new GetObjectCommand({ Bucket: app.services.storage.bucket, Key: key }));
    return answer.Body!.transformToByteArray();
  };
  const presignBody = (overrides: Record<string, unknown> = {}) => ({ filename: 'clip.mp4', content_type: 'video/mp4', size_bytes: clipSize, scope: 'library', ...overrides });

  it('presign → PUT → confirm → media_ready: the file is UPLOADED and storage_used_bytes grows by the real size', async () => {
    const account = await signUpAndLogin(app);
    const events = await listenToUser(app.services.bus, account.user.id);
    try {
      const presigned = await account.client.post('/api/v1/media/presign', presignBody({ display_name: 'Intro' }));
      expect(presigned.status).to.equal(201);
      const body = await json(presigned);
      expect(body).to.have.keys('media_file_id', 'media_item_id', 'upload_url', 'content_type', 'expires_in');
      expect(body).to.include({ content_type: 'video/mp4', expires_in: 3600 });
      expect(body.upload_url, 'the URL writes the upload\'s staging key, never the object the service serves').to.include(`uploads/${body.media_file_id}/`);
      expect(body.upload_url).to.not.include(`media/${body.media_file_id}/source`);
      await putBytes(body.upload_url, await readFile(clip), 'video/mp4');
      const confirmed = await account.client.post(`/api/v1/media/${body.media_file_id}/confirm`);
      expect(confirmed.status).to.equal(200);
      const read = await json(confirmed);
      expect(read).to.include({ id: body.media_file_id, status: 'PROCESSING', size_bytes: clipSize, content_type: 'video/mp4', duration_ms: null });
      expect(read, 'the MediaFile resource\'s fields').to.include({ external_video_id: null, waveform_json: null, thumbnail_key: null, audio_key: null });
      expect(await used(account)).to.equal(clipSize);
      const ready = await events.next('media_ready');
      expect(ready.data).to.include({ media_file_uuid: body.media_file_id, media_item_uuid: body.media_item_id, display_name: 'Intro' });
      const file = await em().findOneOrFail(MediaFile, body.media_file_id);
      expect(file.status).to.equal('UPLOADED');
      expect(file.durationMs).to.be.greaterThan(0);

      const again = await account.client.post(`/api/v1/media/${body.media_file_id}/confirm`);
      expect(again.status, 'a double confirm is idempotent').to.equal(200);
      expect(await json(again)).to.include({ status: 'UPLOADED', size_bytes: clipSize });
      expect(await used(account), 'and charges nothing more').to.equal(clipSize);
    } finally {
      await events.close();
    }
  });

  it('confirm over quota: the object is deleted, the request fails with 400 ValidationError, accounting unchanged', async () => {
    const account = await signUpAndLogin(app);
    const { mediaFileId, url } = await presignAndPut(account, clip, 'video/mp4');
    await chargeStorage(em(), account.user.id, FREE_QUOTA - clipSize + 1, FREE_QUOTA);
    const before = await used(account);
    const confirmed = await account.client.post(`/api/v1/media/${mediaFileId}/confirm`);
    expect(confirmed.status).to.equal(400);
    expect(await json(confirmed)).to.include({ code: 'ValidationError' });
    expect(url).to.be.a('string');
    expect(await stored(mediaFileId)).to.equal(null);
    expect(await used(account)).to.equal(before);
    expect((await em().findOneOrFail(MediaFile, mediaFileId)).status).to.equal('FAILED');
  });

  it('quota under concurrency: two confirms racing for the last bytes cannot both pass', async () => {
    const account = await signUpAndLogin(app);
    const audio = await makeAudio(dir, 'race.m4a', { seconds: 1 });
    const image = await makeImage(dir, 'race.png');
    const a = await presignAndPut(account, audio, 'audio/mp4');
    const b = await presignAndPut(account, image, 'image/png');
    const sizes = [(await stat(audio)).size, (await stat(image)).size];
    // room for the larger of the two, not for both
    await chargeStorage(em(), account.user.id, FREE_QUOTA - Math.max(...sizes), FREE_QUOTA);
    const before = await used(account);
    const answers = await Promise.all([a, b].map((upload) => account.client.post(`/api/v1/media/${upload.mediaFileId}/confirm`)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).to.deep.equal([200, 400]);
    const winner = answers[0]!.status === 200 ? 0 : 1;
    expect(await used(account)).to.equal(before + sizes[winner]!);
    expect(await used(account)).to.be.at.most(FREE_QUOTA);
  });

  it('bad input gets a clear 4xx and leaves storage accounting unchanged', async () => {
    const account = await signUpAndLogin(app);
    const other = await signUpAndLogin(app);
    await uploadMedia(account.client, clip, { contentType: 'video/mp4' });
    const before = await used(account);
    const cases: [string, Record<string, unknown>, number][] = [
      ['path tricks in the file name', { filename: '../../etc/passwd' }, 422],
      ['folders in the file name', { filename: 'a\\b.mp4' }, 422],
      ['a control character in the file name', { filename: 'a\u0000.mp4' }, 422],
      ['a content type outside the allow-list', { content_type: 'application/x-msdownload' }, 422],
      ['text disguised as video', { content_type: 'text/html' }, 422],
      ['a negative size', { size_bytes: -1 }, 422],
      ['a zero size', { size_bytes: 0 }, 422],
      ['a non-integer size', { size_bytes: 10.5 }, 422],
      ['a size given as a string', { size_bytes: '100' }, 422],
      ['a huge size (beyond the per-file maximum)', { size_bytes: mb(3 * 1024), filename: 'big.mp4' }, 422],
      ['a multipart-sized file at presign', { size_bytes: mb(30) }, 422],
      ['scope project without scope_project_id', { scope: 'project' }, 422],
      ['scope library with a scope_project_id', { scope_project_id: randomUUID() }, 422],
      ["another user's (or no) project", { scope: 'project', scope_project_id: randomUUID() }, 404],
    ];
    for (const [what, overrides, status] of cases) {
      const answer = await account.client.post('/api/v1/media/presign', presignBody(overrides));
      expect(answer.status, what).to.equal(status);
      expect((await json(answer)).detail, what).to.be.a('string').and.not.empty;
    }
    // declared size beyond the quota (but within the per-file maximum)
    await chargeStorage(em(), account.user.id, FREE_QUOTA - before - mb(10), FREE_QUOTA);
    const overQuota = await account.client.post('/api/v1/media/presign', presignBody({ size_bytes: mb(20) }));
    expect(overQuota.status).to.equal(422);
    expect((await json(overQuota)).detail).to.match(/storage/);
    await app.services.orm.em.fork().execute('update users set storage_used_bytes = ? where id = ?', [before, account.user.id]);

    const mine = await presignAndPut(account, clip, 'video/mp4');
    const foreign = await other.client.post(`/api/v1/media/${mine.mediaFileId}/confirm`);
    expect(foreign.status, "another user's media_file_id").to.equal(404);
    expect((await account.client.post(`/api/v1/media/${randomUUID()}/confirm`)).status).to.equal(404);
    expect(await used(other)).to.equal(0);

    const unuploaded = await json(await account.client.post('/api/v1/media/presign', presignBody()));
    const early = await account.client.post(`/api/v1/media/${unuploaded.media_file_id}/confirm`);
    expect(early.status, 'confirm before the PUT').to.equal(400);
    expect(await used(account)).to.equal(before);
    expect((await account.client.delete(`/api/v1/media/${unuploaded.media_item_id}`)).status).to.equal(204);
    expect(await used(account), 'deleting a never-charged item refunds nothing').to.equal(before);
  });

  it('attack: dedupe poisoning through a reused upload URL — a PUT after confirm changes nothing the service serves, and a later uploader of the original bytes gets the original', async () => {
    const attacker = await signUpAndLogin(app);
    const victim = await signUpAndLogin(app);
    const original = await makeAudio(dir, 'poison-original.m4a', { seconds: 1 });
    const originalBytes = await readFile(original);
    const originalHash = sha256(originalBytes);
    const attackerEvents = await listenToUser(app.services.bus, attacker.user.id);
    const victimEvents = await listenToUser(app.services.bus, victim.user.id);
    try {
      const presigned = await json(await attacker.client.post('/api/v1/media/presign', presignBody({ filename: 'a.m4a', content_type: 'audio/mp4', size_bytes: originalBytes.length })));
      await putBytes(presigned.upload_url, originalBytes, 'audio/mp4');
      expect((await attacker.client.post(`/api/v1/media/${presigned.media_file_id}/confirm`)).status).to.equal(200);
      await attackerEvents.next('media_ready');

      // the URL is still within its hour: the attacker writes other bytes of the same length and type through it
      const poison = new Uint8Array(randomBytes(originalBytes.length));
      await putBytes(presigned.upload_url, poison, 'audio/mp4').catch(() => 'refused by the store');
      const file = await em().findOneOrFail(MediaFile, presigned.media_file_id);
      expect(file.sha256Hash).to.equal(originalHash);
      expect(sha256(await objectBytes(file.storageKey)), 'the served object keeps the bytes the job hashed').to.equal(originalHash);

      const later = await uploadMedia(victim.client, original, { contentType: 'audio/mp4' });
      const ready = await victimEvents.next('media_ready');
      expect(ready.data.media_item_uuid).to.equal(later.mediaItemId);
      const served = await em().findOneOrFail(MediaItem, later.mediaItemId, { populate: ['file'] });
      expect(sha256(await objectBytes(served.file.storageKey)), 'the victim plays the original bytes').to.equal(originalHash);
    } finally {
      await attackerEvents.close();
      await victimEvents.close();
    }
  });

  it('attack: dedupe poisoning through the store itself — the attacker\'s unsigned PUT, DELETE, GET and listing of her served object → 403, and a later uploader of the original bytes plays the original', async () => {
    const attacker = await signUpAndLogin(app);
    const victim = await signUpAndLogin(app);
    const original = await makeAudio(dir, 'store-poison-original.m4a', { seconds: 1 });
    const originalBytes = await readFile(original);
    const originalHash = sha256(originalBytes);
    const attackerEvents = await listenToUser(app.services.bus, attacker.user.id);
    const victimEvents = await listenToUser(app.services.bus, victim.user.id);
    try {
      const mine = await uploadMedia(attacker.client, original, { contentType: 'audio/mp4' });
      await attackerEvents.next('media_ready');
      const file = (await em().findOneOrFail(MediaItem, mine.mediaItemId, { populate: ['file'] })).file;
      const served = `${process.env.S3_ENDPOINT}/${app.services.storage.bucket}/${file.storageKey}`;
      const poison = randomBytes(originalBytes.length);
      const attempts = await Promise.all([
        fetch(served, { method: 'PUT', body: poison, headers: { 'Content-Type': 'audio/mp4' } }),
        fetch(served, { method: 'DELETE' }),
        fetch(served),
        fetch(`${process.env.S3_ENDPOINT}/${app.services.storage.bucket}?list-type=2&prefix=media/`),
      ]);
      expect(attempts.map((response) => response.status)).to.deep.equal([403, 403, 403, 403]);
      expect(sha256(await objectBytes(file.storageKey)), 'the served object keeps the bytes the job hashed').to.equal(originalHash);

      const later = await uploadMedia(victim.client, original, { contentType: 'audio/mp4' });
      await victimEvents.next('media_ready');
      const victims = await em().findOneOrFail(MediaItem, later.mediaItemId, { populate: ['file'] });
      expect(victims.file.id, 'the victim\'s item joins the stored twin').to.equal(file.id);
      expect(sha256(await objectBytes(victims.file.storageKey)), 'the victim plays the original bytes').to.equal(originalHash);
    } finally {
      await attackerEvents.close();
      await victimEvents.close();
    }
  });

  it('attack: a PUT of another length or content type than presigned — both are signed into the URL, so the store refuses it (403) and confirm finds nothing', async () => {
    const account = await signUpAndLogin(app);
    const presigned = await json(await account.client.post('/api/v1/media/presign', presignBody({ filename: 'b.png', content_type: 'image/png', size_bytes: 64 })));
    const url = new URL(presigned.upload_url);
    expect(url.searchParams.get('X-Amz-SignedHeaders')?.split(';')).to.include.members(['content-length', 'content-type', 'host']);
    expect(url.pathname).to.match(new RegExp(`/uploads/${presigned.media_file_id}/[0-9a-f-]{36}$`));
    const started = await json(await account.client.post('/api/v1/media/multipart/initiate', presignBody({ size_bytes: mb(30) })));
    for (const part of started.parts) expect(new URL(part.url).searchParams.get('X-Amz-SignedHeaders')?.split(';')).to.include('content-length');
    const longer = await fetch(presigned.upload_url, { method: 'PUT', body: randomBytes(65), headers: { 'Content-Type': 'image/png' } });
    const retyped = await fetch(presigned.upload_url, { method: 'PUT', body: randomBytes(64), headers: { 'Content-Type': 'text/html' } });
    const longerPart = await fetch(started.parts[0].url, { method: 'PUT', body: randomBytes(10) });
    expect([longer.status, retyped.status, longerPart.status]).to.deep.equal([403, 403, 403]);
    expect((await account.client.post(`/api/v1/media/${presigned.media_file_id}/confirm`)).status, 'nothing was stored').to.equal(400);
  });

  it('attack: quota bypass through never-confirmed uploads and re-uploads after confirm — the sweep leaves nothing stored outside a charged row, and the reconciliation finds nothing', async () => {
    const account = await signUpAndLogin(app);
    const events = await listenToUser(app.services.bus, account.user.id);
    const { uploads } = createUploads(app.services, app.services.features.projects);
    const stagingOf = async (fileId: string) => (await em().findOneOrFail(MediaFile, fileId)).uploadKey!;
    try {
      const before = await used(account);
      // never confirmed: bytes at the store, nobody charged
      const abandoned = await presignAndPut(account, await makeImage(dir, 'abandoned.png'), 'image/png');
      const abandonedKey = await stagingOf(abandoned.mediaFileId);
      // confirmed, then written again through the same URL
      const image = await makeImage(dir, 'reused.png');
      const reused = await presignAndPut(account, image, 'image/png');
      expect((await account.client.post(`/api/v1/media/${reused.mediaFileId}/confirm`)).status).to.equal(200);
      const reusedKey = await stagingOf(reused.mediaFileId);
      await events.next('media_ready');
      await putBytes(reused.url, await readFile(image), 'image/png');
      expect(await app.services.storage.sizeOf(reusedKey), 'the re-upload landed at the store').to.be.a('number');
      const orphaned = (await reconcileStorage(em(), app.services.storage)).unaccounted.map((object) => object.key);
      expect(orphaned, 'before the sweep, the reconciliation reports the re-upload').to.include(reusedKey);

      expect(await uploads.sweepStaleUploads(em(), new Date()), 'nothing is stale within the hour').to.equal(0);
      expect(await app.services.storage.sizeOf(reusedKey), 'a staging object no upload owns goes at once').to.equal(null);
      expect(await app.services.storage.sizeOf(abandonedKey), 'an upload in progress keeps its object').to.be.a('number');

      expect(await uploads.sweepStaleUploads(em(), new Date(Date.now() + 25 * 3600_000))).to.be.at.least(1);
      expect(await em().findOne(MediaFile, abandoned.mediaFileId), 'the stale PENDING row is swept').to.equal(null);
      expect(await app.services.storage.sizeOf(abandonedKey), 'with its object').to.equal(null);
      const served = await em().findOneOrFail(MediaFile, reused.mediaFileId);
      expect(served.status).to.equal('UPLOADED');
      expect(await app.services.storage.sizeOf(served.storageKey), 'the served object stays').to.equal((await stat(image)).size);
      expect(await used(account)).to.equal(before + (await stat(image)).size);
      const left = (await reconcileStorage(em(), app.services.storage)).unaccounted.map((object) => object.key);
      expect(left).to.not.include.members([reusedKey, abandonedKey]);
      expect(left.filter((key) => key.includes(reused.mediaFileId) || key.includes(abandoned.mediaFileId))).to.deep.equal([]);
    } finally {
      await events.close();
    }
  });

  it('attack: unfinished uploads are not free — presign and initiate count the declared bytes of unfinished uploads against the quota until they are confirmed or deleted', async () => {
    const account = await signUpAndLogin(app);
    await chargeStorage(em(), account.user.id, FREE_QUOTA - mb(30), FREE_QUOTA);
    const declare = (size: number, path = '/api/v1/media/presign') => account.client.post(path, presignBody({ filename: 'big.mp4', size_bytes: size }));
    const first = await declare(mb(12));
    expect(first.status).to.equal(201);
    expect((await declare(mb(12))).status).to.equal(201);
    const over = await declare(mb(12));
    expect(over.status, '24 MiB already promised to unfinished uploads, 6 MiB of room left').to.equal(422);
    expect((await json(over)).detail).to.match(/only 6 MB/);
    expect((await declare(mb(26), '/api/v1/media/multipart/initiate')).status, 'multipart initiate counts them too').to.equal(422);
    expect((await account.client.delete(`/api/v1/media/${(await json(first)).media_item_id}`)).status).to.equal(204);
    expect((await declare(mb(12))).status, 'a deleted unfinished upload gives its room back').to.equal(201);
  });

  it('at most 10 unfinished uploads per user: the 11th presign → 409 with the limit, and finishing one makes room', async () => {
    const account = await signUpAndLogin(app);
    const started = [];
    for (let i = 0; i < 10; i++) started.push(await json(await account.client.post('/api/v1/media/presign', presignBody({ size_bytes: 100 }))));
    const eleventh = await account.client.post('/api/v1/media/presign', presignBody({ size_bytes: 100 }));
    expect(eleventh.status).to.equal(409);
    expect((await json(eleventh)).detail).to.match(/10 uploads started and not finished/);
    expect((await account.client.delete(`/api/v1/media/${started[0].media_item_id}`)).status).to.equal(204);
    expect((await account.client.post('/api/v1/media/presign', presignBody({ size_bytes: 100 }))).status).to.equal(201);
  });

  it('a single PUT never confirmed is swept 15 minutes after its URL expired, not a day later', async () => {
    const account = await signUpAndLogin(app);
    const { uploads } = createUploads(app.services, app.services.features.projects);
    const presigned = await json(await account.client.post('/api/v1/media/presign', presignBody({ size_bytes: 100 })));
    await uploads.sweepStaleUploads(em(), new Date(Date.now() + 3600_000));
    expect(await em().findOne(MediaFile, presigned.media_file_id), 'its URL has only just expired').to.not.equal(null);
    await uploads.sweepStaleUploads(em(), new Date(Date.now() + 3600_000 + 16 * 60_000));
    expect(await em().findOne(MediaFile, presigned.media_file_id), 'swept once nothing can write it').to.equal(null);
  });

  it('content addressing: identical content is stored once, media_ready names the uploader\'s own file and tells no one else; deletes refund each uploader and the object goes with the last reference', async () => {
    const alice = await signUpAndLogin(app);
    const bob = await signUpAndLogin(app);
    // content no other test uploads, so alice's file is the first with this sha256
    const shared = await makeAudio(dir, 'shared.m4a', { seconds: 2 });
    const size = (await stat(shared)).size;
    const aliceEvents = await listenToUser(app.services.bus, alice.user.id);
    const bobEvents = await listenToUser(app.services.bus, bob.user.id);
    try {
      const a = await uploadMedia(alice.client, shared, { contentType: 'audio/mp4' });
      await aliceEvents.next('media_ready');
      const b = await uploadMedia(bob.client, shared, { contentType: 'audio/mp4', filename: 'bobs-take.m4a' });
      const ready = await bobEvents.next('media_ready');
      // issue 22 item 11: bob hears his own ids, and alice is not told that someone uploaded her bytes
      expect(ready.data).to.include({ media_file_uuid: b.mediaFileId, media_item_uuid: b.mediaItemId });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(aliceEvents.events.filter((event) => event.type === 'media_ready'), 'alice heard only her own upload').to.have.lengthOf(1);
      // and bob's item reads as he uploaded it: his file id and his file name, never alice's
      const bobsItem = await json(await bob.client.get(`/api/v1/media/${b.mediaItemId}`));
      expect(bobsItem).to.include({ media_file_id: b.mediaFileId, original_filename: 'bobs-take.m4a' });
      // a repeated confirm stays idempotent and reads as bob uploaded it
      const again = await bob.client.post(`/api/v1/media/${b.mediaFileId}/confirm`);
      expect(again.status).to.equal(200);
      expect(await json(again)).to.include({ id: b.mediaFileId, original_filename: 'bobs-take.m4a', status: 'UPLOADED' });
      expect(await em().findOne(MediaFile, b.mediaFileId), "bob's twin file is folded away").to.equal(null);
      expect((await em().findOneOrFail(MediaItem, b.mediaItemId)).file.id).to.equal(a.mediaFileId);
      expect([await used(alice), await used(bob)]).to.deep.equal([size, size]);

      expect((await alice.client.delete(`/api/v1/media/${a.mediaItemId}`)).status).to.equal(204);
      expect(await used(alice)).to.equal(0);
      expect(await stored(a.mediaFileId), 'still referenced by bob').to.equal(size);
      expect((await bob.client.delete(`/api/v1/media/${a.mediaItemId}`)).status, "alice's item is gone (and was never bob's)").to.equal(404);

      const thumbnail = (await em().findOneOrFail(MediaFile, a.mediaFileId)).thumbnailKey;
      expect((await bob.client.delete(`/api/v1/media/${b.mediaItemId}`)).status).to.equal(204);
      expect(await used(bob)).to.equal(0);
      expect(await em().findOne(MediaFile, a.mediaFileId)).to.equal(null);
      expect(await stored(a.mediaFileId), 'the object goes with the last reference').to.equal(null);
      if (thumbnail) expect(await app.services.storage.sizeOf(thumbnail), 'and its artifacts').to.equal(null);
      expect((await bob.client.delete(`/api/v1/media/${b.mediaItemId}`)).status).to.equal(404);
    } finally {
      await aliceEvents.close();
      await bobEvents.close();
    }
  });

  it("presign and initiate with another user's project as scope_project_id → 404, nothing created", async () => {
    const account = await signUpAndLogin(app);
    const owner = await signUpAndLogin(app);
    const created = await owner.client.post('/api/v1/projects/', { name: 'Not yours' });
    expect(created.status).to.equal(201);
    const project = await json(created);
    const scoped = { scope: 'project', scope_project_id: project.uuid };
    const presigned = await account.client.post('/api/v1/media/presign', presignBody(scoped));
    expect(presigned.status, 'presign').to.equal(404);
    const initiated = await account.client.post('/api/v1/media/multipart/initiate', presignBody({ ...scoped, size_bytes: mb(30) }));
    expect(initiated.status, 'initiate').to.equal(404);
    expect(await em().count(MediaItem, { scopeProjectId: project.uuid })).to.equal(0);
    expect(await em().count(MediaFile, { uploaderId: account.user.id })).to.equal(0);
    expect((await owner.client.post('/api/v1/media/presign', presignBody(scoped))).status, 'the owner may').to.equal(201);
  });

  it('a delete racing a confirm of the same item refunds exactly what was charged: storage_used_bytes ends at 0 every round', async () => {
    const account = await signUpAndLogin(app);
    const image = await makeImage(dir, 'delete-race.png');
    for (let round = 0; round < 10; round += 1) {
      const upload = await presignAndPut(account, image, 'image/png');
      const [confirmed, deleted] = await Promise.all([
        account.client.post(`/api/v1/media/${upload.mediaFileId}/confirm`),
        account.client.delete(`/api/v1/media/${upload.mediaItemId}`),
      ]);
      expect(deleted.status, `round ${round}: delete`).to.equal(204);
      // the confirm may settle first (200), find the rows gone (404), or find the object already deleted (400: nothing uploaded)
      expect([200, 400, 404], `round ${round}: confirm`).to.include(confirmed.status);
      expect(await used(account), `round ${round}`).to.equal(0);
    }
  });

  async function presignAndPut(account: SignedIn, path: string, contentType: string) {
    const size = (await stat(path)).size;
    const presigned = await json(await account.client.post('/api/v1/media/presign', { filename: path.split('/').pop(), content_type: contentType, size_bytes: size, scope: 'library' }));
    await putBytes(presigned.upload_url, await readFile(path), contentType);
    return { mediaFileId: presigned.media_file_id as string, mediaItemId: presigned.media_item_id as string, url: presigned.upload_url as string };
  }
});
