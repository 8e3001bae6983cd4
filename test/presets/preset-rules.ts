import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';

type Body = Record<string, unknown>;

export interface PresetSuite {
  app: TestApp;
  alice: SignedIn;
  bob: SignedIn;
}

/** POST (expecting 201) and GET (expecting 200) on one kind's collection. */
export function presetCalls(path: string) {
  return {
    async create(user: SignedIn, body: Body) {
      const response = await user.client.post(path, body);
      expect(response.status, await response.clone().text()).to.equal(201);
      return json(response);
    },
    async list(user: SignedIn): Promise<Array<{ uuid: string; name: string; is_default?: boolean }>> {
      const response = await user.client.get(path);
      expect(response.status).to.equal(200);
      return (await json(response)).data;
    },
  };
}

/** The rules every kind of preset keeps: owner only, DELETE 204, a session needed, gone with the account. */
export function sharedPresetRules(path: string, table: 'analysis_presets' | 'preview_presets', preset: (overrides?: Body) => Body, suite: () => PresetSuite): void {
  const { create, list } = presetCalls(path);

  it("another user's preset → 404 on PATCH and DELETE (and it stays); a missing one → 404; GET lists only the caller's", async () => {
    const { alice, bob } = suite();
    const theirs = await create(bob, preset({ name: 'Not yours' }));
    for (const response of [
      await alice.client.patch(`${path}/${theirs.uuid}`, { name: 'Mine now' }),
      await alice.client.delete(`${path}/${theirs.uuid}`),
      await alice.client.patch(`${path}/${randomUUID()}`, { name: 'Ghost' }),
      await alice.client.delete(`${path}/${randomUUID()}`),
    ]) {
      expect(response.status).to.equal(404);
      expect(await json(response)).to.include({ detail: 'Preset not found.' });
    }
    expect((await list(bob)).find((p) => p.uuid === theirs.uuid)?.name).to.equal('Not yours');
    expect((await list(alice)).map((p) => p.uuid)).not.to.include(theirs.uuid);
  });

  it('DELETE → 204; the preset is gone (a second DELETE → 404)', async () => {
    const { alice } = suite();
    const created = await create(alice, preset({ name: 'Short-lived' }));
    expect((await alice.client.delete(`${path}/${created.uuid}`)).status).to.equal(204);
    expect((await list(alice)).map((p) => p.uuid)).not.to.include(created.uuid);
    expect((await alice.client.delete(`${path}/${created.uuid}`)).status).to.equal(404);
  });

  it('without a session → 401', async () => {
    expect((await suite().app.fetch(path)).status).to.equal(401);
  });

  it("account deletion removes the user's presets of this kind", async () => {
    const { app } = suite();
    const user = await signUpAndLogin(app);
    await create(user, preset());
    await create(user, preset({ name: 'Second' }));
    expect((await user.client.delete('/api/v1/users/me', { password: user.password })).status).to.equal(204);
    const [left] = await app.services.orm.em.fork().execute(`select count(*)::int as n from ${table} where user_id = ?`, [user.user.id]);
    expect(left).to.deep.equal({ n: 0 });
  });
}
