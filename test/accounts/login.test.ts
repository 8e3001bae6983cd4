import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { Client, createAccount } from '../support/users.ts';
import { newSignup, randomIp, startAccountsApp, watchPasswordComparisons, type AccountsTestApp } from './fixtures.ts';

function cookieAttributes(response: Response, name: string): string[] {
  const line = response.headers.getSetCookie().find((candidate) => candidate.startsWith(`${name}=`));
  if (!line) throw new Error(`no ${name} cookie set`);
  return line.split(';').map((part) => part.trim());
}

describe('rule 2: login', () => {
  let fixture: AccountsTestApp;
  before(async () => {
    fixture = await startAccountsApp();
  });
  after(() => fixture.close());

  it('form-encoded username and password: sets the session and csrf_token cookies, returns { csrf_token, user, billing }', async () => {
    const account = await createAccount(fixture.app);
    const client = fixture.client();
    const response = await client.logIn(account.username, account.password);
    expect(response.status).to.equal(200);
    const body = await json(response);
    expect(Object.keys(body).sort()).to.deep.equal(['billing', 'csrf_token', 'user']);
    expect(body.user.username).to.equal(account.username);
    expect(body.billing.tier).to.be.a('string');
    expect(body.csrf_token).to.equal(client.csrf);

    const session = cookieAttributes(response, 'session');
    expect(session).to.include.members(['HttpOnly', 'SameSite=Lax', 'Max-Age=86400', 'Path=/']);
    expect(session).not.to.include('Secure');
    const csrf = cookieAttributes(response, 'csrf_token');
    expect(csrf).not.to.include('HttpOnly');
    expect(csrf).to.include('Max-Age=86400');
  });

  it('the e-mail address works in place of the username, in any letter case', async () => {
    const account = await createAccount(fixture.app);
    const response = await fixture.client().logIn(account.email.toUpperCase(), account.password);
    expect(response.status).to.equal(200);
  });

  it('remember_me=true keeps the session cookie for SESSION_REMEMBER_ME_DAYS (30 days)', async () => {
    const account = await createAccount(fixture.app);
    const client = fixture.client();
    const response = await client.logIn(account.username, account.password, { rememberMe: true });
    expect(cookieAttributes(response, 'session')).to.include(`Max-Age=${30 * 86400}`);
    const check = await json(await client.get('/api/v1/auth/check-auth'));
    expect(check.session.remember_me).to.equal(true);
    expect(Date.parse(check.session.expires_at) - Date.parse(check.session.created_at)).to.equal(30 * 86400 * 1000);
  });

  it('a session ends after SESSION_COOKIE_MAX_AGE (24 h) by the service clock', async () => {
    const { client } = await signedIn(fixture);
    fixture.clock.advance(86400 * 1000 + 1000);
    try {
      expect((await client.get('/api/v1/users/me')).status).to.equal(401);
    } finally {
      fixture.clock.advance(-(86400 * 1000 + 1000));
    }
  });

  it('403 when the e-mail address is not verified (only with the right password)', async () => {
    const signup = newSignup();
    const client = fixture.client();
    await client.post('/api/v1/users/', signup);
    const unverified = await client.logIn(signup.username, signup.password);
    expect(unverified.status).to.equal(403);
    expect((await json(unverified)).detail).to.equal('Verify your e-mail address before logging in.');
    expect(unverified.headers.getSetCookie()).to.deep.equal([]);
    expect((await client.logIn(signup.username, 'wrong password')).status).to.equal(401);
  });

  it('a wrong password or an unknown user is the same 401', async () => {
    const account = await createAccount(fixture.app);
    const wrong = await fixture.client().logIn(account.username, 'not the password');
    const unknown = await fixture.client().logIn('nobody_at_all', 'not the password');
    expect(wrong.status).to.equal(401);
    expect(unknown.status).to.equal(401);
    expect(await json(wrong)).to.deep.equal(await json(unknown));
  });

  it('an unknown username or address, and an account without a password, cost one bcrypt comparison (a decoy) like a known one', async () => {
    const known = await createAccount(fixture.app);
    const passwordless = await fixture.app.services.accounts.createVerifiedAccount(fixture.app.services.orm.em.fork(), {
      name: 'Identity provider only',
      username: `idp_${known.username}`,
      email: `idp-${known.email}`,
      password: null,
      locale: 'en',
    });
    const comparisons = watchPasswordComparisons();
    const cost: Record<string, number> = {};
    try {
      for (const [what, identifier] of [
        ['known username', known.username],
        ['known address', known.email],
        ['unknown username', `nobody_${known.username}`],
        ['unknown address', `nobody-${known.email}`],
        ['account without a password', passwordless.username],
      ] as const) {
        const before = comparisons.started;
        expect((await fixture.client().logIn(identifier, 'not the password')).status, what).to.equal(401);
        cost[what] = comparisons.started - before;
      }
    } finally {
      comparisons.restore();
    }
    expect(cost).to.deep.equal({
      'known username': 1,
      'known address': 1,
      'unknown username': 1,
      'unknown address': 1,
      'account without a password': 1,
    });
  });
});

describe('rule 2: login lockout (Authentication rule 5), driven by the service clock', () => {
  let fixture: AccountsTestApp;
  // Defaults: 5 failures in 900 s; lockout 60 s × 2^round, capped (here at 200 s).
  before(async () => {
    fixture = await startAccountsApp({ LOGIN_LOCKOUT_MAX_SECONDS: '200' });
  });
  after(() => fixture.close());

  const fail = (client: Client, username: string) => client.logIn(username, 'wrong password');
  const failTimes = async (client: Client, username: string, times: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < times; i++) statuses.push((await fail(client, username)).status);
    return statuses;
  };

  it('more than LOGIN_MAX_ATTEMPTS failures within the window → 429 with Retry-After in seconds, not 401', async () => {
    const account = await createAccount(fixture.app);
    const client = fixture.client();
    expect(await failTimes(client, account.username, 5)).to.deep.equal([401, 401, 401, 401, 401]);
    const sixth = await fail(client, account.username);
    expect(sixth.status).to.equal(429);
    expect(sixth.headers.get('retry-after')).to.equal('60');
    expect((await json(sixth)).detail).to.equal('Too many failed logins. Try again in 60 seconds.');
    // Locked out: even the right password is refused until the lockout ends.
    fixture.clock.advance(30_000);
    const during = await client.logIn(account.username, account.password);
    expect(during.status).to.equal(429);
    expect(during.headers.get('retry-after')).to.equal('30');
    fixture.clock.advance(30_000);
    expect((await client.logIn(account.username, account.password)).status).to.equal(200);
  });

  it('failures outside the window are not counted', async () => {
    const account = await createAccount(fixture.app);
    const client = fixture.client();
    await failTimes(client, account.username, 5);
    fixture.clock.advance(901_000);
    expect(await failTimes(client, account.username, 5)).to.deep.equal([401, 401, 401, 401, 401]);
    expect((await fail(client, account.username)).status).to.equal(429);
    fixture.clock.advance(60_000);
  });

  it('each lockout round doubles (60, 120, …) up to LOGIN_LOCKOUT_MAX_SECONDS', async () => {
    const account = await createAccount(fixture.app);
    const client = fixture.client();
    const retryAfters: string[] = [];
    for (const wait of [60, 120, 200, 200]) {
      await failTimes(client, account.username, 5);
      const locked = await fail(client, account.username);
      expect(locked.status).to.equal(429);
      retryAfters.push(locked.headers.get('retry-after')!);
      fixture.clock.advance(wait * 1000);
    }
    expect(retryAfters).to.deep.equal(['60', '120', '200', '200']);
  });

  it('a successful login clears the lockout state (the next lockout is 60 s again)', async () => {
    const account = await createAccount(fixture.app);
    const client = fixture.client();
    await failTimes(client, account.username, 6);
    fixture.clock.advance(60_000);
    expect((await client.logIn(account.username, account.password)).status).to.equal(200);
    expect(await failTimes(client, account.username, 5)).to.deep.equal([401, 401, 401, 401, 401]);
    const locked = await fail(client, account.username);
    expect(locked.headers.get('retry-after')).to.equal('60');
    fixture.clock.advance(60_000);
  });

  it('failures are counted per username: attempts from many IPs lock the account', async () => {
    const account = await createAccount(fixture.app);
    for (let i = 0; i < 5; i++) expect((await fail(fixture.client(), account.username)).status).to.equal(401);
    expect((await fail(fixture.client(), account.username)).status).to.equal(429);
    const elsewhere = await fixture.client().logIn(account.email, account.password);
    expect(elsewhere.status, 'the e-mail names the same account').to.equal(429);
    fixture.clock.advance(60_000);
  });

  it('failures are counted per IP: attempts on many usernames lock the IP', async () => {
    const ip = randomIp();
    const client = new Client(fixture.app, { ip });
    for (let i = 0; i < 5; i++) expect((await fail(client, `someone_${i}_${Date.now()}`)).status).to.equal(401);
    expect((await fail(client, `someone_else_${Date.now()}`)).status).to.equal(429);
    const account = await createAccount(fixture.app);
    expect((await new Client(fixture.app, { ip }).logIn(account.username, account.password)).status).to.equal(429);
    expect((await fixture.client().logIn(account.username, account.password)).status, 'another IP').to.equal(200);
    fixture.clock.advance(60_000);
  });
});

async function signedIn(fixture: AccountsTestApp): Promise<{ client: Client }> {
  const account = await createAccount(fixture.app);
  const client = fixture.client();
  expect((await client.logIn(account.username, account.password)).status).to.equal(200);
  return { client };
}
