import { expect } from 'chai';
import { startTestApp, json, type TestApp, failCloseOnContractViolations } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { AnalysisPreset } from '../../api/src/presets/entities.ts';
import { presetCalls, sharedPresetRules } from './preset-rules.ts';

const PRESETS = '/api/v1/users/me/presets';

/** Every field a POST must carry; director_notes and is_default have defaults. */
function preset(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'Tight talk', pacing_level: 70, false_start_sensitivity: 40, language: 'en', audio_clean: true, censorship_mode: 'bleep', ...overrides };
}

describe('analysis presets: /users/me/presets', () => {
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
  const { create, list } = presetCalls(PRESETS);

  it('POST → 201 with every field, director_notes "" and is_default false by default; GET lists it', async () => {
    const user = await signUpAndLogin(app);
    const created = await create(user, preset({ language: null }));
    expect(created).to.deep.include({ name: 'Tight talk', pacing_level: 70, false_start_sensitivity: 40, language: null, audio_clean: true, censorship_mode: 'bleep', director_notes: '', is_default: false });
    expect(created.uuid).to.be.a('string');
    expect(created.created_at).to.be.a('string');
    expect(await list(user)).to.deep.equal([created]);
  });

  it('POST with a field missing, an unknown key, pacing_level or false_start_sensitivity outside 0-100, a language not ISO 639-1, a censorship_mode not none|mute|bleep or director_notes over 4000 → 422', async () => {
    const refused = [
      { name: 'x' },
      preset({ colour: 'red' }),
      preset({ pacing_level: 101 }),
      preset({ pacing_level: -1 }),
      preset({ pacing_level: 50.5 }),
      preset({ false_start_sensitivity: 101 }),
      preset({ language: 'eng' }),
      preset({ language: 'EN' }),
      preset({ censorship_mode: 'beep' }),
      preset({ director_notes: 'x'.repeat(4001) }),
      preset({ name: '  ' }),
      preset({ audio_clean: 'yes' }),
    ];
    for (const body of refused) {
      const response = await alice.client.post(PRESETS, body);
      expect(response.status, JSON.stringify(body).slice(0, 120)).to.equal(422);
      expect(await json(response)).to.include({ code: 'ValidationError' });
    }
  });

  it('PATCH any fields → 200, the others unchanged; an unknown key or a bound exceeded → 422', async () => {
    const user = await signUpAndLogin(app);
    const created = await create(user, preset());
    const response = await user.client.patch(`${PRESETS}/${created.uuid}`, { pacing_level: 0, language: 'pt', director_notes: 'Keep the jokes', censorship_mode: 'mute' });
    expect(response.status).to.equal(200);
    const patched = await json(response);
    expect(patched).to.deep.include({ uuid: created.uuid, name: 'Tight talk', pacing_level: 0, false_start_sensitivity: 40, language: 'pt', audio_clean: true, censorship_mode: 'mute', director_notes: 'Keep the jokes', is_default: false });
    expect((await user.client.patch(`${PRESETS}/${created.uuid}`, { pacing: 3 })).status).to.equal(422);
    expect((await user.client.patch(`${PRESETS}/${created.uuid}`, { false_start_sensitivity: 200 })).status).to.equal(422);
    expect(await list(user)).to.deep.equal([patched]);
  });

  it("the sixth analysis preset → 403 PresetLimitReached, localized and naming the limit of 5; deleting one frees a slot", async () => {
    const user = await signUpAndLogin(app);
    const five = [];
    for (let n = 1; n <= 5; n++) five.push(await create(user, preset({ name: `P${n}` })));
    const refused = await user.client.post(PRESETS, preset({ name: 'P6' }));
    expect(refused.status).to.equal(403);
    expect(await json(refused)).to.include({ code: 'PresetLimitReached', detail: 'You can keep at most 5 analysis presets. Delete one to create another.' });
    const pt = await user.client.post(PRESETS, preset({ name: 'P6' }), { headers: { 'Accept-Language': 'pt-BR' } });
    expect((await json(pt)).detail).to.equal('Pode guardar no máximo 5 predefinições de análise. Apague uma para criar outra.');
    const es = await user.client.post(PRESETS, preset({ name: 'P6' }), { headers: { 'Accept-Language': 'es' } });
    expect((await json(es)).detail).to.include('como máximo 5');
    expect((await user.client.delete(`${PRESETS}/${five[0].uuid}`)).status).to.equal(204);
    await create(user, preset({ name: 'P6' }));
    expect(await list(user)).to.have.length(5);
  });

  it('10 concurrent creations → exactly five 201 and five 403; 5 stored', async () => {
    const user = await signUpAndLogin(app);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, n) => user.client.post(PRESETS, preset({ name: `Race ${n}` }))));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).to.deep.equal([201, 201, 201, 201, 201, 403, 403, 403, 403, 403]);
    expect(await app.services.orm.em.fork().count(AnalysisPreset, { userId: user.user.id })).to.equal(5);
  });

  it('the limit is per user: a full user does not stop another', async () => {
    const user = await signUpAndLogin(app);
    await Promise.all(Array.from({ length: 5 }, (_, n) => create(user, preset({ name: `Mine ${n}` }))));
    const other = await signUpAndLogin(app);
    await create(other, preset());
  });

  it('is_default: one per user; setting it on one clears the others (of that user only)', async () => {
    const user = await signUpAndLogin(app);
    const first = await create(user, preset({ name: 'First', is_default: true }));
    const bobs = await create(bob, preset({ name: "Bob's", is_default: true }));
    const second = await create(user, preset({ name: 'Second', is_default: true }));
    expect(second.is_default).to.equal(true);
    expect((await list(user)).filter((p) => p.is_default).map((p) => p.uuid)).to.deep.equal([second.uuid]);
    const patched = await json(await user.client.patch(`${PRESETS}/${first.uuid}`, { is_default: true }));
    expect(patched.is_default).to.equal(true);
    expect((await list(user)).filter((p) => p.is_default).map((p) => p.uuid)).to.deep.equal([first.uuid]);
    expect((await list(bob)).find((p) => p.uuid === bobs.uuid)?.is_default).to.equal(true);
    await user.client.patch(`${PRESETS}/${first.uuid}`, { is_default: false });
    expect((await list(user)).filter((p) => p.is_default)).to.deep.equal([]);
  });

  it('is_default race: concurrent PATCHes and creations setting it leave exactly one default (10 rounds)', async () => {
    for (let round = 0; round < 10; round++) {
      const user = await signUpAndLogin(app);
      const existing = await Promise.all([1, 2, 3].map((n) => create(user, preset({ name: `Existing ${n}` }))));
      const answers = await Promise.all([
        ...existing.map((p) => user.client.patch(`${PRESETS}/${p.uuid}`, { is_default: true })),
        ...[1, 2].map((n) => user.client.post(PRESETS, preset({ name: `New ${n}`, is_default: true }))),
      ]);
      expect(answers.map((answer) => answer.status).sort(), `round ${round}`).to.deep.equal([200, 200, 200, 201, 201]);
      expect(await app.services.orm.em.fork().count(AnalysisPreset, { userId: user.user.id, isDefault: true }), `round ${round}`).to.equal(1);
    }
  });

  it('GET lists the default first, then oldest first', async () => {
    const user = await signUpAndLogin(app);
    const a = await create(user, preset({ name: 'A' }));
    const b = await create(user, preset({ name: 'B' }));
    const c = await create(user, preset({ name: 'C' }));
    expect((await list(user)).map((p) => p.name)).to.deep.equal(['A', 'B', 'C']);
    await user.client.patch(`${PRESETS}/${c.uuid}`, { is_default: true });
    expect((await list(user)).map((p) => p.name)).to.deep.equal(['C', 'A', 'B']);
    await user.client.patch(`${PRESETS}/${b.uuid}`, { is_default: true });
    expect((await list(user)).map((p) => p.name)).to.deep.equal(['B', 'A', 'C']);
    expect(a.uuid).to.be.a('string');
  });

  sharedPresetRules(PRESETS, 'analysis_presets', preset, () => ({ app, alice, bob }));
});
