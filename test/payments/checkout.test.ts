import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';
import { billingOf, grantsOf, PRICE, startPaymentsWorld, subscribe, type PaymentsWorld } from './payments-fixtures.ts';

describe('payments: getting a paid plan (Stripe Checkout, made real by the webhook)', () => {
  let world: PaymentsWorld;
  before(async () => {
    world = await startPaymentsWorld();
  });
  after(() => world.close());

  it('a Free user starts a subscription through Stripe Checkout: the answer is the session URL; the plan starts only when the webhook confirms payment', async () => {
    const user = await signUpAndLogin(world.app);
    const response = await user.client.post('/api/v1/payments/checkout', { price_id: PRICE.hobbyMonth });
    expect(response.status).to.equal(200);
    const { url } = await json(response);
    expect(url).to.match(/\/pay\/cs_/);
    const [session] = world.stripe.callsTo('POST', /^\/v1\/checkout\/sessions$/);
    expect(session!.params).to.deep.include({ mode: 'subscription', client_reference_id: user.user.id, line_items: [{ price: 'price_hobby_month', quantity: '1' }] });
    expect(await billingOf(user)).to.include({ tier: 'Free', subscription_status: 'none', has_active_plan: false });

    world.stripe.completeCheckout(String(url).split('/pay/')[1]!);
    await world.stripe.settled();
    const status = await billingOf(user);
    expect(status).to.include({ tier: 'Hobby', subscription_status: 'active', has_active_plan: true, billing_interval: 'month', can_access_support: true });
    expect(status.credits.ai_minutes.balance).to.equal(120);
  });

  it('invoice paid grants the month\'s AI-minute allowance by tier (10/120/600/2400); a yearly price brings twelve months at once', async () => {
    const creator = await signUpAndLogin(world.app);
    await subscribe(world, creator, PRICE.creatorMonth);
    const viral = await signUpAndLogin(world.app);
    await subscribe(world, viral, PRICE.viralMonth);
    const hobbyYear = await signUpAndLogin(world.app);
    await subscribe(world, hobbyYear, PRICE.hobbyYear);
    expect((await grantsOf(world.app, creator.user.id, 'allowance:')).map((grant) => grant.minutes)).to.deep.equal([600]);
    expect((await grantsOf(world.app, viral.user.id, 'allowance:')).map((grant) => grant.minutes)).to.deep.equal([2400]);
    expect((await grantsOf(world.app, hobbyYear.user.id, 'allowance:')).map((grant) => grant.minutes)).to.deep.equal([1440]);
    expect(await billingOf(hobbyYear)).to.include({ tier: 'Hobby', billing_interval: 'year' });
  });

  it('the trial converts: checkout during the trial makes the paid plan active at once and the trial minutes stay', async () => {
    const user = await signUpAndLogin(world.app, { trial: true });
    expect(await billingOf(user)).to.include({ tier: 'Creator', subscription_status: 'trialing' });
    await subscribe(world, user, PRICE.viralMonth);
    const status = await billingOf(user);
    expect(status).to.include({ tier: 'Viral', subscription_status: 'active', trial_used: true, has_active_plan: true });
    expect(status.credits.ai_minutes.balance).to.equal(30 + 2400);
  });

  it('unknown price_id → 422', async () => {
    const user = await signUpAndLogin(world.app);
    const response = await user.client.post('/api/v1/payments/checkout', { price_id: 99 });
    expect(response.status).to.equal(422);
    expect((await json(response)).detail).to.match(/price_id 99/);
  });

  it('checkout while a paid plan is active → 409 (upgrades go through confirm-upgrade)', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.hobbyMonth);
    const response = await user.client.post('/api/v1/payments/checkout', { price_id: PRICE.viralMonth });
    expect(response.status).to.equal(409);
  });

  it('deleting the account cancels its live subscription at Stripe', async () => {
    const user = await signUpAndLogin(world.app);
    const subscriptionId = await subscribe(world, user, PRICE.hobbyMonth);
    const response = await user.client.delete('/api/v1/users/me', { password: user.password });
    expect(response.status).to.be.oneOf([200, 204]);
    expect(world.stripe.subscriptions.get(subscriptionId)!.status).to.equal('canceled');
    await world.stripe.settled();
    const rows = await world.app.services.orm.em.fork().execute(`select 1 from payment_customers where user_id = ?`, [user.user.id]);
    expect(rows).to.have.length(0);
  });
});

describe('payments: without Stripe configured', () => {
  it('the payment routes answer 503 payments.not_configured', async () => {
    const { startTestApp } = await import('../support/harness.ts');
    const app = await startTestApp({ STRIPE_SECRET_KEY: '' });
    try {
      const user = await signUpAndLogin(app);
      const response = await user.client.post('/api/v1/payments/checkout', { price_id: PRICE.hobbyMonth });
      expect(response.status).to.equal(503);
      expect((await json(response)).detail).to.match(/not configured/);
    } finally {
      await app.close();
    }
  });
});
