import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Pool } from 'pg';
import { json } from '../support/harness.ts';
import { openSse } from '../support/sse-stream.ts';
import { Client, createAccount, type SignedIn } from '../support/users.ts';
import { startAccountsApp, type AccountsTestApp } from './fixtures.ts';

type Scope = 'read' | 'write' | 'billing';

interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  scopes: Scope[];
  last_used_at: string | null;
  expires_at: string | null;
}

const KEYS = '/api/v1/users/me/api-keys';

/** A user signed in by cookie (with its CSRF token), as the front end would be. */
async function signedIn(fixture: AccountsTestApp): Promise<SignedIn> {
  const account = await createAccount(fixture.app);
  const client = fixture.client();
  const login = await client.logIn(account.username, account.password);
  expect(login.status).to.equal(200);
  const body = (await login.json()) as SignedIn['view'] & { csrf_token: string; user: SignedIn['view'] };
  return { ...account, view: body.user, client, fetch: client.fetch.bind(client), csrf: body.csrf_token };
}

async function createKey(owner: SignedIn, scopes: Scope[], extra: Record<string, unknown> = {}): Promise<CreatedKey> {
  const response = await owner.client.post(KEYS, { name: `key ${randomBytes(3).toString('hex')}`, scopes, ...extra });
  expect(response.status, await response.clone().text()).to.equal(201);
  return (await response.json()) as CreatedKey;
}

/** A client sending only the key: no cookie, no CSRF token. */
function keyClient(fixture: AccountsTestApp, key: string): Client {
  return fixture.client({ Authorization: `Bearer ${key}` });
}

describe('API keys (issue 24 item 1): made from a session, shown once, stored as a hash, Bearer on every non-public route within its scopes', function () {
  this.timeout(60_000);
  let fixture: AccountsTestApp;

  before(async () => {
    fixture = await startAccountsApp();
  });
  after(async () => {
    await fixture?.close();
  });

  it('the key is shown once, at creation (crk_live_…, no-store); the listing shows its prefix and never the key', async () => {
    const owner = await signedIn(fixture);
    const response = await owner.client.post(KEYS, { name: 'CMS import', scopes: ['read', 'write'] });
    expect(response.status).to.equal(201);
    expect(response.headers.get('cache-control')).to.equal('no-store');
    const created = (await response.json()) as CreatedKey & { name: string };
    expect(created.key).to.match(/^crk_live_[A-Za-z0-9_-]{43}$/);
    expect(created.prefix).to.equal(created.key.slice(0, 17));
    expect(created).to.include({ name: 'CMS import', last_used_at: null, expires_at: null, revoked_at: null });
    const listed = await json(await owner.client.get(KEYS));
    expect(listed.total_count).to.equal(1);
    expect(listed.data[0]).to.deep.equal(Object.fromEntries(Object.entries(created).filter(([name]) => name !== 'key')));
    expect(JSON.stringify(listed)).not.to.include(created.key.slice(17));
  });

  it('creation with an Idempotency-Key makes one key; the replay answers the same record with the key withheld (null), and the key is never kept for replays', async () => {
    const owner = await signedIn(fixture);
    const init = { headers: { 'Idempotency-Key': 'create-cms-key' } };
    const first = await owner.client.post(KEYS, { name: 'CMS', scopes: ['read'] }, init);
    expect(first.status).to.equal(201);
    const created = (await first.json()) as CreatedKey & { id: string };
    const replay = await owner.client.post(KEYS, { name: 'CMS', scopes: ['read'] }, init);
    expect(replay.status).to.equal(201);
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    const replayed = (await replay.json()) as { id: string; key: string | null };
    expect(replayed).to.deep.include({ id: created.id, key: null });
    expect((await json(await owner.client.get(KEYS))).total_count).to.equal(1);
    const kept = await fixture.app.services.orm.em.getConnection().execute<{ body: string }[]>(`select response_body as body from idempotency_keys where key = 'create-cms-key'`);
    expect(kept).to.have.lengthOf(1);
    expect(kept[0]!.body).not.to.include(created.key.slice(17));
  });

  it('only the SHA-256 of the key is stored: no column of its row holds the key or its secret part', async () => {
    const owner = await signedIn(fixture);
    const created = await createKey(owner, ['read']);
    const [row] = await fixture.app.services.orm.em.getConnection().execute<{ key_hash: string; whole: string }[]>(
      'select key_hash, row_to_json(k)::text as whole from api_keys k where id = ?',
      [created.id],
    );
    expect(row!.key_hash).to.equal(createHash('sha256').update(created.key).digest('hex'));
    expect(row!.whole).not.to.include(created.key.slice(17));
  });

  it('a key reads and writes without a CSRF token; a cookie session without one is still 403', async () => {
    const owner = await signedIn(fixture);
    const created = await createKey(owner, ['read', 'write']);
    const withKey = keyClient(fixture, created.key);
    const made = await withKey.post('/api/v1/projects/', { name: 'By key' });
    expect(made.status, await made.clone().text()).to.equal(201);
    const listed = await json(await withKey.get('/api/v1/projects/'));
    expect(listed.data.map((project: { name: string }) => project.name)).to.deep.equal(['By key']);
    const me = await json(await withKey.get('/api/v1/users/me'));
    expect(me.id).to.equal(owner.user.id);

    const cookieOnly = await owner.client.post('/api/v1/projects/', { name: 'No token' }, { headers: { 'X-CSRF-Token': '' } });
    expect(cookieOnly.status).to.equal(403);
    expect((await json(cookieOnly)).detail).to.equal('CSRF token not found');
  });

  it('a key without the scope a request needs → 403 naming the scope (GET → read, other methods → write, billing routes → billing)', async () => {
    const owner = await signedIn(fixture);
    const readOnly = keyClient(fixture, (await createKey(owner, ['read'])).key);
    const writeOnly = keyClient(fixture, (await createKey(owner, ['write'])).key);
    const billing = keyClient(fixture, (await createKey(owner, ['billing'])).key);

    const post = await readOnly.post('/api/v1/projects/', { name: 'Refused' });
    expect(post.status).to.equal(403);
    expect((await json(post)).detail).to.equal('This API key lacks the write scope.');
    const get = await writeOnly.get('/api/v1/projects/');
    expect(get.status).to.equal(403);
    expect((await json(get)).detail).to.equal('This API key lacks the read scope.');
    expect(get.headers.get('www-authenticate')).to.equal('Bearer error="insufficient_scope", scope="read"');
    const status = await readOnly.get('/api/v1/users/me/billing');
    expect(status.status).to.equal(403);
    expect((await json(status)).detail).to.equal('This API key lacks the billing scope.');
    expect((await billing.get('/api/v1/users/me/billing')).status).to.equal(200);
    expect((await billing.get('/api/v1/projects/')).status, 'billing alone does not read projects').to.equal(403);
    const localized = await readOnly.post('/api/v1/projects/', { name: 'Refused' }, { headers: { 'Accept-Language': 'pt' } });
    expect((await json(localized)).detail).to.equal('Esta chave de API não tem o escopo write.');
  });

  it('no key, whatever its scopes, manages keys, changes the password or e-mail, logs out or deletes the account (403)', async () => {
    const owner = await signedIn(fixture);
    const all = keyClient(fixture, (await createKey(owner, ['read', 'write', 'billing'])).key);
    const attempts: [string, Promise<Response>][] = [
      ['create a key', all.post(KEYS, { name: 'minted by a key', scopes: ['read'] })],
      ['list keys', all.get(KEYS)],
      ['revoke a key', all.delete(`${KEYS}/${(await createKey(owner, ['read'])).id}`)],
      ['change the password', all.post('/api/v1/auth/change-password', { current_password: owner.password, new_password: 'another password 1' })],
      ['request an e-mail change', all.post('/api/v1/auth/request-email-change', { new_email: 'x@example.test', password: owner.password })],
      ['verify the password', all.post('/api/v1/auth/verify-password', { password: owner.password })],
      ['log out', all.post('/api/v1/auth/logout')],
      ['log out everywhere', all.post('/api/v1/auth/logout-all')],
      ['delete the account', all.delete('/api/v1/users/me', { password: owner.password })],
    ];
    for (const [what, attempt] of attempts) {
      const response = await attempt;
      expect(response.status, what).to.equal(403);
      expect((await json(response)).detail, what).to.equal('An API key cannot do this: sign in with a password session.');
    }
    expect((await owner.client.get('/api/v1/users/me')).status, 'the account and its session live on').to.equal(200);
    expect((await json(await owner.client.get(KEYS))).total_count, 'no key was minted nor revoked').to.equal(2);
  });

  it('a revoked, an expired, a malformed and an unknown key are each 401 with the same answer', async () => {
    const owner = await signedIn(fixture);
    const revoked = await createKey(owner, ['read']);
    expect((await keyClient(fixture, revoked.key).get('/api/v1/projects/')).status, 'live before revocation').to.equal(200);
    expect((await owner.client.delete(`${KEYS}/${revoked.id}`)).status).to.equal(204);
    expect((await owner.client.delete(`${KEYS}/${revoked.id}`)).status, 'revoking again').to.equal(204);
    const expiring = await createKey(owner, ['read'], { expires_at: new Date(fixture.clock.now().getTime() + 60_000).toISOString() });
    expect((await keyClient(fixture, expiring.key).get('/api/v1/projects/')).status, 'live before expiry').to.equal(200);
    fixture.clock.advance(61_000);
    const unknown = `crk_live_${randomBytes(32).toString('base64url')}`;
    const answers = new Map<string, { status: number; body: unknown; challenge: string | null }>();
    for (const [what, key] of [
      ['revoked', revoked.key],
      ['expired', expiring.key],
      ['unknown', unknown],
      ['malformed', 'not-a-key'],
      ['empty', ''],
      ['a key with one character changed', `${revoked.key.slice(0, -1)}${revoked.key.endsWith('A') ? 'B' : 'A'}`],
    ] as const) {
      const response = await keyClient(fixture, key).get('/api/v1/projects/');
      answers.set(what, { status: response.status, body: await response.json(), challenge: response.headers.get('www-authenticate') });
    }
    for (const [what, answer] of answers) {
      expect(answer, what).to.deep.equal({ status: 401, body: { detail: 'The API key is unknown, revoked or expired.' }, challenge: 'Bearer error="invalid_token"' });
    }
    const listed = await json(await owner.client.get(KEYS));
    const revokedView = listed.data.find((key: { id: string }) => key.id === revoked.id);
    expect(revokedView.revoked_at).to.be.a('string');
  });

  it('each presented key costs one hash and one query, whatever it is: unknown, malformed, revoked or expired (the same path, so the same time)', async () => {
    const owner = await signedIn(fixture);
    const revoked = await createKey(owner, ['read']);
    await owner.client.delete(`${KEYS}/${revoked.id}`);
    const expired = await createKey(owner, ['read'], { expires_at: new Date(fixture.clock.now().getTime() + 1_000).toISOString() });
    fixture.clock.advance(2_000);
    const pool = (await fixture.app.services.orm.em.getConnection().getNativeClient()) as Pool;
    const queries: string[] = [];
    const original = pool.query.bind(pool);
    pool.query = ((...args: Parameters<Pool['query']>) => {
      const [config] = args;
      queries.push(typeof config === 'string' ? config : (config as { text: string }).text);
      return (original as (...inner: unknown[]) => unknown)(...args);
    }) as Pool['query'];
    const cost: Record<string, number> = {};
    try {
      for (const [what, key] of [
        ['unknown', `crk_live_${randomBytes(32).toString('base64url')}`],
        ['malformed', 'x'],
        ['malformed, long', 'y'.repeat(500)],
        ['revoked', revoked.key],
        ['expired', expired.key],
      ] as const) {
        const before = queries.length;
        expect((await keyClient(fixture, key).get('/api/v1/projects/')).status, what).to.equal(401);
        cost[what] = queries.slice(before).filter((text) => text.includes('api_keys')).length;
      }
    } finally {
      pool.query = original;
    }
    expect(cost).to.deep.equal({ unknown: 1, malformed: 1, 'malformed, long': 1, revoked: 1, expired: 1 });
  });

  it('statistically, a malformed, revoked or expired key takes as long to refuse as an unknown one (medians of 200 interleaved lookups within 0.67–1.5×)', async () => {
    const owner = await signedIn(fixture);
    const revoked = await createKey(owner, ['read']);
    await owner.client.delete(`${KEYS}/${revoked.id}`);
    const expired = await createKey(owner, ['read'], { expires_at: new Date(fixture.clock.now().getTime() + 1_000).toISOString() });
    fixture.clock.advance(2_000);
    const { apiKeys } = fixture.app.services.accounts;
    const kinds: Record<string, () => string> = {
      unknown: () => `crk_live_${randomBytes(32).toString('base64url')}`,
      malformed: () => randomBytes(6).toString('hex'),
      revoked: () => revoked.key,
      expired: () => expired.key,
    };
    const samples: Record<string, number[]> = { unknown: [], malformed: [], revoked: [], expired: [] };
    for (let round = 0; round < 220; round++) {
      // A shuffled order each round, so drift on a shared machine falls on every kind alike.
      for (const kind of Object.keys(kinds).sort(() => Math.random() - 0.5)) {
        const presented = kinds[kind]!();
        const started = process.hrtime.bigint();
        expect(await apiKeys.authenticate(presented)).to.equal(null);
        if (round >= 20) samples[kind]!.push(Number(process.hrtime.bigint() - started));
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const ratios = Object.fromEntries(Object.entries(samples).map(([kind, values]) => [kind, median(values) / median(samples.unknown!)]));
    for (const [kind, ratio] of Object.entries(ratios)) expect(ratio, `${kind}: ${JSON.stringify(ratios)}`).to.be.within(0.67, 1.5);
  });

  it('last_used_at is set on use and moves at most once a minute', async () => {
    const owner = await signedIn(fixture);
    const created = await createKey(owner, ['read']);
    const lastUsed = async () => (await json(await owner.client.get(KEYS))).data.find((key: { id: string }) => key.id === created.id).last_used_at as string | null;
    expect(await lastUsed()).to.equal(null);
    const withKey = keyClient(fixture, created.key);
    await withKey.get('/api/v1/projects/');
    const first = await lastUsed();
    expect(first).to.equal(fixture.clock.now().toISOString());
    fixture.clock.advance(30_000);
    await withKey.get('/api/v1/projects/');
    expect(await lastUsed(), 'within the minute').to.equal(first);
    fixture.clock.advance(31_000);
    await withKey.get('/api/v1/projects/');
    expect(await lastUsed(), 'a minute later').to.equal(fixture.clock.now().toISOString());
  });

  it('expires_at must lie in the future (422); scopes are read, write and billing only (422); the name is required', async () => {
    const owner = await signedIn(fixture);
    const past = await owner.client.post(KEYS, { name: 'late', scopes: ['read'], expires_at: new Date(fixture.clock.now().getTime() - 1000).toISOString() });
    expect(past.status).to.equal(422);
    expect((await json(past)).detail).to.equal('expires_at must be in the future.');
    expect((await owner.client.post(KEYS, { name: 'admin', scopes: ['admin'] })).status).to.equal(422);
    expect((await owner.client.post(KEYS, { name: 'none', scopes: [] })).status).to.equal(422);
    expect((await owner.client.post(KEYS, { scopes: ['read'] })).status).to.equal(422);
  });

  it("revoking another user's key is 404 and leaves it working", async () => {
    const owner = await signedIn(fixture);
    const stranger = await signedIn(fixture);
    const created = await createKey(owner, ['read']);
    expect((await stranger.client.delete(`${KEYS}/${created.id}`)).status).to.equal(404);
    expect((await keyClient(fixture, created.key).get('/api/v1/projects/')).status).to.equal(200);
  });

  it('keys die with the account: after DELETE /users/me the key is 401 and its row is gone', async () => {
    const owner = await signedIn(fixture);
    const created = await createKey(owner, ['read', 'write']);
    expect((await owner.client.delete('/api/v1/users/me', { password: owner.password })).status).to.equal(204);
    expect((await keyClient(fixture, created.key).get('/api/v1/projects/')).status).to.equal(401);
    const rows = await fixture.app.services.orm.em.getConnection().execute('select id from api_keys where id = ?', [created.id]);
    expect(rows).to.deep.equal([]);
  });

  it('a password change revokes every key of the user (decided: a key minted from a stolen session must not outlive the password)', async () => {
    const owner = await signedIn(fixture);
    const created = await createKey(owner, ['read']);
    const changed = await owner.client.post('/api/v1/auth/change-password', { current_password: owner.password, new_password: 'a brand new password' });
    expect(changed.status).to.equal(200);
    expect((await keyClient(fixture, created.key).get('/api/v1/projects/')).status).to.equal(401);
  });

  it('API_KEYS_MAX_PER_USER live keys at most: one more is 409; a revoked one frees its place', async () => {
    const limited = await startAccountsApp({ API_KEYS_MAX_PER_USER: '2' });
    try {
      const owner = await signedIn(limited);
      const first = await createKey(owner, ['read']);
      await createKey(owner, ['read']);
      const third = await owner.client.post(KEYS, { name: 'third', scopes: ['read'] });
      expect(third.status).to.equal(409);
      expect((await json(third)).detail).to.equal('You hold 2 live API keys already. Revoke one first.');
      await owner.client.delete(`${KEYS}/${first.id}`);
      await createKey(owner, ['read']);
    } finally {
      await limited.close();
    }
  });

  it('the event streams accept a key with the read scope, refuse one without it (403), and end when the key is revoked', async () => {
    const streaming = await startAccountsApp({ SSE_KEEPALIVE_SECONDS: '1' });
    try {
      const owner = await signedIn(streaming);
      const reader = await createKey(owner, ['read', 'write']);
      const project = await json(await keyClient(streaming, reader.key).post('/api/v1/projects/', { name: 'Streamed' }));
      const writeOnly = await createKey(owner, ['write']);
      const refused = await keyClient(streaming, writeOnly.key).get('/api/v1/user-stream');
      expect(refused.status).to.equal(403);
      expect((await json(refused)).detail).to.equal('This API key lacks the read scope.');

      const userStream = await openSse(keyClient(streaming, reader.key), '/api/v1/user-stream');
      const projectStream = await openSse(keyClient(streaming, reader.key), `/api/v1/projects/${project.uuid}/events`);
      try {
        expect([userStream.response.status, projectStream.response.status]).to.deep.equal([200, 200]);
        await userStream.next((frame) => frame === ': keepalive', 5_000);
        expect((await owner.client.delete(`${KEYS}/${reader.id}`)).status).to.equal(204);
        await Promise.all([userStream.ended(5_000), projectStream.ended(5_000)]);
      } finally {
        userStream.close();
        projectStream.close();
      }
    } finally {
      await streaming.close();
    }
  });
});
