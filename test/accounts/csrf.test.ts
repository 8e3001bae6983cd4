import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { createAccount, type Client } from '../support/users.ts';
import { startAccountsApp, type AccountsTestApp } from './fixtures.ts';

describe('rule 3: CSRF', () => {
  let fixture: AccountsTestApp;
  before(async () => {
    fixture = await startAccountsApp();
  });
  after(() => fixture.close());

  async function loggedIn(options: { rememberMe?: boolean } = {}): Promise<Client> {
    const account = await createAccount(fixture.app);
    const client = fixture.client();
    expect((await client.logIn(account.username, account.password, options)).status).to.equal(200);
    return client;
  }

  const patchName = (client: Client, headers: Record<string, string> = {}) =>
    client.patch('/api/v1/users/me', { name: 'Renamed' }, { headers });

  it('a mutating request with the session and the matching X-CSRF-Token succeeds', async () => {
    const client = await loggedIn();
    expect((await patchName(client)).status).to.equal(200);
  });

  it('a mutating request without the header or with an unknown token → 403 "CSRF token not found"', async () => {
    const client = await loggedIn();
    for (const token of ['', 'not-a-token-we-issued']) {
      const response = await patchName(client, { 'X-CSRF-Token': token });
      expect(response.status, `token "${token}"`).to.equal(403);
      expect(await json(response)).to.deep.equal({ detail: 'CSRF token not found' });
    }
    const pt = await patchName(client, { 'X-CSRF-Token': 'nope', 'Accept-Language': 'pt' });
    expect((await json(pt)).detail).to.equal('Token CSRF não encontrado');
  });

  it("a token issued to another session is not accepted", async () => {
    const first = await loggedIn();
    const second = await loggedIn();
    const response = await patchName(first, { 'X-CSRF-Token': second.csrf! });
    expect(response.status).to.equal(403);
  });

  it('reads need no token; public routes stay public', async () => {
    const client = await loggedIn();
    expect((await client.get('/api/v1/users/me', { headers: { 'X-CSRF-Token': 'x' } })).status).to.equal(200);
    const forgot = await client.post('/api/v1/auth/forgot-password', { email: 'nobody@example.test' }, { headers: { 'X-CSRF-Token': 'x' } });
    expect(forgot.status).to.equal(200);
  });

  it('the token lives SESSION_TIMEOUT_MINUTES (30) without use, and each use extends it', async () => {
    const client = await loggedIn();
    fixture.clock.advance(29 * 60_000);
    expect((await patchName(client)).status, 'used at 29 min').to.equal(200);
    fixture.clock.advance(29 * 60_000);
    expect((await patchName(client)).status, 'used 29 min after the last use').to.equal(200);
    fixture.clock.advance(31 * 60_000);
    expect((await patchName(client)).status, 'idle 31 min').to.equal(403);
  });

  it('a remember-me session keeps its token for SESSION_REMEMBER_ME_DAYS', async () => {
    const client = await loggedIn({ rememberMe: true });
    fixture.clock.advance(2 * 86_400_000);
    try {
      expect((await patchName(client)).status).to.equal(200);
    } finally {
      fixture.clock.advance(-2 * 86_400_000);
    }
  });

  it('GET /auth/check-auth regenerates an unrecognized token, so the next mutation succeeds', async () => {
    const client = await loggedIn();
    const original = client.csrf!;
    fixture.clock.advance(31 * 60_000);
    expect((await patchName(client)).status).to.equal(403);
    const check = await client.get('/api/v1/auth/check-auth');
    expect(check.headers.get('cache-control')).to.equal('no-store');
    const body = await json(check);
    expect(body.csrf_token).to.be.a('string').and.not.equal(original);
    expect(client.csrf, 'the cookie is replaced too').to.equal(body.csrf_token);
    expect((await patchName(client)).status).to.equal(200);
  });

  it('check-auth keeps a recognized token', async () => {
    const client = await loggedIn();
    const before = client.csrf;
    const check = await client.get('/api/v1/auth/check-auth');
    expect((await json(check)).csrf_token).to.equal(before);
    expect(check.headers.getSetCookie()).to.deep.equal([]);
  });

  it('check-auth answers both shapes, always with Cache-Control: no-store', async () => {
    const anonymous = await fixture.client().get('/api/v1/auth/check-auth', { headers: { 'Accept-Language': 'es' } });
    expect(anonymous.status).to.equal(200);
    expect(anonymous.headers.get('cache-control')).to.equal('no-store');
    expect(await json(anonymous)).to.deep.equal({ authenticated: false, message: 'No autenticado.', oauth_providers: [] });

    const client = await loggedIn();
    const check = await client.get('/api/v1/auth/check-auth');
    expect(check.headers.get('cache-control')).to.equal('no-store');
    const body = await json(check);
    expect(Object.keys(body).sort()).to.deep.equal(['authenticated', 'billing', 'csrf_token', 'oauth_providers', 'session', 'user']);
    expect(body.authenticated).to.equal(true);
    expect(Object.keys(body.session).sort()).to.deep.equal(['created_at', 'expires_at', 'remember_me']);
  });

  describe('login CSRF: a browser form posted from another site does not log anyone in', () => {
    const logInWith = async (headers: Record<string, string>) => {
      const account = await createAccount(fixture.app);
      const client = fixture.client();
      const response = await client.postForm('/api/v1/auth/login', { username: account.username, password: account.password }, { headers });
      return { response, client };
    };

    for (const [what, headers] of [
      ['Origin of another site', { Origin: 'https://attacker.example', 'Sec-Fetch-Site': 'cross-site' }],
      ['Origin of another site, no Sec-Fetch-Site', { Origin: 'https://attacker.example' }],
      ['Origin null (a sandboxed or data: page)', { Origin: 'null' }],
      ['Sec-Fetch-Site cross-site, no Origin', { 'Sec-Fetch-Site': 'cross-site' }],
    ] as const) {
      it(`${what} → 403, no session`, async () => {
        const { response, client } = await logInWith(headers);
        expect(response.status).to.equal(403);
        expect((await json(response)).detail).to.equal('Log in from the Cutroom site itself.');
        expect(response.headers.getSetCookie()).to.deep.equal([]);
        expect((await client.get('/api/v1/users/me')).status).to.equal(401);
      });
    }

    for (const [what, headers] of [
      ['the public address as Origin (the front end)', () => ({ Origin: new URL(fixture.app.url).origin, 'Sec-Fetch-Site': 'same-origin' })],
      ['Sec-Fetch-Site same-origin without Origin', () => ({ 'Sec-Fetch-Site': 'same-origin' })],
      ['neither header (an API client)', () => ({})],
    ] as const) {
      it(`${what} → logged in`, async () => {
        const { response } = await logInWith(headers());
        expect(response.status).to.equal(200);
      });
    }
  });
});
