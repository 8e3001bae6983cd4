import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { createAccount, signUpAndLogin } from '../support/users.ts';
import { startAccountsApp, type AccountsTestApp } from './fixtures.ts';

describe('rule 6: GET, PATCH and DELETE /api/v1/users/me', () => {
  let fixture: AccountsTestApp;
  const deletedByOtherFeatures: string[] = [];
  before(async () => {
    fixture = await startAccountsApp({ SUPPORTED_LOCALES: 'en,pt' });
    fixture.app.services.accounts.onAccountDeletion(async (_em, user) => {
      deletedByOtherFeatures.push(user.id);
    });
  });
  after(() => fixture.close());

  it('GET /users/me is the logged-in user; 401 without a session', async () => {
    const { client, user } = await signUpAndLogin(fixture.app);
    const me = await client.get('/api/v1/users/me');
    expect(me.status).to.equal(200);
    expect(await json(me)).to.include({ id: user.id, email_verified: true, storage_used_bytes: 0, is_superuser: false });
    expect((await fixture.client().get('/api/v1/users/me')).status).to.equal(401);
  });

  it('PATCH /users/me changes the name and the locale (one of SUPPORTED_LOCALES)', async () => {
    const { client } = await signUpAndLogin(fixture.app);
    const response = await client.patch('/api/v1/users/me', { name: 'Nova Nome', locale: 'pt' });
    expect(response.status).to.equal(200);
    expect(await json(response)).to.include({ name: 'Nova Nome', locale: 'pt' });
    expect(await json(await client.get('/api/v1/users/me'))).to.include({ name: 'Nova Nome', locale: 'pt' });
    expect((await client.patch('/api/v1/users/me', { locale: 'es' })).status, 'es is not in SUPPORTED_LOCALES here').to.equal(422);
    expect((await client.patch('/api/v1/users/me', { locale: 'fr' })).status).to.equal(422);
    expect((await client.patch('/api/v1/users/me', { email: 'x@example.test' })).status, 'only name and locale').to.equal(422);
    expect((await client.patch('/api/v1/users/me', { is_superuser: true })).status).to.equal(422);
  });

  it('DELETE /users/me is password-confirmed (400 without it or when wrong)', async () => {
    const { client } = await signUpAndLogin(fixture.app);
    expect((await client.delete('/api/v1/users/me')).status).to.equal(400);
    expect((await client.delete('/api/v1/users/me', { password: 'not it' })).status).to.equal(400);
    expect((await client.get('/api/v1/users/me')).status).to.equal(200);
  });

  it("DELETE /users/me deletes the account and its data, leaves the hashed-address tombstone, ends every session; a deleted user's session gets 401", async () => {
    const account = await signUpAndLogin(fixture.app, { credits: 12, trial: true });
    const other = fixture.client();
    expect((await other.logIn(account.username, account.password)).status).to.equal(200);
    const response = await account.client.delete('/api/v1/users/me', { password: account.password });
    expect(response.status).to.equal(204);
    expect(deletedByOtherFeatures).to.include(account.user.id);

    const em = fixture.app.services.orm.em.fork();
    for (const table of ['users', 'subscriptions', 'credit_entries', 'user_identities']) {
      const column = table === 'users' ? 'id' : 'user_id';
      const [row] = await em.execute<{ n: string }[]>(`select count(*) as n from ${table} where ${column} = ?`, [account.user.id]);
      expect(Number(row!.n), table).to.equal(0);
    }
    const hash = createHash('sha256').update(account.email).digest('hex');
    const [tombstone] = await em.execute<{ trial_used: boolean; email_hash: string }[]>('select * from deleted_accounts where email_hash = ?', [hash]);
    expect(tombstone).to.include({ trial_used: true });
    expect(JSON.stringify(await em.execute('select * from deleted_accounts'))).not.to.contain(account.email);

    expect((await account.client.get('/api/v1/users/me')).status).to.equal(401);
    expect((await other.get('/api/v1/users/me')).status, "the user's other session").to.equal(401);
    expect((await fixture.client().logIn(account.username, account.password)).status).to.equal(401);
  });

  it('a deletion step\'s returned callback runs after the commit; its failure is logged and does not undo the deletion', async () => {
    const account = await signUpAndLogin(fixture.app);
    const rowsSeenAfterCommit: number[] = [];
    fixture.app.services.accounts.onAccountDeletion(async (_em, user) => {
      if (user.id !== account.user.id) return;
      return async () => {
        const [row] = await fixture.app.services.orm.em.fork().execute<{ n: string }[]>('select count(*) as n from users where id = ?', [user.id]);
        rowsSeenAfterCommit.push(Number(row!.n));
        throw new Error('the store is down');
      };
    });
    expect((await account.client.delete('/api/v1/users/me', { password: account.password })).status).to.equal(204);
    expect(rowsSeenAfterCommit, 'called once, with the user row already gone').to.deep.equal([0]);
  });

  it("a session whose user is gone gets 401, even before its sessions are ended", async () => {
    const { client, user } = await signUpAndLogin(fixture.app);
    await fixture.app.services.orm.em.fork().execute('delete from users where id = ?', [user.id]);
    expect((await client.get('/api/v1/users/me')).status).to.equal(401);
    expect((await client.get('/api/v1/users/me/billing')).status).to.equal(401);
  });

  it('an account without a password (identity provider only) is deleted with its session and CSRF token alone', async () => {
    const em = fixture.app.services.orm.em.fork();
    const account = await createAccount(fixture.app);
    await em.execute('update users set password_hash = null where id = ?', [account.user.id]);
    const session = await fixture.app.services.accounts.startSession(account.user, false);
    const response = await fixture.app.fetch('/api/v1/users/me', {
      method: 'DELETE',
      headers: { Cookie: `session=${session.cookie}`, 'X-CSRF-Token': session.csrfToken },
    });
    expect(response.status).to.equal(204);
  });
});
