import { expect } from 'chai';
import { EmailTokens } from '../../api/src/accounts/tokens.ts';
import { json } from '../support/harness.ts';
import { Client, createAccount, type TestAccount } from '../support/users.ts';
import { startAccountsApp, tokenOf, type AccountsTestApp } from './fixtures.ts';

describe('rule 4: logout, password reset and change, e-mail change, verify-password', () => {
  let fixture: AccountsTestApp;
  before(async () => {
    fixture = await startAccountsApp();
  });
  after(() => fixture.close());

  async function sessions(account: TestAccount, count: number): Promise<Client[]> {
    const clients: Client[] = [];
    for (let i = 0; i < count; i++) {
      const client = fixture.client();
      expect((await client.logIn(account.username, account.password)).status).to.equal(200);
      clients.push(client);
    }
    return clients;
  }

  const me = (client: Client) => client.get('/api/v1/users/me');

  describe('logout and logout-all', () => {
    it('logout ends this session only and clears its cookies', async () => {
      const account = await createAccount(fixture.app);
      const [first, second] = await sessions(account, 2);
      const response = await first!.post('/api/v1/auth/logout');
      expect(response.status).to.equal(200);
      expect(response.headers.getSetCookie().join('\n')).to.match(/^session=; .*Max-Age=0/m);
      expect(first!.cookies.has('session')).to.equal(false);
      expect((await me(first!)).status).to.equal(401);
      expect((await me(second!)).status).to.equal(200);
    });

    it("logout-all ends every one of the user's sessions and returns terminated_count", async () => {
      const account = await createAccount(fixture.app);
      const other = await createAccount(fixture.app);
      const clients = await sessions(account, 3);
      const [bystander] = await sessions(other, 1);
      const stolenCookie = clients[1]!.cookies.get('session')!;
      const response = await clients[0]!.post('/api/v1/auth/logout-all');
      expect(response.status).to.equal(200);
      expect(await json(response)).to.deep.equal({ terminated_count: 3 });
      for (const client of clients) expect((await me(client)).status).to.equal(401);
      const replay = await fixture.app.fetch('/api/v1/users/me', { headers: { Cookie: `session=${stolenCookie}` } });
      expect(replay.status, 'an old cookie replayed').to.equal(401);
      expect((await me(bystander!)).status, "another user's session").to.equal(200);
    });
  });

  describe('forgot-password and reset-password', () => {
    it('forgot-password is always 200 with the same answer; only a registered address gets a mail', async () => {
      const account = await createAccount(fixture.app);
      const client = fixture.client();
      const known = await client.post('/api/v1/auth/forgot-password', { email: account.email });
      const unknown = await client.post('/api/v1/auth/forgot-password', { email: `nobody-${Date.now()}@example.test` });
      expect(known.status).to.equal(200);
      expect(unknown.status).to.equal(200);
      expect(await json(known)).to.deep.equal(await json(unknown));
      const mail = await fixture.smtp.waitFor({ to: account.email, subject: /Reset your Cutroom password/ });
      expect(mail.links[0]).to.match(/\/reset-password\?token=/);
    });

    it('reset-password sets the new password and then every session ends', async () => {
      const account = await createAccount(fixture.app);
      const clients = await sessions(account, 2);
      await fixture.client().post('/api/v1/auth/forgot-password', { email: account.email });
      const token = tokenOf(await fixture.smtp.waitFor({ to: account.email, subject: /Reset/ }));
      const reset = await fixture.client().post('/api/v1/auth/reset-password', { token, new_password: 'a brand new password' });
      expect(reset.status).to.equal(200);
      for (const client of clients) expect((await me(client)).status).to.equal(401);
      expect((await fixture.client().logIn(account.username, account.password)).status).to.equal(401);
      expect((await fixture.client().logIn(account.username, 'a brand new password')).status).to.equal(200);
    });

    it('a reset token works once', async () => {
      const account = await createAccount(fixture.app);
      await fixture.client().post('/api/v1/auth/forgot-password', { email: account.email });
      const token = tokenOf(await fixture.smtp.waitFor({ to: account.email, subject: /Reset/ }));
      expect((await fixture.client().post('/api/v1/auth/reset-password', { token, new_password: 'first new password' })).status).to.equal(200);
      const again = await fixture.client().post('/api/v1/auth/reset-password', { token, new_password: 'second new password' });
      expect(again.status).to.equal(400);
      expect((await json(again)).detail).to.equal('This link has already been used.');
    });

    /** Asks for a reset link (from a fresh IP) and returns its token. */
    async function resetToken(account: TestAccount): Promise<string> {
      const since = fixture.smtp.messages.length;
      expect((await fixture.client().post('/api/v1/auth/forgot-password', { email: account.email })).status).to.equal(200);
      return tokenOf(await fixture.smtp.waitFor({ to: account.email, subject: /Reset/, since }));
    }

    it('two reset links: once the newer is used, the older is refused', async () => {
      const account = await createAccount(fixture.app);
      const older = await resetToken(account);
      const newer = await resetToken(account);
      expect(newer).not.to.equal(older);
      expect((await fixture.client().post('/api/v1/auth/reset-password', { token: newer, new_password: 'the newer password' })).status).to.equal(200);
      const stale = await fixture.client().post('/api/v1/auth/reset-password', { token: older, new_password: 'the older password' });
      expect(stale.status).to.equal(400);
      expect((await json(stale)).detail).to.equal('This link is invalid or has expired.');
      expect((await fixture.client().logIn(account.username, 'the older password')).status).to.equal(401);
      expect((await fixture.client().logIn(account.username, 'the newer password')).status).to.equal(200);
    });

    it('a newer reset link replaces an older one even before it is used', async () => {
      const account = await createAccount(fixture.app);
      const older = await resetToken(account);
      const newer = await resetToken(account);
      expect((await fixture.client().post('/api/v1/auth/reset-password', { token: older, new_password: 'the older password' })).status).to.equal(400);
      expect((await fixture.client().post('/api/v1/auth/reset-password', { token: newer, new_password: 'the newer password' })).status).to.equal(200);
    });

    it('a password change refuses an earlier reset link', async () => {
      const account = await createAccount(fixture.app);
      const [client] = await sessions(account, 1);
      const token = await resetToken(account);
      expect((await client!.post('/api/v1/auth/change-password', { current_password: account.password, new_password: 'changed meanwhile' })).status).to.equal(200);
      const stale = await fixture.client().post('/api/v1/auth/reset-password', { token, new_password: 'from the old link' });
      expect(stale.status).to.equal(400);
      expect((await fixture.client().logIn(account.username, 'changed meanwhile')).status).to.equal(200);
    });

    it('a reset token expires after 1 hour (by the service clock)', async () => {
      const account = await createAccount(fixture.app);
      await fixture.client().post('/api/v1/auth/forgot-password', { email: account.email });
      const token = tokenOf(await fixture.smtp.waitFor({ to: account.email, subject: /Reset/ }));
      fixture.clock.advance(3600_000 + 1000);
      const late = await fixture.client().post('/api/v1/auth/reset-password', { token, new_password: 'too late password' });
      expect(late.status).to.equal(400);
      expect((await json(late)).detail).to.equal('This link is invalid or has expired.');
    });

    it('a verification token is not a reset token', async () => {
      const account = await createAccount(fixture.app);
      const tokens = new EmailTokens(fixture.app.services.config.SECRET_KEY, fixture.clock, fixture.app.services.redis);
      const verification = await tokens.issue('verify-email', account.user.id, account.email);
      const response = await fixture.client().post('/api/v1/auth/reset-password', { token: verification, new_password: 'sneaky password' });
      expect(response.status).to.equal(400);
    });
  });

  describe('change-password', () => {
    it('needs the current password (400 without it or when wrong); then every session ends', async () => {
      const account = await createAccount(fixture.app);
      const [client, other] = await sessions(account, 2);
      const missing = await client!.post('/api/v1/auth/change-password', { new_password: 'another password' });
      expect(missing.status).to.equal(400);
      expect((await json(missing)).detail).to.equal('Enter your current password.');
      const wrong = await client!.post('/api/v1/auth/change-password', { current_password: 'nope nope', new_password: 'another password' });
      expect(wrong.status).to.equal(400);
      expect((await me(other!)).status, 'a refused change ends nothing').to.equal(200);

      const changed = await client!.post('/api/v1/auth/change-password', { current_password: account.password, new_password: 'another password' });
      expect(changed.status).to.equal(200);
      expect((await me(client!)).status).to.equal(401);
      expect((await me(other!)).status).to.equal(401);
      expect((await fixture.client().logIn(account.username, 'another password')).status).to.equal(200);
    });
  });

  describe('request-email-change and confirm-email-change', () => {
    it('mails a link to the new address and a notice to the old; the public confirm switches the address', async () => {
      const account = await createAccount(fixture.app);
      const [client] = await sessions(account, 1);
      const newEmail = `new-${account.username}@example.test`;
      const response = await client!.post('/api/v1/auth/request-email-change', { new_email: newEmail.toUpperCase(), password: account.password });
      expect(response.status).to.equal(200);
      const link = await fixture.smtp.waitFor({ to: newEmail, subject: /Confirm your new e-mail/ });
      const notice = await fixture.smtp.waitFor({ to: account.email, subject: /being changed/ });
      expect(notice.text).to.contain(newEmail);
      expect(notice.links.join(' ')).not.to.contain('token=');

      const confirmed = await fixture.client().post('/api/v1/auth/confirm-email-change', { token: tokenOf(link) });
      expect(confirmed.status).to.equal(200);
      expect((await json(await client!.get('/api/v1/users/me'))).email).to.equal(newEmail);
      expect((await fixture.client().logIn(newEmail, account.password)).status).to.equal(200);
      const again = await fixture.client().post('/api/v1/auth/confirm-email-change', { token: tokenOf(link) });
      expect(again.status, 'the link works once').to.equal(400);
    });

    it('a taken new address gets the same answer and the same mails (a link to it, a notice to the old one); confirming is then 409', async () => {
      const account = await createAccount(fixture.app);
      const taken = await createAccount(fixture.app);
      const [client] = await sessions(account, 1);
      const freeEmail = `free-${account.username}@example.test`;
      const free = await client!.post('/api/v1/auth/request-email-change', { new_email: freeEmail, password: account.password });
      const occupied = await client!.post('/api/v1/auth/request-email-change', { new_email: taken.email, password: account.password });
      expect(occupied.status).to.equal(200);
      expect(await json(occupied)).to.deep.equal(await json(free));
      await fixture.app.services.accounts.idle();
      const subjects = (to: string) => fixture.smtp.to(to).map((mail) => mail.subject);
      expect(subjects(freeEmail)).to.deep.equal(['Confirm your new e-mail address for Cutroom']);
      expect(subjects(taken.email), 'the taken address').to.deep.equal(['Confirm your new e-mail address for Cutroom']);
      const notices = fixture.smtp.to(account.email);
      expect(notices.map((mail) => mail.subject), 'notices to the old address').to.deep.equal(['Your Cutroom e-mail address is being changed', 'Your Cutroom e-mail address is being changed']);
      expect(notices.filter((mail) => mail.text.includes(taken.email))).to.have.length(1);
      const confirm = await fixture.client().post('/api/v1/auth/confirm-email-change', { token: tokenOf(fixture.smtp.to(taken.email)[0]!) });
      expect(confirm.status).to.equal(409);
      expect((await json(await client!.get('/api/v1/users/me'))).email).to.equal(account.email);
    });

    it('two e-mail-change links: once the newer is used, the older is refused and the address does not switch back', async () => {
      const account = await createAccount(fixture.app);
      const [client] = await sessions(account, 1);
      const first = `first-${account.username}@example.test`;
      const second = `second-${account.username}@example.test`;
      expect((await client!.post('/api/v1/auth/request-email-change', { new_email: first, password: account.password })).status).to.equal(200);
      expect((await client!.post('/api/v1/auth/request-email-change', { new_email: second, password: account.password })).status).to.equal(200);
      const older = tokenOf(await fixture.smtp.waitFor({ to: first, subject: /Confirm your new e-mail/ }));
      const newer = tokenOf(await fixture.smtp.waitFor({ to: second, subject: /Confirm your new e-mail/ }));
      expect((await fixture.client().post('/api/v1/auth/confirm-email-change', { token: newer })).status).to.equal(200);
      const stale = await fixture.client().post('/api/v1/auth/confirm-email-change', { token: older });
      expect(stale.status).to.equal(400);
      expect((await json(stale)).detail).to.equal('This link is invalid or has expired.');
      expect((await json(await client!.get('/api/v1/users/me'))).email).to.equal(second);
    });

    it('a password change refuses an earlier e-mail-change link', async () => {
      const account = await createAccount(fixture.app);
      const [client] = await sessions(account, 1);
      const wanted = `wanted-${account.username}@example.test`;
      await client!.post('/api/v1/auth/request-email-change', { new_email: wanted, password: account.password });
      const token = tokenOf(await fixture.smtp.waitFor({ to: wanted, subject: /Confirm your new e-mail/ }));
      expect((await client!.post('/api/v1/auth/change-password', { current_password: account.password, new_password: 'changed meanwhile' })).status).to.equal(200);
      expect((await fixture.client().post('/api/v1/auth/confirm-email-change', { token })).status).to.equal(400);
      const [after] = await sessions({ ...account, password: 'changed meanwhile' }, 1);
      expect((await json(await after!.get('/api/v1/users/me'))).email).to.equal(account.email);
    });

    it('a wrong password is 400', async () => {
      const account = await createAccount(fixture.app);
      const [client] = await sessions(account, 1);
      const response = await client!.post('/api/v1/auth/request-email-change', { new_email: 'whatever@example.test', password: 'wrong one' });
      expect(response.status).to.equal(400);
    });

    it('confirm-email-change is 409 if the address was taken since the request', async () => {
      const account = await createAccount(fixture.app);
      const [client] = await sessions(account, 1);
      const wanted = `contested-${account.username}@example.test`;
      await client!.post('/api/v1/auth/request-email-change', { new_email: wanted, password: account.password });
      const token = tokenOf(await fixture.smtp.waitFor({ to: wanted }));
      await createAccount(fixture.app, { email: wanted });
      const response = await fixture.client().post('/api/v1/auth/confirm-email-change', { token });
      expect(response.status).to.equal(409);
      expect((await json(response)).detail).to.equal('That e-mail address is already in use.');
    });
  });

  describe('verify-password', () => {
    it('200 when correct, 400 when wrong, and no side effects', async () => {
      const account = await createAccount(fixture.app);
      const [client] = await sessions(account, 1);
      expect((await client!.post('/api/v1/auth/verify-password', { password: account.password })).status).to.equal(200);
      const wrong = await client!.post('/api/v1/auth/verify-password', { password: 'wrong one' });
      expect(wrong.status).to.equal(400);
      expect((await json(wrong)).detail).to.equal('The password is incorrect.');
      expect((await me(client!)).status, 'session untouched').to.equal(200);
      expect((await fixture.client().logIn(account.username, account.password)).status, 'no lockout counted').to.equal(200);
    });
  });
});
