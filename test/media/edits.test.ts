import { settlementOf } from '../../api/src/jobs/completion.ts';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { listenToUser } from '../support/events.ts';
import { makeImage, makeVideo } from '../support/media.ts';
import { MediaFile, MediaItem, type MediaItemRow } from '../../api/src/media/entities.ts';
import { storageUsed } from '../../api/src/accounts/storage-usage.ts';
import { Job, type JobRow } from '../../api/src/jobs/entities.ts';
import type { BillingService } from '../../api/src/billing/billing-service.ts';
import { producedMediaCompletion } from '../../api/src/media/media-edits/produced-media-completion.ts';
import { eventually, fileWhen } from '../support/wait.ts';
import { runArtifactJob, storeItem } from './library-fixtures.ts';
import type { ArtifactResult } from '../../crds/contract/programs/artifact.ts';
import type { ProducedMediaResult } from '../../crds/contract/programs/media-edit.ts';

describe('media edits: POST /media/{media_item_id}/edit', function () {
  this.timeout(60_000);
  let app: TestApp;
  let dir: string;
  let owner: SignedIn;
  let clip: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-media-edits-'));
    app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '3' });
    owner = await signUpAndLogin(app);
    clip = await makeVideo(dir, 'source.mp4', { seconds: 4, width: 320, height: 180 });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A stored file of `userId` that the artifact job has made UPLOADED, with `itemCount` library items. */
  async function uploaded(userId: string, path = clip, contentType = 'video/mp4', itemCount = 1) {
    const fileId = randomUUID();
    const key = `media/${fileId}/source`;
    await app.services.storage.client.send(new PutObjectCommand({ Bucket: app.services.storage.bucket, Key: key, Body: await readFile(path), ContentType: contentType }));
    const em = app.services.orm.em.fork();
    const file = em.create(MediaFile, { id: fileId, uploaderId: userId, status: 'PROCESSING', storageKey: key, contentType, originalFilename: 'clip.mp4', declaredSizeBytes: 1, sizeBytes: 1 });
    const items = Array.from({ length: itemCount }, (_, index) =>
      em.create(MediaItem, { id: randomUUID(), userId, file, scope: 'library', displayName: `Clip ${index}` }),
    );
    await em.flush();
    const events = await listenToUser(app.services.bus, userId);
    try {
      await app.services.jobs.submit(app.services.orm.em.fork(), { program: 'artifact', userId, mediaFileId: fileId, input: { sourceKey: key, contentType } });
      await events.next('media_ready');
    } finally {
      await events.close();
    }
    // Identical content folds into the file stored first: the items then reference that one (media_ready names the uploaded id).
    const fresh = (await app.services.orm.em.fork().findOneOrFail(MediaItem, items[0]!.id, { populate: ['file'] })).file;
    return { file: fresh, items, key: fresh.storageKey };
  }

  /** A 2 s 160×90 clip of its own (unique bytes), uploaded for `userId` with `itemCount` items. */
  const freshSource = async (userId: string, name: string, itemCount = 1) =>
    uploaded(userId, await makeVideo(dir, name, { seconds: 2, width: 160, height: 90 }), 'video/mp4', itemCount);

  const edit = (who: SignedIn, itemId: string, body: Record<string, unknown>) =>
    who.client.post(`/api/v1/media/${itemId}/edit`, { extract_audio: false, save_mode: 'copy', fast_mode: false, ...body });

  it("the produced-media completion charges against the billing passed in its deps (the services'), not one it builds itself", async () => {
    const account = await signUpAndLogin(app);
    const fileId = randomUUID();
    const setup = app.services.orm.em.fork();
    const file = setup.create(MediaFile, { id: fileId, uploaderId: account.user.id, status: 'PENDING', storageKey: `media/${fileId}/source`, contentType: 'video/mp4', originalFilename: 'edited.mp4', declaredSizeBytes: 1 });
    setup.create(MediaItem, { id: randomUUID(), userId: account.user.id, file, scope: 'library', displayName: 'Edited' });
    await setup.flush();
    const asked: string[] = [];
    // a plan with no storage at all: only this billing can make the completion refuse the result
    const limitsOf = async (_em: unknown, userId: string) => {
      asked.push(userId);
      return { storageQuotaBytes: 0 };
    };
    const billing = { limitsOf } as unknown as BillingService;
    const { orm, storage } = app.services;
    const handler = producedMediaCompletion({ orm, storage, billing, stillDurationMs: app.services.config.IMAGE_STILL_DURATION_MS });
    const job = { userId: account.user.id, mediaFileId: fileId, input: {} } as unknown as JobRow;
    const artifact: ArtifactResult = {
      sha256: 'a'.repeat(64),
      size_bytes: 10,
      kind: 'video',
      duration_ms: 1000,
      width: 160,
      height: 90,
      has_audio: false,
      video_codec: 'h264',
      audio_codec: null,
      container: 'mov,mp4,m4a,3gp,3g2,mj2',
      proxy_status: 'not_applicable',
      artifacts: { waveform_key: null, thumbnail_key: null, audio_key: null },
    };
    const result: ProducedMediaResult = { output_key: `jobs/${randomUUID()}/edited.mp4`, size_bytes: 10, content_type: 'video/mp4', artifact };
    const after = await orm.em.fork().transactional((tx) => handler.succeeded(tx, job, result, { peaks: null }));
    await settlementOf(after).afterCommit?.();
    expect(asked).to.deep.equal([account.user.id]);
    expect((await app.services.orm.em.fork().findOneOrFail(MediaFile, fileId)).status).to.equal('FAILED');
    expect(await storageUsed(app.services.orm.em.fork(), account.user.id)).to.equal(0);
  });

  it('copy: 202 with a new pending item that becomes uploaded (media_ready); the source file is unchanged', async () => {
    const source = await uploaded(owner.user.id);
    const usedBefore = await storageUsed(app.services.orm.em.fork(), owner.user.id);
    const events = await listenToUser(app.services.bus, owner.user.id);
    try {
      const response = await edit(owner, source.items[0]!.id, { start_ms: 500, end_ms: 3500, cuts: [{ start_ms: 1000, end_ms: 2000 }] });
      expect(response.status).to.equal(202);
      const { new_media_item_uuid: newItemId } = await json(response);
      expect(newItemId).to.be.a('string').and.not.equal(source.items[0]!.id);
      const pending = await app.services.orm.em.fork().findOneOrFail(MediaItem, newItemId, { populate: ['file'] });
      expect(pending.file.id).to.not.equal(source.file.id);
      expect(['PENDING', 'UPLOADED']).to.include(pending.file.status);

      const ready = await events.next('media_ready');
      expect(ready.data).to.include({ media_item_uuid: newItemId });
      const em = app.services.orm.em.fork();
      const item = await em.findOneOrFail(MediaItem, newItemId, { populate: ['file'] });
      expect(item.file.status).to.equal('UPLOADED');
      expect(item.file.durationMs).to.be.closeTo(2000, 100);
      expect(item.file.uploaderId).to.equal(owner.user.id);
      expect(item.chargedBytes).to.equal(item.file.sizeBytes).and.be.greaterThan(0);
      expect(await storageUsed(em, owner.user.id)).to.equal(usedBefore + item.file.sizeBytes!);
      const original = await em.findOneOrFail(MediaFile, source.file.id);
      expect([original.status, original.sha256Hash, original.storageKey]).to.deep.equal(['UPLOADED', source.file.sha256Hash, source.key]);
    } finally {
      await events.close();
    }
  });

  it('replace: the item is repointed at a new file; the shared source file is unchanged and still referenced by the other item', async () => {
    const source = await uploaded(owner.user.id, clip, 'video/mp4', 2);
    const [replaced, other] = source.items as [MediaItemRow, MediaItemRow];
    const events = await listenToUser(app.services.bus, owner.user.id);
    try {
      const response = await edit(owner, replaced.id, { save_mode: 'replace', extract_audio: true, end_ms: 2000, fast_mode: true });
      expect(response.status).to.equal(202);
      expect(await json(response)).to.deep.equal({ new_media_item_uuid: replaced.id });
      const ready = await events.next('media_ready');
      expect(ready.data).to.include({ media_item_uuid: replaced.id });
      const em = app.services.orm.em.fork();
      const item = await em.findOneOrFail(MediaItem, replaced.id, { populate: ['file'] });
      expect(item.file.id).to.not.equal(source.file.id);
      expect([item.file.status, item.file.kind, item.file.contentType]).to.deep.equal(['UPLOADED', 'audio', 'audio/mp4']);
      expect(item.file.durationMs).to.be.closeTo(2000, 150);
      expect((await em.findOneOrFail(MediaItem, other.id)).file.id).to.equal(source.file.id);
      const original = await em.findOneOrFail(MediaFile, source.file.id);
      expect([original.status, original.sha256Hash]).to.deep.equal(['UPLOADED', source.file.sha256Hash]);
      expect(await app.services.storage.sizeOf(source.key)).to.be.greaterThan(0);
    } finally {
      await events.close();
    }
  });

  it('replace of the last reference: the old file and its object go once the edited file is ready', async () => {
    const source = await freshSource(owner.user.id, 'alone.mp4');
    const events = await listenToUser(app.services.bus, owner.user.id);
    try {
      const response = await edit(owner, source.items[0]!.id, { save_mode: 'replace', start_ms: 500 });
      expect(response.status).to.equal(202);
      // Until the edit is ready the item keeps its old file.
      expect((await app.services.orm.em.fork().findOneOrFail(MediaItem, source.items[0]!.id)).file.id).to.equal(source.file.id);
      await events.next('media_ready');
      const em = app.services.orm.em.fork();
      expect(await em.findOne(MediaFile, source.file.id)).to.equal(null);
      expect(await app.services.storage.sizeOf(source.key)).to.equal(null);
    } finally {
      await events.close();
    }
  });

  describe('repeated edits: identical output is stored once (folded onto the file stored first)', () => {
    /** Waits until every item reads uploaded (or fails naming the one that did not). */
    async function settledItems(itemIds: string[]) {
      return eventually(async () => {
        const items = await app.services.orm.em.fork().find(MediaItem, { id: { $in: itemIds } }, { populate: ['file'] });
        return items.length === itemIds.length && items.every((item) => item.file.status === 'UPLOADED' && !item.pendingFileId) ? items : undefined;
      }, `items ${itemIds.join(', ')} uploaded`);
    }

    /** storage_used_bytes equals what the user's items carry: nothing charged twice, nothing lost. */
    async function expectExactAccounting(userId: string) {
      const em = app.services.orm.em.fork();
      const charged = (await em.find(MediaItem, { userId })).reduce((sum, item) => sum + item.chargedBytes, 0);
      expect(await storageUsed(em, userId)).to.equal(charged);
    }

    /** The edit's jobs, oldest first, once every one has settled. */
    const settledJobs = (fileIds: string[]) =>
      eventually(async () => {
        const jobs = await app.services.orm.em.fork().find(Job, { program: 'media-edit', mediaFileId: { $in: fileIds } }, { orderBy: { createdAt: 'asc' } });
        return jobs.length === fileIds.length && jobs.every((job) => job.completedAt) ? jobs : undefined;
      }, 'media-edit jobs settled');

    it('the same copy edit twice on one item: both new items end uploaded on one stored file, each charged its size (storage_used_bytes exact)', async () => {
      const user = await signUpAndLogin(app);
      const source = await freshSource(user.user.id, 'twice-copy.mp4');
      const body = { start_ms: 200, end_ms: 1800, fast_mode: true };
      const first = (await json(await edit(user, source.items[0]!.id, body))).new_media_item_uuid as string;
      const [made] = await settledItems([first]);
      const second = (await json(await edit(user, source.items[0]!.id, body))).new_media_item_uuid as string;
      const pendingFileId = (await app.services.orm.em.fork().findOneOrFail(MediaItem, second)).file.id;
      const items = await settledItems([first, second]);

      const fileIds = new Set(items.map((item) => item.file.id));
      expect(fileIds, 'one stored file').to.deep.equal(new Set([made!.file.id]));
      const size = made!.file.sizeBytes!;
      expect(items.map((item) => item.chargedBytes)).to.deep.equal([size, size]);
      await expectExactAccounting(user.user.id);
      const em = app.services.orm.em.fork();
      expect(await em.count(MediaFile, { sha256Hash: made!.file.sha256Hash })).to.equal(1);
      expect(await em.findOne(MediaFile, pendingFileId), "the second edit's file folded away").to.equal(null);
      const jobs = await settledJobs([made!.file.id, pendingFileId]);
      expect(jobs.map((job) => job.status)).to.deep.equal(['succeeded', 'succeeded']);
      expect(await app.services.storage.sizeOf(`${jobs[1]!.outputPrefix}/edited.mp4`), "the second edit's object deleted").to.equal(null);
    });

    it('the same replace edit on two items of one file: both end uploaded on one stored file, the source goes with its last item, storage_used_bytes exact', async () => {
      const user = await signUpAndLogin(app);
      const source = await freshSource(user.user.id, 'twice-replace.mp4', 2);
      const [one, two] = source.items as [MediaItemRow, MediaItemRow];
      const body = { save_mode: 'replace', start_ms: 300, fast_mode: true };
      expect((await edit(user, one.id, body)).status).to.equal(202);
      const [first] = await settledItems([one.id]);
      expect(first!.file.id).to.not.equal(source.file.id);
      expect((await edit(user, two.id, body)).status).to.equal(202);
      const items = await settledItems([one.id, two.id]);

      expect(new Set(items.map((item) => item.file.id)), 'one stored file').to.deep.equal(new Set([first!.file.id]));
      const size = first!.file.sizeBytes!;
      expect(items.map((item) => item.chargedBytes)).to.deep.equal([size, size]);
      await expectExactAccounting(user.user.id);
      const em = app.services.orm.em.fork();
      expect(await em.count(MediaFile, { sha256Hash: first!.file.sha256Hash })).to.equal(1);
      expect(await em.findOne(MediaFile, source.file.id), 'the source left by its last item').to.equal(null);
      // its object goes once the transaction that dropped its row has committed: under load, a moment later
      await eventually(async () => ((await app.services.storage.sizeOf(source.key)) === null ? true : undefined), 'the source object gone', 10_000);
      expect(await app.services.storage.sizeOf(source.key), 'the source object gone').to.equal(null);
    });

    it('a copy then the same edit as replace on the same item: both items end uploaded on one stored file', async () => {
      const user = await signUpAndLogin(app);
      const source = await freshSource(user.user.id, 'copy-then-replace.mp4');
      const body = { end_ms: 1500, fast_mode: true };
      const copy = (await json(await edit(user, source.items[0]!.id, body))).new_media_item_uuid as string;
      const [made] = await settledItems([copy]);
      expect((await edit(user, source.items[0]!.id, { ...body, save_mode: 'replace' })).status).to.equal(202);
      const items = await settledItems([copy, source.items[0]!.id]);
      expect(new Set(items.map((item) => item.file.id))).to.deep.equal(new Set([made!.file.id]));
      await expectExactAccounting(user.user.id);
      expect(await app.services.orm.em.fork().findOne(MediaFile, source.file.id)).to.equal(null);
    });
  });

  describe('422 bounds (duration_ms 4000)', () => {
    let itemId: string;
    before(async () => {
      itemId = (await uploaded(owner.user.id)).items[0]!.id;
    });

    const cases: [string, Record<string, unknown>][] = [
      ['start_ms exceeds duration_ms', { start_ms: 4500 }],
      ['end_ms exceeds duration_ms', { end_ms: 4001 }],
      ["a cut's end_ms exceeds duration_ms", { cuts: [{ start_ms: 3000, end_ms: 5000 }] }],
      ['end_ms <= start_ms', { start_ms: 2000, end_ms: 2000 }],
      ['end_ms <= start_ms (end defaulted to the duration)', { start_ms: 4000 }],
      ["a cut's end_ms <= its start_ms", { cuts: [{ start_ms: 1500, end_ms: 1000 }] }],
      ['cuts removing the whole range', { start_ms: 1000, end_ms: 2000, cuts: [{ start_ms: 500, end_ms: 1500 }, { start_ms: 1400, end_ms: 2500 }] }],
    ];
    for (const [rule, body] of cases) {
      it(`${rule} → 422`, async () => {
        const response = await edit(owner, itemId, body);
        expect(response.status).to.equal(422);
        expect((await json(response)).detail).to.be.a('string').and.not.equal('');
      });
    }

    it('the 422 detail is localized (pt)', async () => {
      const body = { extract_audio: false, save_mode: 'copy', fast_mode: false, end_ms: 9000 };
      const response = await owner.client.post(`/api/v1/media/${itemId}/edit`, body, { headers: { 'Accept-Language': 'pt' } });
      expect(response.status).to.equal(422);
      expect((await json(response)).detail).to.match(/excede a duração/);
    });
  });

  it('a project-scoped item → 422', async () => {
    const source = await uploaded(owner.user.id);
    const em = app.services.orm.em.fork();
    const item = em.create(MediaItem, { id: randomUUID(), userId: owner.user.id, file: source.file.id, scope: 'project', scopeProjectId: randomUUID() });
    await em.flush();
    const response = await edit(owner, item.id, {});
    expect(response.status).to.equal(422);
    expect((await json(response)).detail).to.match(/library/);
  });

  it("another user's item → 404", async () => {
    const stranger = await signUpAndLogin(app);
    const source = await uploaded(owner.user.id);
    const response = await edit(stranger, source.items[0]!.id, {});
    expect(response.status).to.equal(404);
  });

  it('a source not uploaded yet → 409; an image → 422', async () => {
    const em = app.services.orm.em.fork();
    const file = em.create(MediaFile, { id: randomUUID(), uploaderId: owner.user.id, status: 'PENDING', storageKey: 'media/x/source', contentType: 'video/mp4', originalFilename: 'x.mp4', declaredSizeBytes: 1 });
    const item = em.create(MediaItem, { id: randomUUID(), userId: owner.user.id, file, scope: 'library' });
    await em.flush();
    expect((await edit(owner, item.id, {})).status).to.equal(409);

    const image = await uploaded(owner.user.id, await makeImage(dir, 'still.png', { width: 64, height: 64 }), 'image/png');
    expect((await edit(owner, image.items[0]!.id, {})).status).to.equal(422);
  });

  it('spec: a source still processing (duration_ms null) is edited — 202, bounds unchecked — and its job waits for the file, then runs on the bytes the artifact job stored; the worker clamps', async () => {
    const user = await signUpAndLogin(app);
    const clip = await makeVideo(dir, `processing-${randomUUID()}.mp4`, { seconds: 1 });
    // as confirm leaves an upload: PROCESSING, duration unknown, its artifact job not run yet
    const stored = await storeItem(app, user.user.id, clip, 'video/mp4');
    const response = await edit(user, stored.item.id, { end_ms: 60_000, save_mode: 'copy' });
    expect(response.status, await response.clone().text()).to.equal(202);
    const newItemId = (await json(response)).new_media_item_uuid as string;
    const waiting = await app.services.orm.em.fork().findOneOrFail(Job, { userId: user.user.id, program: 'media-edit' });
    expect(waiting.waitsForFileId, 'held back until the source settles').to.equal(stored.file.id);
    expect(waiting.dispatchedAt).to.equal(null);

    await runArtifactJob(app, user.user.id, stored, 'video/mp4');
    const ready = await eventually(async () => {
      const item = await app.services.orm.em.fork().findOneOrFail(MediaItem, newItemId, { populate: ['file'] });
      return item.file.status === 'UPLOADED' || item.file.status === 'FAILED' ? item : undefined;
    }, 'the edit to run once its source is uploaded', 60_000);
    expect(ready.file.status).to.equal('UPLOADED');
    expect(ready.file.durationMs, 'clamped to the source').to.be.at.most(1100);
    const ran = await app.services.orm.em.fork().findOneOrFail(Job, waiting.id);
    expect(ran.waitsForFileId).to.equal(null);
    expect((ran.input as { durationMs: number | null }).durationMs, 'told the duration once known').to.be.a('number');
  });

  it('a source that is still an unfinished upload (PENDING) → 409, nothing queued', async () => {
    const user = await signUpAndLogin(app);
    const presigned = await json(await user.client.post('/api/v1/media/presign', { filename: 'later.mp4', content_type: 'video/mp4', size_bytes: 1000, scope: 'library' }));
    const response = await edit(user, presigned.media_item_id, { end_ms: 1000 });
    expect(response.status).to.equal(409);
    expect(await app.services.orm.em.fork().count(Job, { userId: user.user.id, program: 'media-edit' })).to.equal(0);
  });

  describe('replace reads pending at once ("created with status pending")', () => {
    it('the replaced item reads pending from the 202 until the edit is ready, then uploaded on the edited file', async () => {
      const user = await signUpAndLogin(app);
      const source = await freshSource(user.user.id, 'pending-replace.mp4');
      const itemId = source.items[0]!.id;
      const events = await listenToUser(app.services.bus, user.user.id);
      try {
        expect((await edit(user, itemId, { save_mode: 'replace', start_ms: 100 })).status).to.equal(202);
        const pending = await json(await user.client.get(`/api/v1/media/${itemId}`));
        expect([pending.status, pending.media_file_id]).to.deep.equal(['pending', source.file.id]);
        const listed = await json(await user.client.get('/api/v1/media?items_per_page=100'));
        expect(listed.data.find((view: { uuid: string }) => view.uuid === itemId).status).to.equal('pending');
        await events.next('media_ready');
      } finally {
        await events.close();
      }
      const ready = await json(await user.client.get(`/api/v1/media/${itemId}`));
      expect(ready.status).to.equal('uploaded');
      expect(ready.media_file_id).to.not.equal(source.file.id);
      expect((await app.services.orm.em.fork().findOneOrFail(MediaItem, itemId)).pendingFileId).to.equal(null);
    });

    it('a second replace of an item whose replace is still pending → 409; a copy edit of it is still accepted', async () => {
      const user = await signUpAndLogin(app);
      const source = await freshSource(user.user.id, 'replace-twice.mp4');
      const itemId = source.items[0]!.id;
      const events = await listenToUser(app.services.bus, user.user.id);
      try {
        const [first, second] = await Promise.all([edit(user, itemId, { save_mode: 'replace', end_ms: 1000 }), edit(user, itemId, { save_mode: 'replace', end_ms: 1000 })]);
        expect([first.status, second.status].sort()).to.deep.equal([202, 409]);
        const refused = first.status === 409 ? first : second;
        expect((await json(refused)).detail).to.match(/replacing this item/);
        expect((await edit(user, itemId, { end_ms: 1500 })).status, 'a copy').to.equal(202);
        await eventually(async () => (events.events.filter((event) => event.type === 'media_ready').length >= 2 ? true : undefined), 'both edits ready');
      } finally {
        await events.close();
      }
      expect((await json(await user.client.get(`/api/v1/media/${itemId}`))).status).to.equal('uploaded');
    });

    it('a failed replace: the item reads uploaded again, on its old file, and its owner hears media_failed', async () => {
      const user = await signUpAndLogin(app);
      const source = await freshSource(user.user.id, 'replace-fails.mp4');
      const itemId = source.items[0]!.id;
      // the edit's input asks for a range the worker finds empty once it clamps to the real duration
      await app.services.orm.em.fork().nativeUpdate(MediaFile, { id: source.file.id }, { durationMs: null });
      const events = await listenToUser(app.services.bus, user.user.id);
      try {
        expect((await edit(user, itemId, { save_mode: 'replace', start_ms: 50_000 })).status).to.equal(202);
        expect((await json(await user.client.get(`/api/v1/media/${itemId}`))).status).to.equal('pending');
        expect((await events.next('media_failed')).data).to.include({ media_item_uuid: itemId });
      } finally {
        await events.close();
      }
      const view = await json(await user.client.get(`/api/v1/media/${itemId}`));
      expect([view.status, view.media_file_id]).to.deep.equal(['uploaded', source.file.id]);
    });
  });

  it('an edit whose output is not web-compatible (a 1440p source keeps its height) → media_ready with proxy_status pending, then its proxy job makes it ready', async () => {
    const tall = await makeVideo(dir, 'tall.mp4', { seconds: 1, fps: 10, width: 1080, height: 1440 });
    const source = await uploaded(owner.user.id, tall);
    const events = await listenToUser(app.services.bus, owner.user.id);
    let newItemId: string;
    try {
      const response = await edit(owner, source.items[0]!.id, { start_ms: 100 });
      expect(response.status).to.equal(202);
      newItemId = (await json(response)).new_media_item_uuid;
      const ready = await events.next('media_ready');
      expect(ready.data).to.include({ media_item_uuid: newItemId, proxy_status: 'pending' });
    } finally {
      await events.close();
    }
    const em = app.services.orm.em.fork();
    const fileId = (await em.findOneOrFail(MediaItem, newItemId)).file.id;
    const file = await fileWhen(app.services.orm, fileId, (row) => row.proxyStatus !== 'pending', 30_000);
    expect([file.status, file.height, file.proxyStatus]).to.deep.equal(['UPLOADED', 1440, 'ready']);
    const [proxyJob] = await em.fork().find(Job, { program: 'proxy', mediaFileId: fileId });
    expect(proxyJob?.input).to.deep.equal({ sourceKey: file.storageKey, contentType: file.contentType });
    expect(file.proxyKey).to.equal(`${proxyJob?.outputPrefix}/proxy.mp4`);
    expect(await app.services.storage.sizeOf(file.proxyKey!)).to.be.greaterThan(0);
  });
});
