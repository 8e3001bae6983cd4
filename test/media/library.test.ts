import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { MediaGroup, MediaGroupMembership } from '../../api/src/media-groups/entities.ts';
import { createItem } from './library-fixtures.ts';

describe('media library: GET /media, GET and PATCH /media/{media_item_id}', () => {
  let app: TestApp;
  let alice: SignedIn;
  let bob: SignedIn;

  before(async () => {
    app = await startTestApp();
    [alice, bob] = await Promise.all([signUpAndLogin(app), signUpAndLogin(app)]);
  });
  after(() => app.close());

  const ids = (body: { data: { uuid: string }[] }) => body.data.map((item) => item.uuid);

  async function group(userId: string, itemIds: string[]) {
    const em = app.services.orm.em.fork();
    const row = em.create(MediaGroup, { id: randomUUID(), userId, name: 'B-roll' });
    for (const itemId of itemIds) em.create(MediaGroupMembership, { id: randomUUID(), group: row, item: itemId });
    await em.flush();
    return row.id;
  }

  describe('filters', () => {
    let user: SignedIn;
    const made: Record<string, string> = {};
    const projectId = randomUUID();
    let groupId: string;

    before(async () => {
      user = await signUpAndLogin(app);
      const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n));
      made.library = (await createItem(app, user.user.id, { createdAt: at(1) })).item.id;
      made.project = (await createItem(app, user.user.id, { scope: 'project', scopeProjectId: projectId, createdAt: at(2) })).item.id;
      made.otherProject = (await createItem(app, user.user.id, { scope: 'project', scopeProjectId: randomUUID(), createdAt: at(3) })).item.id;
      made.overlay = (await createItem(app, user.user.id, { behaviorDefaults: { when: 'keyword', keywords: ['cat'] }, createdAt: at(4) })).item.id;
      made.always = (await createItem(app, user.user.id, { behaviorDefaults: { when: 'always' }, createdAt: at(5) })).item.id;
      groupId = await group(user.user.id, [made.library!, made.always!]);
      await createItem(app, bob.user.id, { behaviorDefaults: { when: 'always' } });
    });

    it('without filters: every item of the caller (none of another user), newest first', async () => {
      const body = await json(await user.client.get('/api/v1/media'));
      expect(ids(body)).to.deep.equal([made.always, made.overlay, made.otherProject, made.project, made.library]);
      expect(body.total_count).to.equal(5);
    });

    it('scope=library: library items only; scope=project: project items only', async () => {
      expect(ids(await json(await user.client.get('/api/v1/media?scope=library')))).to.deep.equal([made.always, made.overlay, made.library]);
      expect(ids(await json(await user.client.get('/api/v1/media?scope=project')))).to.deep.equal([made.otherProject, made.project]);
    });

    it("scope_project_id: the items of that project only", async () => {
      expect(ids(await json(await user.client.get(`/api/v1/media?scope=project&scope_project_id=${projectId}`)))).to.deep.equal([made.project]);
    });

    it('group_id: the members of the group; a group of another user → 404', async () => {
      expect(ids(await json(await user.client.get(`/api/v1/media?group_id=${groupId}`)))).to.deep.equal([made.always, made.library]);
      const foreign = await group(bob.user.id, []);
      expect((await user.client.get(`/api/v1/media?group_id=${foreign}`)).status).to.equal(404);
    });

    it('ungrouped=true: items in no group; ungrouped=false filters nothing', async () => {
      expect(ids(await json(await user.client.get('/api/v1/media?ungrouped=true')))).to.deep.equal([made.overlay, made.otherProject, made.project]);
      expect((await json(await user.client.get('/api/v1/media?ungrouped=false'))).total_count).to.equal(5);
    });

    it('behavior_when: items whose behavior_defaults.when equals the value', async () => {
      expect(ids(await json(await user.client.get('/api/v1/media?behavior_when=keyword')))).to.deep.equal([made.overlay]);
      expect(ids(await json(await user.client.get('/api/v1/media?behavior_when=always')))).to.deep.equal([made.always]);
      expect(ids(await json(await user.client.get('/api/v1/media?behavior_when=never')))).to.deep.equal([]);
    });

    it('unconfigured=true: items whose behavior_defaults is empty', async () => {
      expect(ids(await json(await user.client.get('/api/v1/media?unconfigured=true')))).to.deep.equal([made.otherProject, made.project, made.library]);
    });

    it('filters combine (all must hold)', async () => {
      expect(ids(await json(await user.client.get(`/api/v1/media?scope=library&group_id=${groupId}&unconfigured=true`)))).to.deep.equal([made.library]);
    });

    it('a malformed filter value → 422', async () => {
      for (const query of ['scope=elsewhere', 'group_id=nope', 'ungrouped=maybe', 'scope_project_id=1']) {
        expect((await user.client.get(`/api/v1/media?${query}`)).status, query).to.equal(422);
      }
    });
  });

  it('pagination: the envelope { data, total_count, has_more, page, items_per_page }, bounded items_per_page', async () => {
    const user = await signUpAndLogin(app);
    for (let n = 0; n < 5; n++) await createItem(app, user.user.id, { displayName: `clip ${n}`, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)) });
    const first = await json(await user.client.get('/api/v1/media?items_per_page=2'));
    expect(first).to.include({ total_count: 5, has_more: true, page: 1, items_per_page: 2 });
    expect(first.data.map((item: { display_name: string }) => item.display_name)).to.deep.equal(['clip 4', 'clip 3']);
    const last = await json(await user.client.get('/api/v1/media?items_per_page=2&page=3'));
    expect(last).to.include({ total_count: 5, has_more: false, page: 3 });
    expect(last.data.map((item: { display_name: string }) => item.display_name)).to.deep.equal(['clip 0']);
    const beyond = await json(await user.client.get('/api/v1/media?items_per_page=2&page=9'));
    expect(beyond).to.include({ total_count: 5, has_more: false });
    expect(beyond.data).to.deep.equal([]);
    expect((await user.client.get('/api/v1/media?items_per_page=101')).status).to.equal(422);
    expect((await user.client.get('/api/v1/media?page=0')).status).to.equal(422);
  });

  it('read model: item fields joined with the file metadata (status lowercase, duration, waveform peaks, dimensions, proxy_status, group ids)', async () => {
    const { item, file } = await createItem(app, alice.user.id, {
      displayName: 'Beach',
      tags: ['sea'],
      file: { durationMs: 2000, width: 640, height: 360, hasAudio: true, waveformJson: [0.1, 0.5, 0.2], proxyStatus: 'ready', kind: 'video', sizeBytes: 4321 },
    });
    const groupId = await group(alice.user.id, [item.id]);
    const view = await json(await alice.client.get(`/api/v1/media/${item.id}`));
    expect(view).to.deep.include({
      uuid: item.id,
      media_file_id: file.id,
      display_name: 'Beach',
      tags: ['sea'],
      behavior_defaults: {},
      scope: 'library',
      scope_project_id: null,
      status: 'uploaded',
      kind: 'video',
      content_type: 'video/mp4',
      size_bytes: 4321,
      duration_ms: 2000,
      has_audio: true,
      dimensions: { width: 640, height: 360 },
      waveform_peaks: [0.1, 0.5, 0.2],
      proxy_status: 'ready',
      group_ids: [groupId],
    });
    expect(new Date(view.created_at).toISOString()).to.equal(view.created_at);
  });

  it('status: PENDING and MULTIPART_INITIATED read as pending, PROCESSING processing, FAILED failed (with its error)', async () => {
    const expected = { PENDING: 'pending', MULTIPART_INITIATED: 'pending', PROCESSING: 'processing', UPLOADED: 'uploaded', FAILED: 'failed' } as const;
    for (const [status, shown] of Object.entries(expected)) {
      const { item } = await createItem(app, alice.user.id, { file: { status: status as keyof typeof expected, durationMs: null } });
      const view = await json(await alice.client.get(`/api/v1/media/${item.id}`));
      expect(view.status, status).to.equal(shown);
      expect(view.duration_ms).to.equal(null);
    }
  });

  it("another user's item → 404 on GET and PATCH (like a missing one)", async () => {
    const { item } = await createItem(app, bob.user.id);
    expect((await alice.client.get(`/api/v1/media/${item.id}`)).status).to.equal(404);
    expect((await alice.client.patch(`/api/v1/media/${item.id}`, { display_name: 'mine' })).status).to.equal(404);
    expect((await alice.client.get(`/api/v1/media/${randomUUID()}`)).status).to.equal(404);
    expect((await json(await bob.client.get(`/api/v1/media/${item.id}`))).display_name).to.equal(null);
  });

  it('PATCH display_name, tags, behavior_defaults: each replaced whole, others kept', async () => {
    const { item } = await createItem(app, alice.user.id, { displayName: 'Old', tags: ['a'], behaviorDefaults: { when: 'always' } });
    let view = await json(await alice.client.patch(`/api/v1/media/${item.id}`, { display_name: '  New name ' }));
    expect(view).to.deep.include({ display_name: 'New name', tags: ['a'], behavior_defaults: { when: 'always' } });
    view = await json(await alice.client.patch(`/api/v1/media/${item.id}`, { tags: ['x', 'y', 'x'], behavior_defaults: { when: 'keyword', keywords: ['dog'] } }));
    expect(view).to.deep.include({ display_name: 'New name', tags: ['x', 'y'], behavior_defaults: { when: 'keyword', keywords: ['dog'] } });
    view = await json(await alice.client.patch(`/api/v1/media/${item.id}`, { display_name: null, behavior_defaults: {} }));
    expect(view).to.deep.include({ display_name: null, behavior_defaults: {} });
    expect((await json(await alice.client.get(`/api/v1/media/${item.id}`))).tags).to.deep.equal(['x', 'y']);
  });

  it('PATCH bounds: too many or too long tags, oversized or non-object behavior_defaults, unknown keys → 422', async () => {
    const { item } = await createItem(app, alice.user.id);
    const bad = [
      { tags: Array.from({ length: 51 }, (_, n) => `t${n}`) },
      { tags: ['x'.repeat(65)] },
      { tags: [''] },
      { behavior_defaults: { blob: 'x'.repeat(17 * 1024) } },
      { behavior_defaults: ['when'] },
      { display_name: 'x'.repeat(256) },
      { scope: 'project' },
    ];
    for (const body of bad) expect((await alice.client.patch(`/api/v1/media/${item.id}`, body)).status, JSON.stringify(body).slice(0, 60)).to.equal(422);
  });

  it('without a session → 401', async () => {
    expect((await app.fetch('/api/v1/media')).status).to.equal(401);
  });
});
