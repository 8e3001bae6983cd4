import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';
import { makeAudio, makeImage } from '../support/media.ts';
import { putBytes, uploadMedia } from '../support/media-upload.ts';
import { Canvas } from '../../api/src/canvases/entities.ts';
import { MediaFile, MediaItem } from '../../api/src/media/entities.ts';
import { Project } from '../../api/src/projects/entities.ts';

describe('media uploads: scopes and the project spine', function () {
  this.timeout(60_000);
  let app: TestApp;
  let dir: string;
  let clips: string[];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-spine-'));
    app = await startTestApp({ JOB_BACKEND: 'local' });
    clips = [await makeImage(dir, 'a.png', { width: 64, height: 64 }), await makeImage(dir, 'b.png', { width: 96, height: 64 }), await makeAudio(dir, 'c.m4a', { seconds: 1 })];
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const types = ['image/png', 'image/png', 'audio/mp4'];

  async function projectWithThreeItems() {
    const account = await signUpAndLogin(app);
    const project = await json(await account.client.post('/api/v1/projects/', { name: 'Spine' }));
    const items: string[] = [];
    for (const [index, clip] of clips.entries()) {
      items.push((await uploadMedia(account.client, clip, { contentType: types[index]!, scopeProjectId: project.uuid, displayName: `clip ${index}` })).mediaItemId);
    }
    const spine = async () => (await json(await account.client.get(`/api/v1/projects/${project.uuid}/spine`))).data;
    return { account, project, items, spine };
  }

  it('a project item gets a SINGLE canvas at the end of the spine with its CANVAS_FILL media; spine and canvases list them in sequence order', async () => {
    const { account, project, items, spine } = await projectWithThreeItems();
    const listed = await spine();
    expect(listed.map((s: { media_item_id: string }) => s.media_item_id)).to.deep.equal(items);
    expect(listed.map((s: { sequence_position: number }) => s.sequence_position)).to.deep.equal([0, 1, 2]);
    expect(listed[0]).to.include({ display_name: 'clip 0', content_type: 'image/png' });
    expect(listed[0].status).to.be.oneOf(['processing', 'uploaded']);
    const canvases = (await json(await account.client.get(`/api/v1/projects/${project.uuid}/canvases`))).data;
    expect(canvases.map((c: { type: string }) => c.type)).to.deep.equal(['SINGLE', 'SINGLE', 'SINGLE']);
    expect(canvases.map((c: { media: { media_item_id: string; role: string }[] }) => c.media)).to.deep.equal(items.map((id) => [{ media_item_id: id, role: 'CANVAS_FILL' }]));
    const one = await account.client.get(`/api/v1/projects/${project.uuid}/canvases/${canvases[1].uuid}`);
    expect(await json(one)).to.deep.equal(canvases[1]);
    expect((await account.client.get(`/api/v1/projects/${project.uuid}/canvases/${randomUUID()}`)).status).to.equal(404);

    const library = await uploadMedia(account.client, clips[0]!, { contentType: 'image/png' });
    expect(library.mediaItemId).to.be.a('string');
    expect(await spine(), 'a library item stays off the spine').to.have.length(3);
  });

  it('POST /media/reorder re-tiles the SINGLE canvases in the given order; an incomplete list → 422, a composed spine → 409', async () => {
    const { account, project, items, spine } = await projectWithThreeItems();
    const order = [items[2]!, items[0]!, items[1]!];
    const reordered = await account.client.post('/api/v1/media/reorder', { project_id: project.uuid, media_item_ids: order });
    expect(reordered.status).to.equal(204);
    const listed = await spine();
    expect(listed.map((s: { media_item_id: string }) => s.media_item_id)).to.deep.equal(order);
    expect(listed.map((s: { sequence_position: number }) => s.sequence_position)).to.deep.equal([0, 1, 2]);

    for (const ids of [[items[0], items[1]], [...items, items[0]], [items[0], items[1], randomUUID()]]) {
      const refused = await account.client.post('/api/v1/media/reorder', { project_id: project.uuid, media_item_ids: ids });
      expect(refused.status).to.equal(422);
    }
    const other = await signUpAndLogin(app);
    expect((await other.client.post('/api/v1/media/reorder', { project_id: project.uuid, media_item_ids: order })).status).to.equal(404);

    const em = app.services.orm.em.fork();
    em.create(Canvas, { id: randomUUID(), project: em.getReference(Project, project.uuid), type: 'INSERT', sequencePosition: 3 });
    await em.flush();
    const composed = await account.client.post('/api/v1/media/reorder', { project_id: project.uuid, media_item_ids: items });
    expect(composed.status).to.equal(409);
    expect((await spine()).map((s: { media_item_id: string }) => s.media_item_id), 'unchanged').to.deep.equal(order);
  });

  it('deleting a project item removes its canvas and re-tiles the spine (positions stay contiguous)', async () => {
    const { account, project, items, spine } = await projectWithThreeItems();
    expect((await account.client.delete(`/api/v1/media/${items[1]}`)).status).to.equal(204);
    const listed = await spine();
    expect(listed.map((s: { media_item_id: string }) => s.media_item_id)).to.deep.equal([items[0], items[2]]);
    expect(listed.map((s: { sequence_position: number }) => s.sequence_position)).to.deep.equal([0, 1]);
    const canvases = (await json(await account.client.get(`/api/v1/projects/${project.uuid}/canvases`))).data;
    expect(canvases).to.have.length(2);
    const fresh = await uploadMedia(account.client, clips[1]!, { contentType: 'image/png', scopeProjectId: project.uuid });
    expect((await spine()).map((s: { media_item_id: string; sequence_position: number }) => [s.media_item_id, s.sequence_position])).to.deep.equal([
      [items[0], 0],
      [items[2], 1],
      [fresh.mediaItemId, 2],
    ]);
  });

  it('account deletion removes the projects, canvases, items and files of the user', async () => {
    const { account, project, items } = await projectWithThreeItems();
    const deleted = await account.client.delete('/api/v1/users/me', { password: account.password });
    expect(deleted.status).to.be.oneOf([200, 204]);
    const em = app.services.orm.em.fork();
    expect(await em.findOne(Project, project.uuid)).to.equal(null);
    const [row] = await em.execute<{ n: string }[]>(`select count(*) as n from media_items where id in (?, ?, ?)`, items);
    expect(Number(row!.n)).to.equal(0);
  });

  it('account deletion removes stored objects only after its transaction commits: a failing later step leaves rows and objects in place', async () => {
    const account = await signUpAndLogin(app);
    const presigned = await json(await account.client.post('/api/v1/media/presign', { filename: 'kept.png', content_type: 'image/png', size_bytes: 64, scope: 'library' }));
    await putBytes(presigned.upload_url, new Uint8Array(randomBytes(64)), 'image/png');
    const key = (await app.services.orm.em.fork().findOneOrFail(MediaFile, presigned.media_file_id)).uploadKey!;
    let failNext = true;
    // registered after the uploads feature's step, so it runs later in the same transaction
    app.services.accounts.onAccountDeletion(async (_em, user) => {
      if (user.id === account.user.id && failNext) throw new Error('a later deletion step failed');
    });

    const failed = await account.client.delete('/api/v1/users/me', { password: account.password });
    expect(failed.status).to.equal(500);
    const em = app.services.orm.em.fork();
    expect(await em.findOne(MediaFile, presigned.media_file_id), 'the rows are rolled back').to.not.equal(null);
    expect(await em.findOne(MediaItem, presigned.media_item_id)).to.not.equal(null);
    expect(await app.services.storage.sizeOf(key), 'and the object is still stored').to.equal(64);

    failNext = false;
    expect((await account.client.delete('/api/v1/users/me', { password: account.password })).status).to.equal(204);
    expect(await app.services.orm.em.fork().findOne(MediaFile, presigned.media_file_id)).to.equal(null);
    expect(await app.services.storage.sizeOf(key), 'the object goes after the commit').to.equal(null);
  });
});
