import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';
import { newSignup, signUpVerified, startAccountsApp, type AccountsTestApp } from '../accounts/fixtures.ts';

const DAY = 86_400_000;

describe('rule 6: the trial (7 days, 30 AI minutes, Creator, trialing)', () => {
  let fixture: AccountsTestApp;
  before(async () => {
    fixture = await startAccountsApp();
  });
  after(() => fixture.close());

  it('activate-trial starts it: Creator, trialing, 30 AI minutes, ends in 7 days', async () => {
    const { client } = await signUpAndLogin(fixture.app);
    const before = await json(await client.get('/api/v1/users/me/billing'));
    expect(before).to.include({ tier: 'Free', subscription_status: 'none', trial_used: false, has_active_plan: false, trial_ends_at: null });
    const response = await client.post('/api/v1/users/me/activate-trial');
    expect(response.status).to.equal(200);
    const status = await json(response);
    expect(status).to.include({ tier: 'Creator', subscription_status: 'trialing', trial_used: true, has_active_plan: true, can_use_ai_director: true });
    expect(status.credits.ai_minutes).to.deep.equal({ balance: 30, reserved: 0 });
    expect(Date.parse(status.trial_ends_at) - fixture.clock.now().getTime()).to.equal(7 * DAY);
  });

  it('409 once the trial was used', async () => {
    const { client } = await signUpAndLogin(fixture.app, { trial: true });
    const again = await client.post('/api/v1/users/me/activate-trial');
    expect(again.status).to.equal(409);
    expect((await json(again)).detail).to.equal('The trial has already been used by this account or this e-mail address.');
    expect((await json(await client.get('/api/v1/users/me/billing'))).credits.ai_minutes.balance, 'no second 30 minutes').to.equal(30);
  });

  it('is granted automatically at verify-email (so activate-trial is then 409)', async () => {
    const { client, signup } = await signUpVerified(fixture);
    expect((await client.logIn(signup.username, signup.password)).status).to.equal(200);
    const status = await json(await client.get('/api/v1/users/me/billing'));
    expect(status).to.include({ tier: 'Creator', subscription_status: 'trialing', trial_used: true });
    expect(status.credits.ai_minutes.balance).to.equal(30);
    const welcome = await fixture.smtp.waitFor({ to: signup.email, subject: /Welcome/ });
    expect(welcome.text).to.contain(signup.name);
    expect((await client.post('/api/v1/users/me/activate-trial')).status).to.equal(409);
  });

  it('409 for a new account whose address belonged to a deleted account that used the trial', async () => {
    const email = `comeback-${Date.now()}@example.test`;
    const first = await signUpVerified(fixture, { email });
    expect((await first.client.logIn(first.signup.username, first.signup.password)).status).to.equal(200);
    expect((await first.client.delete('/api/v1/users/me', { password: first.signup.password })).status).to.equal(204);

    const second = await signUpVerified(fixture, { email: email.toUpperCase(), username: `${first.signup.username}_2` });
    expect((await second.client.logIn(email, second.signup.password)).status).to.equal(200);
    const status = await json(await second.client.get('/api/v1/users/me/billing'));
    expect(status, 'no automatic trial at verify-email').to.include({ tier: 'Free', trial_used: true, subscription_status: 'none' });
    expect(status.credits.ai_minutes.balance).to.equal(0);
    const response = await second.client.post('/api/v1/users/me/activate-trial');
    expect(response.status).to.equal(409);
  });

  it('a deleted account that never used the trial does not block it', async () => {
    const signup = newSignup();
    const first = await signUpAndLogin(fixture.app, { email: signup.email, username: signup.username });
    expect((await first.client.delete('/api/v1/users/me', { password: first.password })).status).to.equal(204);
    const second = await signUpAndLogin(fixture.app, { email: signup.email });
    expect((await second.client.post('/api/v1/users/me/activate-trial')).status).to.equal(200);
  });

  it('409 while a paid plan is active', async () => {
    const { client } = await signUpAndLogin(fixture.app, { tier: 'Hobby' });
    const response = await client.post('/api/v1/users/me/activate-trial');
    expect(response.status).to.equal(409);
    expect((await json(response)).detail).to.equal('You already have an active plan.');
  });

  it('a trial that passes trial_ends_at falls back to Free (read with the clock)', async () => {
    const account = await signUpAndLogin(fixture.app, { trial: true });
    const { billing, orm } = fixture.app.services;
    const status = async () => {
      // Days pass: sessions end after 24 h, so look with a fresh one.
      const client = fixture.client();
      expect((await client.logIn(account.username, account.password)).status).to.equal(200);
      return { client, status: await json(await client.get('/api/v1/users/me/billing')) };
    };
    fixture.clock.advance(7 * DAY - 1000);
    try {
      expect((await status()).status.tier).to.equal('Creator');
      fixture.clock.advance(2000);
      const after = await status();
      expect(after.status).to.include({
        tier: 'Free',
        subscription_status: 'none',
        has_active_plan: false,
        trial_used: true,
        can_use_ai_director: false,
        can_watermark_free: false,
        max_projects: 3,
        storage_quota_bytes: 500 * 1024 * 1024,
      });
      expect(await billing.tierOf(orm.em.fork(), account.user.id), 'what other features read').to.equal('Free');
      expect((await after.client.post('/api/v1/users/me/activate-trial')).status, 'still used').to.equal(409);
    } finally {
      fixture.clock.advance(-(7 * DAY + 1000));
    }
  });
});
