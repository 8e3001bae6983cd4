import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { authorizeAtProvider, IdentityProvider } from '../support/oidc.ts';
import { createAccount, uniqueUsername, Client } from '../support/users.ts';
import { User } from '../../api/src/accounts/entities.ts';
import { newSignup, startAccountsApp, type AccountsTestApp } from './fixtures.ts';

const CALLBACK = '/api/v1/auth/oauth/callback/idp';

describe('rule 5: OpenID Connect sign-in (a real provider on loopback, the whole redirect dance)', () => {
  let idp: IdentityProvider;
  let fixture: AccountsTestApp;
  before(async () => {
    idp = await IdentityProvider.start();
    fixture = await startAccountsApp(idp.env);
    idp.registerClient(`${fixture.app.url}${CALLBACK}`);
  });
  after(async () => {
    await fixture.close();
    await idp.close();
  });

  /** Start at the api, sign in at the provider as `subject`, come back through the callback. */
  async function signIn(client: Client, subject: string): Promise<Response> {
    const start = await client.get('/api/v1/auth/oauth/idp');
    expect(start.status).to.equal(200);
    const { url } = await json(start);
    const callback = await authorizeAtProvider(url, subject, `${fixture.app.url}${CALLBACK}`);
    return client.get(new URL(callback).pathname + new URL(callback).search);
  }

  it('GET /auth/oauth/idp returns { url } carrying state, nonce and PKCE (S256)', async () => {
    const response = await fixture.client().get('/api/v1/auth/oauth/idp');
    const { url } = await json(response);
    const params = new URL(url).searchParams;
    expect(url.startsWith(idp.issuer)).to.equal(true);
    expect(params.get('client_id')).to.equal(idp.clientId);
    expect(params.get('redirect_uri')).to.equal(`${fixture.app.url}${CALLBACK}`);
    expect(params.get('response_type')).to.equal('code');
    expect(params.get('code_challenge_method')).to.equal('S256');
    for (const name of ['state', 'nonce', 'code_challenge']) expect(params.get(name), name).to.be.a('string').with.length.above(20);
    expect(params.get('scope')!.split(' ')).to.include.members(['openid', 'email']);
  });

  it('the callback creates a verified user, grants the trial and starts a session', async () => {
    const subject = `sub-${uniqueUsername()}`;
    idp.accounts.set(subject, { email: `${subject}@idp.example.test`, email_verified: true, name: 'Ida Provider', preferred_username: 'ida.p' });
    const client = fixture.client({ 'Accept-Language': 'pt' });
    const callback = await signIn(client, subject);
    expect(callback.status).to.equal(302);
    expect(callback.headers.get('location')).to.equal(`${fixture.app.url}/`);
    expect(client.cookies.has('session')).to.equal(true);

    const check = await json(await client.get('/api/v1/auth/check-auth'));
    expect(check.authenticated).to.equal(true);
    expect(check.oauth_providers).to.deep.equal(['idp']);
    expect(check.user).to.include({ email: `${subject}@idp.example.test`, email_verified: true, name: 'Ida Provider', has_password: false, locale: 'pt' });
    expect(check.user.username).to.match(/^ida\.p/);
    expect(check.billing).to.include({ tier: 'Creator', subscription_status: 'trialing', trial_used: true });
    expect(check.billing.credits.ai_minutes.balance).to.equal(30);
    // The session carries a working CSRF token.
    expect((await client.patch('/api/v1/users/me', { name: 'Ida P.' })).status).to.equal(200);
    expect(fixture.smtp.to(`${subject}@idp.example.test`), 'no verification mail').to.deep.equal([]);
  });

  it('signing in again finds the same user by its linked identity', async () => {
    const subject = `sub-${uniqueUsername()}`;
    idp.accounts.set(subject, { email: `${subject}@idp.example.test`, email_verified: true });
    const first = fixture.client();
    await signIn(first, subject);
    const firstUser = await json(await first.get('/api/v1/users/me'));
    idp.accounts.set(subject, { email: `changed-${subject}@idp.example.test`, email_verified: true });
    const second = fixture.client();
    expect((await signIn(second, subject)).status).to.equal(302);
    expect((await json(await second.get('/api/v1/users/me'))).id).to.equal(firstUser.id);
  });

  it('links an existing account by its verified e-mail address', async () => {
    const account = await createAccount(fixture.app);
    const subject = `sub-${uniqueUsername()}`;
    idp.accounts.set(subject, { email: account.email, email_verified: true });
    const client = fixture.client();
    expect((await signIn(client, subject)).status).to.equal(302);
    const me = await json(await client.get('/api/v1/users/me'));
    expect(me.id).to.equal(account.user.id);
    expect(me.has_password).to.equal(true);
  });

  it('linking an unverified pre-registered account drops its password and ends its sessions', async () => {
    // Someone signs up with the victim's address and a password of their own, never verifying it.
    const signup = newSignup();
    const squatter = fixture.client();
    expect((await squatter.post('/api/v1/users/', signup)).status).to.equal(201);
    expect((await fixture.client().logIn(signup.username, signup.password)).status, 'password right, address unverified').to.equal(403);
    const em = fixture.app.services.orm.em.fork();
    const preRegistered = await em.findOneOrFail(User, { email: signup.email });
    // Unverified accounts cannot log in, so a session of theirs is made directly: any that exist must end.
    const started = await fixture.app.services.accounts.startSession(preRegistered, false);
    const oldSession = new Client(fixture.app);
    oldSession.cookies.set('session', started.cookie);
    oldSession.cookies.set('csrf_token', started.csrfToken);
    expect((await json(await oldSession.get('/api/v1/auth/check-auth'))).authenticated, 'old session before').to.equal(true);

    // The address's owner signs in through the provider, which has verified the address.
    const subject = `sub-${uniqueUsername()}`;
    idp.accounts.set(subject, { email: signup.email, email_verified: true });
    const owner = fixture.client();
    expect((await signIn(owner, subject)).status).to.equal(302);

    const check = await json(await owner.get('/api/v1/auth/check-auth'));
    expect(check.authenticated).to.equal(true);
    expect(check.user).to.include({ id: preRegistered.id, email: signup.email, email_verified: true, has_password: false });
    expect((await owner.patch('/api/v1/users/me', { name: 'The Real Owner' })).status, 'OIDC session works').to.equal(200);

    expect((await fixture.client().logIn(signup.username, signup.password)).status, 'old password by username').to.equal(401);
    expect((await fixture.client().logIn(signup.email, signup.password)).status, 'old password by address').to.equal(401);
    expect((await json(await oldSession.get('/api/v1/auth/check-auth'))).authenticated, 'old session after').to.equal(false);
    expect(await fixture.app.services.accounts.sessions.endAll(preRegistered.id), 'only the OIDC session is live').to.equal(1);
  });

  it('linking an already verified account keeps its password and sessions', async () => {
    const account = await createAccount(fixture.app);
    const existing = new Client(fixture.app);
    expect((await existing.logIn(account.username, account.password)).status).to.equal(200);
    const subject = `sub-${uniqueUsername()}`;
    idp.accounts.set(subject, { email: account.email, email_verified: true });
    expect((await signIn(fixture.client(), subject)).status).to.equal(302);
    expect((await json(await existing.get('/api/v1/auth/check-auth'))).authenticated).to.equal(true);
    expect((await fixture.client().logIn(account.username, account.password)).status).to.equal(200);
  });

  it('an identity without a verified e-mail address is refused (400), no account made', async () => {
    const subject = `sub-${uniqueUsername()}`;
    idp.accounts.set(subject, { email: `${subject}@idp.example.test`, email_verified: false });
    const client = fixture.client();
    const response = await signIn(client, subject);
    expect(response.status).to.equal(400);
    expect((await json(response)).detail).to.equal('The identity provider did not share a verified e-mail address.');
    expect(client.cookies.has('session')).to.equal(false);
  });

  it('a callback whose state does not match the browser that started it is refused', async () => {
    const subject = `sub-${uniqueUsername()}`;
    idp.accounts.set(subject, { email: `${subject}@idp.example.test`, email_verified: true });
    const victim = fixture.client();
    const start = await json(await fixture.client().get('/api/v1/auth/oauth/idp'));
    const callback = await authorizeAtProvider(start.url, subject, `${fixture.app.url}${CALLBACK}`);
    const response = await victim.get(new URL(callback).pathname + new URL(callback).search);
    expect(response.status).to.equal(400);
    expect(victim.cookies.has('session')).to.equal(false);
  });

  it('a callback is accepted once (state is single-use)', async () => {
    const subject = `sub-${uniqueUsername()}`;
    idp.accounts.set(subject, { email: `${subject}@idp.example.test`, email_verified: true });
    const client = fixture.client();
    const start = await json(await client.get('/api/v1/auth/oauth/idp'));
    const callback = await authorizeAtProvider(start.url, subject, `${fixture.app.url}${CALLBACK}`);
    const path = new URL(callback).pathname + new URL(callback).search;
    const stateCookie = client.cookies.get('oauth_state')!;
    expect((await client.get(path)).status).to.equal(302);
    const replay = await fixture.app.fetch(path, { headers: { Cookie: `oauth_state=${stateCookie}` }, redirect: 'manual' });
    expect(replay.status).to.equal(400);
  });

  it('an OAuth user may set a first password without a current one, then log in with it', async () => {
    const subject = `sub-${uniqueUsername()}`;
    idp.accounts.set(subject, { email: `${subject}@idp.example.test`, email_verified: true, preferred_username: subject });
    const client = fixture.client();
    await signIn(client, subject);
    const me = await json(await client.get('/api/v1/users/me'));
    const response = await client.post('/api/v1/auth/change-password', { new_password: 'my first password' });
    expect(response.status).to.equal(200);
    expect((await fixture.client().logIn(me.username, 'my first password')).status).to.equal(200);
  });
});

describe('rule 5: without OIDC_ISSUER', () => {
  it('check-auth lists no provider and the start route is 404', async () => {
    const fixture = await startAccountsApp();
    try {
      expect((await json(await fixture.client().get('/api/v1/auth/check-auth'))).oauth_providers).to.deep.equal([]);
      expect((await fixture.client().get('/api/v1/auth/oauth/idp')).status).to.equal(404);
    } finally {
      await fixture.close();
    }
  });
});
