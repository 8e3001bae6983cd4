import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { AbortMultipartUploadCommand, ListPartsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { mb } from '../../hack/fixtures/units.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { listenToUser } from '../support/events.ts';
import { makeAudio } from '../support/media.ts';
import { putParts, uploadMedia } from '../support/media-upload.ts';
import { chargeStorage, storageUsed } from '../../api/src/accounts/storage-usage.ts';
import { MediaFile, MediaItem } from '../../api/src/media/entities.ts';
import { createUploads } from '../../api/src/media/uploads/feature.ts';

const FREE_QUOTA = mb(500);

describe('media uploads: multipart (initiate, parts, complete, abort, sweep)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let dir: string;
  let wav: string;
  let wavSize: number;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-multipart-'));
    // 5 MiB parts and a 1 MiB cutoff keep real multi-part uploads small; 3 parts at most
    app = await startTestApp({ JOB_BACKEND: 'local', MULTIPART_PART_SIZE_BYTES: String(mb(5)), MULTIPART_CUTOFF_BYTES: String(mb(1)), MULTIPART_MAX_PARTS: '3' });
    wav = await makeAudio(dir, 'long.wav', { seconds: 65 });
    wavSize = (await stat(wav)).size;
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const em = () => app.services.orm.em.fork();
  const used = (account: SignedIn) => storageUsed(em(), account.user.id);
  const initiateBody = (overrides: Record<string, unknown> = {}) => ({ filename: 'long.wav', content_type: 'audio/wav', size_bytes: wavSize, scope: 'library', ...overrides });

  async function initiate(account: SignedIn, overrides: Record<string, unknown> = {}) {
    const answer = await account.client.post('/api/v1/media/multipart/initiate', initiateBody(overrides));
    expect(answer.status, await answer.clone().text()).to.equal(201);
    return json(answer);
  }

  it('initiate → PUT parts → parts listing → complete with quoted ETags → media_ready; a second complete is idempotent', async () => {
    const account = await signUpAndLogin(app);
    const events = await listenToUser(app.services.bus, account.user.id);
    try {
      const started = await initiate(account);
      expect(started).to.include({ part_size_bytes: mb(5), parts_count: 3, expires_in: 7200 });
      expect(started.key, 'parts go to the upload\'s staging key').to.match(new RegExp(`^uploads/${started.media_file_id}/[0-9a-f-]{36}$`));
      expect(started.parts.map((p: { part_number: number }) => p.part_number)).to.deep.equal([1, 2, 3]);
      expect((await em().findOneOrFail(MediaFile, started.media_file_id)).status).to.equal('MULTIPART_INITIATED');

      const etags = await putParts(account.client, wav, started.media_file_id, started.part_size_bytes, started.parts_count, started.parts);
      expect(etags.every((part) => /^".+"$/.test(part.etag)), 'the store sends quoted ETags').to.equal(true);
      const listed = await json(await account.client.get(`/api/v1/media/multipart/parts?media_file_id=${started.media_file_id}`));
      expect(listed.uploaded_parts.map((p: { part_number: number; etag: string }) => [p.part_number, p.etag])).to.deep.equal(etags.map((p) => [p.part_number, p.etag]));
      expect(listed.uploaded_parts.reduce((sum: number, p: { size_bytes: number }) => sum + p.size_bytes, 0)).to.equal(wavSize);

      const completed = await account.client.post('/api/v1/media/multipart/complete', { media_file_id: started.media_file_id, parts: etags });
      expect(completed.status).to.equal(200);
      expect(await json(completed)).to.include({ id: started.media_file_id, status: 'PROCESSING', size_bytes: wavSize });
      expect(await used(account)).to.equal(wavSize);
      await events.next('media_ready');

      const again = await account.client.post('/api/v1/media/multipart/complete', { media_file_id: started.media_file_id, parts: etags });
      expect(again.status).to.equal(200);
      expect(await json(again)).to.include({ status: 'UPLOADED', size_bytes: wavSize });
      expect(await used(account)).to.equal(wavSize);
    } finally {
      await events.close();
    }
  });

  it('complete with stripped ETag quotes → 409 MultipartCompleteError, nothing charged; the right ETags then complete', async () => {
    const account = await signUpAndLogin(app);
    const started = await initiate(account);
    const etags = await putParts(account.client, wav, started.media_file_id, started.part_size_bytes, started.parts_count, started.parts);
    const stripped = etags.map((part) => ({ ...part, etag: part.etag.replaceAll('"', '') }));
    const refused = await account.client.post('/api/v1/media/multipart/complete', { media_file_id: started.media_file_id, parts: stripped });
    expect(refused.status).to.equal(409);
    expect(await json(refused)).to.include({ code: 'MultipartCompleteError' });
    expect(await used(account)).to.equal(0);
    expect((await em().findOneOrFail(MediaFile, started.media_file_id)).status).to.equal('MULTIPART_INITIATED');

    const unknown = await account.client.post('/api/v1/media/multipart/complete', { media_file_id: started.media_file_id, parts: [...etags, { part_number: 4, etag: '"x"' }] });
    expect(unknown.status, 'an unknown part number').to.equal(400);
    expect(await json(unknown)).to.include({ code: 'ValidationError' });
    const twice = await account.client.post('/api/v1/media/multipart/complete', { media_file_id: started.media_file_id, parts: [etags[0], etags[0]] });
    expect(twice.status, 'a part listed twice').to.equal(400);

    const other = await signUpAndLogin(app);
    expect((await other.client.post('/api/v1/media/multipart/complete', { media_file_id: started.media_file_id, parts: etags })).status).to.equal(404);
    expect((await other.client.get(`/api/v1/media/multipart/parts?media_file_id=${started.media_file_id}`)).status).to.equal(404);

    const completed = await account.client.post('/api/v1/media/multipart/complete', { media_file_id: started.media_file_id, parts: etags });
    expect(completed.status).to.equal(200);
    expect(await used(account)).to.equal(wavSize);
  });

  it('fresh part URLs: 400 ValidationError when from_part < 1, to_part > parts_count or from_part > to_part', async () => {
    const account = await signUpAndLogin(app);
    const started = await initiate(account);
    const urls = (from: number, to: number) => account.client.get(`/api/v1/media/multipart/parts/urls?media_file_id=${started.media_file_id}&from_part=${from}&to_part=${to}`);
    const fresh = await urls(2, 3);
    expect(fresh.status).to.equal(200);
    const body = await json(fresh);
    expect(body.expires_in).to.equal(7200);
    expect(body.parts.map((p: { part_number: number }) => p.part_number)).to.deep.equal([2, 3]);
    for (const [from, to] of [[0, 2], [1, 4], [3, 2]] as const) {
      const refused = await urls(from, to);
      expect(refused.status, `${from}..${to}`).to.equal(400);
      expect(await json(refused)).to.include({ code: 'ValidationError' });
    }
  });

  it('no row lock is held across store calls: the file row is free while complete is at the store', async () => {
    const account = await signUpAndLogin(app);
    const started = await initiate(account);
    const etags = await putParts(account.client, wav, started.media_file_id, started.part_size_bytes, started.parts_count, started.parts);
    const storage = app.services.storage;
    const sizeOf = storage.sizeOf.bind(storage);
    const freeDuringStoreCall: boolean[] = [];
    storage.sizeOf = async (key: string) => {
      // nowait fails at once if the settle holds the row lock
      if (key === started.key) freeDuringStoreCall.push(await em().transactional(async (tx) => tx.execute('select id from media_files where id = ? for update nowait', [started.media_file_id])).then(() => true, () => false));
      return sizeOf(key);
    };
    try {
      expect((await account.client.post('/api/v1/media/multipart/complete', { media_file_id: started.media_file_id, parts: etags })).status).to.equal(200);
    } finally {
      storage.sizeOf = sizeOf;
    }
    expect(freeDuringStoreCall).to.deep.equal([true]);
    expect(await used(account)).to.equal(wavSize);
  });

  it('two racing completes of one upload both answer 200 and charge once', async () => {
    const account = await signUpAndLogin(app);
    for (let round = 0; round < 3; round += 1) {
      const started = await initiate(account);
      const etags = await putParts(account.client, wav, started.media_file_id, started.part_size_bytes, started.parts_count, started.parts);
      const answers = await Promise.all([0, 1].map(() => account.client.post('/api/v1/media/multipart/complete', { media_file_id: started.media_file_id, parts: etags })));
      expect(answers.map((answer) => answer.status), `round ${round}`).to.deep.equal([200, 200]);
      expect((await em().findOneOrFail(MediaItem, started.media_item_id)).chargedBytes).to.equal(wavSize);
      expect(await used(account), `round ${round}: charged once`).to.equal((round + 1) * wavSize);
    }
  });

  it('fresh part URLs are not capped per request: any range within 1..parts_count is given in full', async () => {
    const account = await signUpAndLogin(app);
    const started = await initiate(account);
    // parts_count ≤ MULTIPART_MAX_PARTS (10,000 in production) bounds a request; 3 here, so widen this upload's
    await em().nativeUpdate(MediaFile, { id: started.media_file_id }, { partsCount: 1500 });
    const answer = await account.client.get(`/api/v1/media/multipart/parts/urls?media_file_id=${started.media_file_id}&from_part=1&to_part=1500`);
    expect(answer.status).to.equal(200);
    const body = await json(answer);
    expect(body.parts.map((part: { part_number: number }) => part.part_number)).to.deep.equal(Array.from({ length: 1500 }, (_, index) => index + 1));
  });

  it('initiate refuses sizes below the cutoff, beyond the part count or the per-file maximum, and over the declared quota (422), charging nothing', async () => {
    const account = await signUpAndLogin(app);
    for (const [what, size] of [['below the cutoff', mb(1) - 1], ['more than MULTIPART_MAX_PARTS parts', mb(16)], ['beyond the per-file maximum', mb(3 * 1024)]] as const) {
      const refused = await account.client.post('/api/v1/media/multipart/initiate', initiateBody({ size_bytes: size }));
      expect(refused.status, what).to.equal(422);
    }
    expect((await account.client.post('/api/v1/media/multipart/initiate', initiateBody({ content_type: 'application/zip' }))).status).to.equal(422);
    await chargeStorage(em(), account.user.id, FREE_QUOTA - mb(2), FREE_QUOTA);
    expect((await account.client.post('/api/v1/media/multipart/initiate', initiateBody())).status).to.equal(422);
    expect(await used(account)).to.equal(FREE_QUOTA - mb(2));
    expect(await em().count(MediaItem, { userId: account.user.id })).to.equal(0);
  });

  it('complete over quota after completion: 400 ValidationError, the file FAILED, the object deleted, accounting unchanged', async () => {
    const account = await signUpAndLogin(app);
    const started = await initiate(account);
    const etags = await putParts(account.client, wav, started.media_file_id, started.part_size_bytes, started.parts_count, started.parts);
    await chargeStorage(em(), account.user.id, FREE_QUOTA - wavSize + 1, FREE_QUOTA);
    const before = await used(account);
    const refused = await account.client.post('/api/v1/media/multipart/complete', { media_file_id: started.media_file_id, parts: etags });
    expect(refused.status).to.equal(400);
    expect(await json(refused)).to.include({ code: 'ValidationError' });
    expect((await em().findOneOrFail(MediaFile, started.media_file_id)).status).to.equal('FAILED');
    expect(await app.services.storage.sizeOf(started.key)).to.equal(null);
    expect(await used(account)).to.equal(before);
  });

  it('attack: a single PUT whose stored object is multipart-sized though declared small (a store that does not enforce the signed length) → confirm 400 ValidationError, the file FAILED, the object deleted, nothing charged', async () => {
    const account = await signUpAndLogin(app);
    const before = await used(account);
    const presigned = await json(await account.client.post('/api/v1/media/presign', { filename: 'small.wav', content_type: 'audio/wav', size_bytes: 1000, scope: 'library' }));
    // The embedded store refuses a body of another length than signed, as S3 does: the object such a store would keep is written with the service's own credentials.
    const staging = (await em().findOneOrFail(MediaFile, presigned.media_file_id)).uploadKey!;
    await app.services.storage.client.send(new PutObjectCommand({ Bucket: app.services.storage.bucket, Key: staging, Body: new Uint8Array(mb(1) + 1), ContentType: 'audio/wav' }));
    const confirmed = await account.client.post(`/api/v1/media/${presigned.media_file_id}/confirm`);
    expect(confirmed.status).to.equal(400);
    expect(await json(confirmed)).to.include({ code: 'ValidationError' });
    const file = await em().findOneOrFail(MediaFile, presigned.media_file_id);
    expect(file.status).to.equal('FAILED');
    expect(await app.services.storage.sizeOf(file.uploadKey!), 'the object is deleted').to.equal(null);
    expect(await used(account), 'nothing charged').to.equal(before);
  });

  it('abort → 204 with the rows gone, also when the store fails to abort', async () => {
    const account = await signUpAndLogin(app);
    const started = await initiate(account);
    const aborted = await account.client.post('/api/v1/media/multipart/abort', { media_file_id: started.media_file_id });
    expect(aborted.status).to.equal(204);
    expect(await em().findOne(MediaFile, started.media_file_id)).to.equal(null);
    expect(await em().findOne(MediaItem, started.media_item_id)).to.equal(null);
    expect((await account.client.post('/api/v1/media/multipart/abort', { media_file_id: started.media_file_id })).status).to.equal(404);

    const second = await initiate(account);
    const { client: s3, bucket } = app.services.storage;
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: second.key, UploadId: second.upload_id }));
    const despite = await account.client.post('/api/v1/media/multipart/abort', { media_file_id: second.media_file_id });
    expect(despite.status, 'the store no longer knows the upload').to.equal(204);
    expect(await em().findOne(MediaFile, second.media_file_id)).to.equal(null);
    expect(await used(account)).to.equal(0);
  });

  it('the scheduled sweep removes stale MULTIPART_INITIATED uploads at the store and in the database, and keeps fresh ones', async () => {
    const account = await signUpAndLogin(app);
    const stale = await initiate(account);
    const { uploads } = createUploads(app.services, app.services.features.projects);
    expect(await uploads.sweepStaleUploads(em(), new Date()), 'nothing is stale yet').to.equal(0);
    const swept = await uploads.sweepStaleUploads(em(), new Date(Date.now() + 25 * 3600_000));
    expect(swept).to.be.at.least(1);
    expect(await em().findOne(MediaFile, stale.media_file_id)).to.equal(null);
    expect(await em().findOne(MediaItem, stale.media_item_id)).to.equal(null);
    const { client: s3, bucket } = app.services.storage;
    const listing = s3.send(new ListPartsCommand({ Bucket: bucket, Key: stale.key, UploadId: stale.upload_id }));
    await listing.then(
      () => expect.fail('the upload should be gone at the store'),
      (error: { name?: string }) => expect(error.name).to.equal('NoSuchUpload'),
    );
  });

  it('uploadMedia picks multipart by size and its items can be deleted with the charge refunded', async () => {
    const account = await signUpAndLogin(app);
    const uploaded = await uploadMedia(account.client, wav, { contentType: 'audio/wav', displayName: 'Long' });
    expect(uploaded.file).to.include({ status: 'PROCESSING', size_bytes: wavSize });
    expect(await used(account)).to.equal(wavSize);
    expect((await account.client.delete(`/api/v1/media/${uploaded.mediaItemId}`)).status).to.equal(204);
    expect(await used(account)).to.equal(0);
    expect((await account.client.delete(`/api/v1/media/${randomUUID()}`)).status).to.equal(404);
  });
});
