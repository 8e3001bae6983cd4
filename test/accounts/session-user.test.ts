import { expect } from 'chai';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';

/**
 * The session's user is read with one prepared statement on every authenticated request
 * (no entity, no cache), so whatever changes the row — the api itself or SQL behind its
 * back — shows on the very next request, and the routes that change a user still store it.
 */
describe("the session's user", () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  const sql = (text: string, values: unknown[]) => app.services.orm.em.fork().execute(text, values);

  it('a locale, address, name or superuser change made in the database shows on the next request', async () => {
    const account = await signUpAndLogin(app);
    expect(await json(await account.client.get('/api/v1/users/me'))).to.include({ locale: 'en', is_superuser: false });
    const email = `changed-${account.email}`;
    await sql('update users set locale = ?, email = ?, name = ?, is_superuser = true where id = ?', ['pt', email, 'Renamed', account.user.id]);
    expect(await json(await account.client.get('/api/v1/users/me'))).to.include({ locale: 'pt', email, name: 'Renamed', is_superuser: true });
    const checked = await json(await account.client.get('/api/v1/auth/check-auth'));
    expect(checked.user).to.include({ locale: 'pt', email, is_superuser: true });
  });

  it('PATCH /users/me stores the change (the guard hands handlers a plain copy, the service loads the row) and the next read shows it', async () => {
    const account = await signUpAndLogin(app);
    const patched = await account.client.patch('/api/v1/users/me', { name: 'New Name', locale: 'es' });
    expect(patched.status).to.equal(200);
    expect(await json(patched)).to.include({ name: 'New Name', locale: 'es' });
    const [row] = await sql('select name, locale from users where id = ?', [account.user.id]);
    expect(row).to.deep.equal({ name: 'New Name', locale: 'es' });
    expect(await json(await account.client.get('/api/v1/users/me'))).to.include({ name: 'New Name', locale: 'es' });
  });

  it('a password change is stored: the old password stops working, the new one logs in', async () => {
    const account = await signUpAndLogin(app);
    const changed = await account.client.post('/api/v1/auth/change-password', { current_password: account.password, new_password: 'a brand new password' });
    expect(changed.status).to.equal(200);
    const fresh = await signUpAndLogin(app);
    expect((await fresh.client.logIn(account.username, account.password)).status).to.equal(401);
    expect((await fresh.client.logIn(account.username, 'a brand new password')).status).to.equal(200);
  });

  it('storage used changed by the atomic SQL shows in /users/me at once', async () => {
    const account = await signUpAndLogin(app);
    await sql('update users set storage_used_bytes = storage_used_bytes + ? where id = ?', [12345, account.user.id]);
    expect(await json(await account.client.get('/api/v1/users/me'))).to.include({ storage_used_bytes: 12345 });
  });

  it('a deleted user is 401 on the next request, even with its session still in Redis', async () => {
    const account = await signUpAndLogin(app);
    expect((await account.client.get('/api/v1/projects/')).status).to.equal(200);
    await sql('delete from users where id = ?', [account.user.id]);
    expect((await account.client.get('/api/v1/projects/')).status).to.equal(401);
    expect((await account.client.post('/api/v1/projects/', { name: 'Too late' })).status).to.equal(401);
  });
});
