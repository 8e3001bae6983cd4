import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { ManualClock } from '../support/clock.ts';
import { signUpAndLogin } from '../support/users.ts';
import { eventually } from '../support/wait.ts';
import { billingOf, grantsOf, startPaymentsWorld, type PaymentsWorld } from './payments-fixtures.ts';

const GRANT = '/api/v1/admin/beta/grant';
const DAY = 86_400_000;

describe('payments: the beta program (POST /api/v1/admin/beta/grant)', () => {
  let world: PaymentsWorld;
  let clock: ManualClock;
  before(async () => {
    clock = new ManualClock();
    world = await startPaymentsWorld({ PAYMENTS_SWEEP_MS: '100', BETA_RENEWAL_DAYS: '30' }, { clock });
  });
  after(() => world.close());

  it('superusers only: 403 for anyone else, 401 without a session', async () => {
    const user = await signUpAndLogin(world.app);
    const body = { user_id: user.user.id, credits: 100, renewal_date: new Date(clock.now().getTime() + 10 * DAY).toISOString() };
    expect((await user.client.post(GRANT, body)).status).to.equal(403);
    expect((await world.app.fetch(GRANT, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).status).to.equal(401);
    expect(await billingOf(user)).to.include({ is_beta: false });
  });

  it('a grant (user by id or e-mail, credits, renewal date) makes the beta fields real, grants the credits and opens support', async () => {
    const admin = await signUpAndLogin(world.app, { superuser: true });
    const tester = await signUpAndLogin(world.app);
    const renewal = new Date(clock.now().getTime() + 10 * DAY);
    const response = await admin.client.post(GRANT, { email: tester.email.toUpperCase(), credits: 150, renewal_date: renewal.toISOString() });
    expect(response.status, await response.clone().text()).to.equal(200);
    const body = await json(response);
    expect(body.user_id).to.equal(tester.user.id);
    expect(body.billing).to.include({ is_beta: true, beta_credits_total: 150, beta_credits_used: 0, beta_renewal_date: renewal.toISOString(), can_access_support: true, tier: 'Free' });
    expect(body.billing.credits.ai_minutes.balance).to.equal(150);
    expect(await billingOf(tester)).to.deep.include({ is_beta: true, can_access_support: true });
  });

  it('beta_credits_used counts the minutes spent since the beta period started', async () => {
    const admin = await signUpAndLogin(world.app, { superuser: true });
    const tester = await signUpAndLogin(world.app);
    await admin.client.post(GRANT, { user_id: tester.user.id, credits: 100, renewal_date: new Date(clock.now().getTime() + 10 * DAY).toISOString() });
    const em = world.app.services.orm.em.fork();
    await world.app.services.billing.reserveCredits(em, tester.user.id, { reference: 'analysis:beta-used', minutes: 12.5 });
    await world.app.services.billing.deductCredits(em, tester.user.id, { reference: 'analysis:beta-used', minutes: 12.5 });
    expect(await billingOf(tester)).to.include({ beta_credits_used: 12.5, beta_credits_total: 100 });
  });

  it('beta credits renew on their date: the credits again, a new period, the next renewal BETA_RENEWAL_DAYS later', async () => {
    const admin = await signUpAndLogin(world.app, { superuser: true });
    const tester = await signUpAndLogin(world.app);
    const renewal = new Date(clock.now().getTime() + 2 * DAY);
    await admin.client.post(GRANT, { user_id: tester.user.id, credits: 40, renewal_date: renewal.toISOString() });
    const em = world.app.services.orm.em.fork();
    await world.app.services.billing.reserveCredits(em, tester.user.id, { reference: 'analysis:beta-renew', minutes: 10 });
    await world.app.services.billing.deductCredits(em, tester.user.id, { reference: 'analysis:beta-renew', minutes: 10 });

    clock.set(new Date(renewal.getTime() + 1000));
    const next = new Date(renewal.getTime() + 30 * DAY);
    const minutes = await eventually(async () => {
      const found = (await grantsOf(world.app, tester.user.id, 'beta:')).map((grant) => grant.minutes);
      return found.length >= 2 ? found : undefined;
    }, 'the renewed beta grant', 5000, 50);
    expect(minutes).to.deep.equal([40, 40]);
    expect((await tester.client.logIn(tester.username, tester.password)).status).to.equal(200);
    const status = await billingOf(tester);
    expect(status).to.include({ beta_renewal_date: next.toISOString(), beta_credits_used: 0, beta_credits_total: 40 });
    expect(status.credits.ai_minutes.balance).to.equal(70);
    // Once per date: further sweeps change nothing until the next one.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await grantsOf(world.app, tester.user.id, 'beta:')).to.have.length(2);
  });

  it('bad bodies: neither or both of user_id and email → 422; a renewal date not in the future → 422; an unknown user → 404', async () => {
    const admin = await signUpAndLogin(world.app, { superuser: true });
    const future = new Date(clock.now().getTime() + DAY).toISOString();
    expect((await admin.client.post(GRANT, { credits: 10, renewal_date: future })).status).to.equal(422);
    expect((await admin.client.post(GRANT, { user_id: admin.user.id, email: admin.email, credits: 10, renewal_date: future })).status).to.equal(422);
    expect((await admin.client.post(GRANT, { user_id: admin.user.id, credits: 10, renewal_date: new Date(clock.now().getTime() - DAY).toISOString() })).status).to.equal(422);
    expect((await admin.client.post(GRANT, { user_id: admin.user.id, credits: -5, renewal_date: future })).status).to.equal(422);
    expect((await admin.client.post(GRANT, { email: 'nobody@example.test', credits: 10, renewal_date: future })).status).to.equal(404);
  });
});
