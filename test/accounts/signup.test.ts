import { expect } from 'chai';
import bcrypt from 'bcrypt';
import { decodeJwt } from 'jose';
import { UserRead } from '../../api/src/accounts/schemas.ts';
import { json, startTestApp } from '../support/harness.ts';
import { Client } from '../support/users.ts';
import { eventually } from '../support/wait.ts';
import { newSignup, randomIp, signUpVerified, startAccountsApp, tokenOf, type AccountsTestApp } from './fixtures.ts';

describe('rule 1: signup', () => {
  let fixture: AccountsTestApp;
  before(async () => {
    fixture = await startAccountsApp({ BCRYPT_COST: '5' });
  });
  after(() => fixture.close());

  it('returns 201 with the user, never the password', async () => {
    const signup = newSignup({ email: 'Mixed.Case@Example.Test' });
    const response = await fixture.client().post('/api/v1/users/', { ...signup });
    expect(response.status).to.equal(201);
    const body = await json(response);
    expect(body).to.include({ name: signup.name, username: signup.username, email: 'mixed.case@example.test', email_verified: false, locale: 'en' });
    expect(UserRead.strict().safeParse(body).success, 'exactly the documented user fields').to.equal(true);
    const text = JSON.stringify(body);
    expect(text).not.to.contain(signup.password);
    expect(Object.keys(body).some((key) => /password_hash|^password$/.test(key))).to.equal(false);
  });

  it('hashes the password with bcrypt at the configured cost (BCRYPT_COST)', async () => {
    const signup = newSignup();
    expect((await fixture.client().post('/api/v1/users/', signup)).status).to.equal(201);
    const [row] = await fixture.app.services.orm.em.fork().execute<{ password_hash: string }[]>(
      'select password_hash from users where username = ?',
      [signup.username],
    );
    expect(row!.password_hash).to.match(/^\$2[aby]\$05\$/);
    expect(await bcrypt.compare(signup.password, row!.password_hash)).to.equal(true);
  });

  it('sends a verification e-mail over SMTP whose link verifies the address', async () => {
    const signup = newSignup();
    const client = fixture.client();
    await client.post('/api/v1/users/', signup);
    const mail = await fixture.smtp.waitFor({ to: signup.email, subject: /Confirm your e-mail address/ });
    expect(mail.text).to.contain(signup.name);
    const link = new URL(mail.links[0]!);
    expect(`${link.origin}${link.pathname}`).to.equal(`${fixture.app.services.baseUrl}/studio/verify-email`);

    const before = await client.logIn(signup.username, signup.password);
    expect(before.status, 'login before verification').to.equal(403);
    const verified = await client.post('/api/v1/auth/verify-email', { token: link.searchParams.get('token') });
    expect(verified.status).to.equal(200);
    expect((await client.logIn(signup.username, signup.password)).status).to.equal(200);
  });

  it('verification tokens are signed JWTs that expire after 24 hours (by the service clock)', async () => {
    const signup = newSignup();
    const client = fixture.client();
    await client.post('/api/v1/users/', signup);
    const token = tokenOf(await fixture.smtp.waitFor({ to: signup.email }));
    const claims = decodeJwt(token);
    expect(claims.exp! - claims.iat!).to.equal(24 * 3600);
    expect(claims.aud).to.equal('verify-email');
    const forged = `${token.slice(0, -4)}AAAA`;
    expect((await client.post('/api/v1/auth/verify-email', { token: forged })).status).to.equal(400);

    fixture.clock.advance(24 * 3600 * 1000 + 1000);
    try {
      const late = await client.post('/api/v1/auth/verify-email', { token });
      expect(late.status).to.equal(400);
      expect((await json(late)).detail).to.equal('This link is invalid or has expired.');
    } finally {
      fixture.clock.advance(-(24 * 3600 * 1000 + 1000));
    }
  });

  it('send-verification mails a fresh link to an unverified account and answers 200 for any address', async () => {
    const signup = newSignup();
    const client = fixture.client();
    await client.post('/api/v1/users/', signup);
    await fixture.smtp.waitFor({ to: signup.email });
    const again = await client.post('/api/v1/auth/send-verification', { email: signup.email });
    const unknown = await client.post('/api/v1/auth/send-verification', { email: 'nobody-here@example.test' });
    expect(again.status).to.equal(200);
    expect(unknown.status).to.equal(200);
    expect(await json(again)).to.deep.equal(await json(unknown));
    await eventually(async () => (fixture.smtp.to(signup.email).length >= 2 ? true : undefined), `a second mail to ${signup.email}`, 5000, 20);
    const mails = fixture.smtp.to(signup.email);
    expect(mails).to.have.lengthOf(2);
    expect(tokenOf(mails[1]!)).not.to.equal(tokenOf(mails[0]!));
  });

  it('an address already registered gets the same 201 answer, no second account, and its owner a note', async () => {
    const { signup } = await signUpVerified(fixture);
    const again = newSignup({ email: signup.email.toUpperCase() });
    const response = await fixture.client().post('/api/v1/users/', again);
    expect(response.status).to.equal(201);
    const body = await json(response);
    expect(Object.keys(body).sort()).to.deep.equal(Object.keys(await json(await fixture.client().post('/api/v1/users/', newSignup()))).sort());
    expect(body.email).to.equal(signup.email);
    const note = await fixture.smtp.waitFor({ to: signup.email, subject: /tried to sign up/ });
    expect(note.text).to.contain('/forgot-password');
    const [count] = await fixture.app.services.orm.em.fork().execute<{ n: string }[]>('select count(*) as n from users where email = ?', [signup.email]);
    expect(Number(count!.n)).to.equal(1);
    expect((await fixture.client().logIn(again.username, again.password)).status).to.equal(401);
  });

  it('a second signup with an address still awaiting verification mails that account a fresh verification link', async () => {
    const first = newSignup();
    await fixture.client().post('/api/v1/users/', first);
    await fixture.smtp.waitFor({ to: first.email });
    const since = fixture.smtp.messages.length;
    const again = await fixture.client().post('/api/v1/users/', newSignup({ email: first.email }));
    expect(again.status).to.equal(201);
    const link = await fixture.smtp.waitFor({ to: first.email, since });
    expect((await fixture.client().post('/api/v1/auth/verify-email', { token: tokenOf(link) })).status).to.equal(200);
    expect((await fixture.client().logIn(first.username, first.password)).status, 'the first account, with its password').to.equal(200);
  });

  it('a taken username (in any letter case) is 409', async () => {
    const { signup } = await signUpVerified(fixture);
    const response = await fixture.client().post('/api/v1/users/', newSignup({ username: signup.username.toUpperCase() }));
    expect(response.status).to.equal(409);
    expect((await json(response)).detail).to.equal('That username is taken.');
  });

  it('rejects short passwords and bad addresses with 422', async () => {
    expect((await fixture.client().post('/api/v1/users/', newSignup({ password: 'short' }))).status).to.equal(422);
    expect((await fixture.client().post('/api/v1/users/', newSignup({ email: 'not-an-address' }))).status).to.equal(422);
    expect((await fixture.client().post('/api/v1/users/', newSignup({ password: 'é'.repeat(40) }))).status, 'over 72 bytes').to.equal(422);
  });
});

describe('rule 1: without SMTP_URL every mail goes to the log with its links', () => {
  it('a person trying the service can verify an account from the log', async () => {
    const app = await startTestApp({ TRUST_PROXY: 'true', SMTP_URL: '' });
    try {
      const client = new Client(app, { ip: randomIp() });
      const signup = newSignup();
      expect((await client.post('/api/v1/users/', signup)).status).to.equal(201);
      const line = app.logs.find((entry) => (entry.mail as { to?: string } | undefined)?.to === signup.email);
      expect(line, 'mail log line').to.exist;
      expect(line!.level).to.equal(30);
      const mail = line!.mail as { link: string; apiAction: string; text: string };
      expect(mail.text).to.contain(mail.link);
      expect(mail.apiAction).to.contain('POST /api/v1/auth/verify-email');
      const token = new URL(mail.link).searchParams.get('token');
      expect((await client.post('/api/v1/auth/verify-email', { token })).status).to.equal(200);
      expect((await client.logIn(signup.email, signup.password)).status).to.equal(200);
    } finally {
      await app.close();
    }
  });
});
