import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startTestApp, json, type TestApp, failCloseOnContractViolations } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { MediaGroup, MediaGroupMembership } from '../../api/src/media-groups/entities.ts';
import { createItem } from './library-fixtures.ts';

describe('media groups: /media-groups and /media/{media_item_id}/groups/{group_id}', () => {
  let app: TestApp;
  let alice: SignedIn;
  let bob: SignedIn;

  before(async () => {
    app = await startTestApp();
    // Every answer of this file is checked against the served document; a violation fails the close (after).
    await failCloseOnContractViolations(app);
    [alice, bob] = await Promise.all([signUpAndLogin(app), signUpAndLogin(app)]);
  });
  after(() => app.close());

  async function create(user: SignedIn, body: Record<string, unknown>) {
    const response = await user.client.post('/api/v1/media-groups', body);
    expect(response.status, await response.clone().text()).to.equal(201);
    return json(response);
  }

  it('POST → 201 with every field; GET one returns it', async () => {
    const group = await create(alice, { name: 'Cats', description: 'Cat b-roll', default_instructions: 'Use on cat mentions', is_default: false, is_pinned: true });
    expect(group).to.deep.include({ name: 'Cats', description: 'Cat b-roll', default_instructions: 'Use on cat mentions', is_default: false, is_pinned: true });
    expect(group.display_order).to.be.a('number');
    expect(await json(await alice.client.get(`/api/v1/media-groups/${group.uuid}`))).to.deep.equal(group);
  });

  it('GET list: paginated, pinned first then by display_order', async () => {
    const user = await signUpAndLogin(app);
    const a = await create(user, { name: 'A' });
    const b = await create(user, { name: 'B' });
    const c = await create(user, { name: 'C', is_pinned: true });
    expect([a.display_order, b.display_order]).to.deep.equal([0, 1]);
    await user.client.patch(`/api/v1/media-groups/${b.uuid}`, { display_order: 0 });
    await user.client.patch(`/api/v1/media-groups/${a.uuid}`, { display_order: 5 });
    const page = await json(await user.client.get('/api/v1/media-groups?items_per_page=2'));
    expect(page).to.include({ total_count: 3, has_more: true, page: 1, items_per_page: 2 });
    expect(page.data.map((g: { name: string }) => g.name)).to.deep.equal(['C', 'B']);
    const next = await json(await user.client.get('/api/v1/media-groups?items_per_page=2&page=2'));
    expect(next.data.map((g: { name: string }) => g.name)).to.deep.equal(['A']);
    expect(c.is_pinned).to.equal(true);
  });

  it('PATCH: any of name, description, default_instructions, is_pinned, display_order; unknown keys or empty name → 422', async () => {
    const group = await create(alice, { name: 'Dogs' });
    const updated = await json(await alice.client.patch(`/api/v1/media-groups/${group.uuid}`, { name: 'Good dogs', description: null, default_instructions: 'Only outdoors', is_pinned: true, display_order: 7 }));
    expect(updated).to.deep.include({ uuid: group.uuid, name: 'Good dogs', description: null, default_instructions: 'Only outdoors', is_pinned: true, display_order: 7 });
    expect((await alice.client.patch(`/api/v1/media-groups/${group.uuid}`, { colour: 'red' })).status).to.equal(422);
    expect((await alice.client.patch(`/api/v1/media-groups/${group.uuid}`, { name: '  ' })).status).to.equal(422);
    expect((await alice.client.post('/api/v1/media-groups', {})).status).to.equal(422);
  });

  it('is_default: at most one default group per user; setting one clears the others (of that user only)', async () => {
    const user = await signUpAndLogin(app);
    const first = await create(user, { name: 'First', is_default: true });
    const bobs = await create(bob, { name: 'Bob default', is_default: true });
    const second = await create(user, { name: 'Second', is_default: true });
    expect((await json(await user.client.get(`/api/v1/media-groups/${first.uuid}`))).is_default).to.equal(false);
    expect(second.is_default).to.equal(true);
    await user.client.patch(`/api/v1/media-groups/${first.uuid}`, { is_default: true });
    const defaults = (await json(await user.client.get('/api/v1/media-groups'))).data.filter((g: { is_default: boolean }) => g.is_default);
    expect(defaults.map((g: { uuid: string }) => g.uuid)).to.deep.equal([first.uuid]);
    expect((await json(await bob.client.get(`/api/v1/media-groups/${bobs.uuid}`))).is_default).to.equal(true);
    // Concurrent requests still leave one default.
    const groups = await Promise.all([1, 2, 3, 4].map((n) => create(user, { name: `Race ${n}` })));
    await Promise.all(groups.map((g) => user.client.patch(`/api/v1/media-groups/${g.uuid}`, { is_default: true })));
    const count = await app.services.orm.em.fork().count(MediaGroup, { userId: user.user.id, isDefault: true });
    expect(count).to.equal(1);
  });

  it('membership: POST → 201 (also when already a member, adding nothing), the item lists under ?group_id and shows the group id; DELETE → 204', async () => {
    const group = await create(alice, { name: 'Members' });
    const { item } = await createItem(app, alice.user.id);
    const added = await alice.client.post(`/api/v1/media/${item.id}/groups/${group.uuid}`);
    expect(added.status).to.equal(201);
    expect(await json(added)).to.include({ media_group_id: group.uuid, media_item_id: item.id });
    expect((await alice.client.post(`/api/v1/media/${item.id}/groups/${group.uuid}`)).status).to.equal(201);
    const listed = await json(await alice.client.get(`/api/v1/media?group_id=${group.uuid}`));
    expect(listed.data.map((i: { uuid: string }) => i.uuid)).to.deep.equal([item.id]);
    expect(listed.data[0].group_ids).to.deep.equal([group.uuid]);
    expect((await alice.client.delete(`/api/v1/media/${item.id}/groups/${group.uuid}`)).status).to.equal(204);
    expect((await json(await alice.client.get(`/api/v1/media?group_id=${group.uuid}`))).data).to.deep.equal([]);
  });

  it('DELETE membership of an item not in the group → 204 (the spec\'s row: the membership is gone either way); a missing item or group, or another user\'s, → 404', async () => {
    const group = await create(alice, { name: 'Never joined' });
    const { item } = await createItem(app, alice.user.id);
    expect((await alice.client.delete(`/api/v1/media/${item.id}/groups/${group.uuid}`)).status).to.equal(204);
    await alice.client.post(`/api/v1/media/${item.id}/groups/${group.uuid}`);
    expect((await alice.client.delete(`/api/v1/media/${item.id}/groups/${group.uuid}`)).status).to.equal(204);
    expect((await alice.client.delete(`/api/v1/media/${item.id}/groups/${group.uuid}`)).status, 'removed twice').to.equal(204);
    expect((await alice.client.delete(`/api/v1/media/${item.id}/groups/${randomUUID()}`)).status).to.equal(404);
    expect((await alice.client.delete(`/api/v1/media/${randomUUID()}/groups/${group.uuid}`)).status).to.equal(404);
    const theirs = await create(bob, { name: 'Not yours' });
    expect((await alice.client.delete(`/api/v1/media/${item.id}/groups/${theirs.uuid}`)).status).to.equal(404);
  });

  it('adding memberships while the group is being deleted → 201 or 404, never a 5xx (25 races); no membership outlives its group', async () => {
    for (let race = 0; race < 25; race++) {
      const group = await create(alice, { name: `Racing ${race}` });
      const items = await Promise.all([1, 2, 3].map(() => createItem(app, alice.user.id)));
      const [deleted, ...added] = await Promise.all([
        alice.client.delete(`/api/v1/media-groups/${group.uuid}`),
        ...items.map(({ item }) => alice.client.post(`/api/v1/media/${item.id}/groups/${group.uuid}`)),
      ]);
      expect(deleted!.status).to.equal(204);
      for (const answer of added) {
        expect([201, 404], `race ${race}: ${await answer.clone().text()}`).to.include(answer.status);
      }
      const left = await app.services.orm.em.fork().count(MediaGroupMembership, { group: group.uuid });
      expect(left, `race ${race}: memberships of the deleted group`).to.equal(0);
    }
  });

  it('an item may belong to several groups', async () => {
    const one = await create(alice, { name: 'One' });
    const two = await create(alice, { name: 'Two' });
    const { item } = await createItem(app, alice.user.id);
    await alice.client.post(`/api/v1/media/${item.id}/groups/${one.uuid}`);
    await alice.client.post(`/api/v1/media/${item.id}/groups/${two.uuid}`);
    expect((await json(await alice.client.get(`/api/v1/media/${item.id}`))).group_ids).to.have.members([one.uuid, two.uuid]);
  });

  it('DELETE group → 204; its items stay but lose the membership', async () => {
    const group = await create(alice, { name: 'Doomed' });
    const { item } = await createItem(app, alice.user.id);
    await alice.client.post(`/api/v1/media/${item.id}/groups/${group.uuid}`);
    expect((await alice.client.delete(`/api/v1/media-groups/${group.uuid}`)).status).to.equal(204);
    expect((await alice.client.get(`/api/v1/media-groups/${group.uuid}`)).status).to.equal(404);
    const view = await json(await alice.client.get(`/api/v1/media/${item.id}`));
    expect(view.uuid).to.equal(item.id);
    expect(view.group_ids).to.deep.equal([]);
    const ungrouped = await json(await alice.client.get('/api/v1/media?ungrouped=true&items_per_page=100'));
    expect(ungrouped.data.map((i: { uuid: string }) => i.uuid)).to.include(item.id);
  });

  it("another user's group → 404 on GET, PATCH, DELETE and membership; another user's item → 404 on membership", async () => {
    const theirs = await create(bob, { name: 'Private' });
    const mine = await create(alice, { name: 'Mine' });
    const { item: myItem } = await createItem(app, alice.user.id);
    const { item: theirItem } = await createItem(app, bob.user.id);
    expect((await alice.client.get(`/api/v1/media-groups/${theirs.uuid}`)).status).to.equal(404);
    expect((await alice.client.patch(`/api/v1/media-groups/${theirs.uuid}`, { name: 'x' })).status).to.equal(404);
    expect((await alice.client.delete(`/api/v1/media-groups/${theirs.uuid}`)).status).to.equal(404);
    expect((await alice.client.post(`/api/v1/media/${myItem.id}/groups/${theirs.uuid}`)).status).to.equal(404);
    expect((await alice.client.post(`/api/v1/media/${theirItem.id}/groups/${mine.uuid}`)).status).to.equal(404);
    expect((await alice.client.get(`/api/v1/media-groups/${randomUUID()}`)).status).to.equal(404);
    expect((await json(await bob.client.get(`/api/v1/media-groups/${theirs.uuid}`))).name).to.equal('Private');
  });

  it('account deletion removes the user\'s groups and memberships', async () => {
    const user = await signUpAndLogin(app);
    await create(user, { name: 'Gone soon' });
    const response = await user.client.delete('/api/v1/users/me', { password: user.password });
    expect(response.status, await response.text()).to.be.oneOf([200, 204]);
    expect(await app.services.orm.em.fork().count(MediaGroup, { userId: user.user.id })).to.equal(0);
  });

  it('without a session → 401', async () => {
    expect((await app.fetch('/api/v1/media-groups')).status).to.equal(401);
  });
});
