import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';
import { billingOf, grantsOf, PRICE, startPaymentsWorld, subscribe, type PaymentsWorld } from './payments-fixtures.ts';

const UPGRADE = '/api/v1/payments/subscription/confirm-upgrade';

describe('payments: confirm-upgrade', () => {
  let world: PaymentsWorld;
  before(async () => {
    world = await startPaymentsWorld();
  });
  afterEach(async () => {
    world.stripe.delayMs = 0;
    world.stripe.declinePayments = false;
    await world.stripe.resume().catch(() => undefined);
  });
  after(() => world.close());

  it('upgrades with proration: the prorated difference is charged immediately (always_invoice) and the new tier replaces the old when Stripe confirms', async () => {
    const user = await signUpAndLogin(world.app);
    const subscriptionId = await subscribe(world, user, PRICE.hobbyMonth);
    const response = await user.client.post(UPGRADE, { price_id: PRICE.creatorMonth });
    expect(response.status, await response.clone().text()).to.equal(200);
    expect(await json(response)).to.include({ tier: 'Creator', subscription_status: 'active', can_use_ai_director: true, max_projects: 100 });

    const [update] = world.stripe.callsTo('POST', new RegExp(`^/v1/subscriptions/${subscriptionId}$`));
    expect(update!.params).to.deep.include({ proration_behavior: 'always_invoice', payment_behavior: 'error_if_incomplete' });
    const invoice = world.stripe.invoices.get(world.stripe.subscriptions.get(subscriptionId)!.latestInvoice!)!;
    expect(invoice).to.include({ billingReason: 'subscription_update', status: 'paid' });
    expect(invoice.lines.map((line) => Math.sign(line.amount))).to.deep.equal([-1, 1]);

    await world.stripe.settled();
    // Old entitlements revoked, new ones granted: the upgrade's invoice tops the month up to Creator's 600 minutes.
    expect((await grantsOf(world.app, user.user.id, 'allowance:')).map((grant) => grant.minutes)).to.deep.equal([120, 480]);
    expect((await billingOf(user)).credits.ai_minutes.balance).to.equal(600);
  });

  it('a failed payment leaves the old tier and says so (402 PaymentDeclined)', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.hobbyMonth);
    world.stripe.declinePayments = true;
    const response = await user.client.post(UPGRADE, { price_id: PRICE.viralMonth });
    expect(response.status).to.equal(402);
    const body = await json(response);
    expect(body.code).to.equal('PaymentDeclined');
    expect(body.detail).to.match(/declined.*Hobby/);
    await world.stripe.settled();
    expect(await billingOf(user)).to.include({ tier: 'Hobby', subscription_status: 'active' });
    expect((await grantsOf(world.app, user.user.id, 'allowance:')).map((grant) => grant.minutes)).to.deep.equal([120]);
  });

  it('a downgrade price sent to confirm-upgrade → 422 naming schedule-downgrade; the same plan → 409; an unknown price_id → 422', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.creatorMonth);
    const down = await user.client.post(UPGRADE, { price_id: PRICE.hobbyMonth });
    expect(down.status).to.equal(422);
    expect((await json(down)).detail).to.match(/schedule-downgrade/);
    expect((await user.client.post(UPGRADE, { price_id: PRICE.creatorMonth })).status).to.equal(409);
    expect((await user.client.post(UPGRADE, { price_id: 0 })).status).to.equal(422);
    expect((await user.client.post(UPGRADE, { price_id: 'three' })).status).to.equal(422);
    expect(await billingOf(user)).to.include({ tier: 'Creator' });
  });

  it('month to year on the same tier is an upgrade charged now', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.creatorMonth);
    const response = await user.client.post(UPGRADE, { price_id: PRICE.creatorYear });
    expect(response.status).to.equal(200);
    expect(await json(response)).to.include({ tier: 'Creator', billing_interval: 'year' });
  });

  it('a Free or trial user has no subscription to upgrade → 409 (they start one through checkout)', async () => {
    const free = await signUpAndLogin(world.app);
    expect((await free.client.post(UPGRADE, { price_id: PRICE.viralMonth })).status).to.equal(409);
    const trial = await signUpAndLogin(world.app, { trial: true });
    expect((await trial.client.post(UPGRADE, { price_id: PRICE.viralMonth })).status).to.equal(409);
  });

  it('two upgrade requests racing → one change at Stripe, one 200 and one 409', async () => {
    const user = await signUpAndLogin(world.app);
    const subscriptionId = await subscribe(world, user, PRICE.hobbyMonth);
    const before = world.stripe.callsTo('POST', new RegExp(`^/v1/subscriptions/${subscriptionId}$`)).length;
    const answers = await Promise.all([user.client.post(UPGRADE, { price_id: PRICE.viralMonth }), user.client.post(UPGRADE, { price_id: PRICE.viralMonth })]);
    expect(answers.map((answer) => answer.status).sort()).to.deep.equal([200, 409]);
    expect(world.stripe.callsTo('POST', new RegExp(`^/v1/subscriptions/${subscriptionId}$`)).length - before).to.equal(1);
    await world.stripe.settled();
    expect((await grantsOf(world.app, user.user.id, 'allowance:')).map((grant) => grant.minutes)).to.deep.equal([120, 2280]);
  });

  it('Stripe down → 503 with a localized detail and a support id; nothing changed', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.hobbyMonth);
    await world.stripe.stop();
    const response = await user.client.post(UPGRADE, { price_id: PRICE.creatorMonth }, { headers: { 'Accept-Language': 'pt' } });
    expect(response.status).to.equal(503);
    const body = await json(response);
    expect(body.detail).to.match(/fornecedor de pagamentos/);
    expect(body.support_id).to.have.length(8);
    await world.stripe.resume();
    expect(await billingOf(user)).to.include({ tier: 'Hobby' });
  });

  it('Stripe slower than STRIPE_TIMEOUT_MS → 503 (es), nothing half-changed, and the next try succeeds', async () => {
    const user = await signUpAndLogin(world.app);
    const subscriptionId = await subscribe(world, user, PRICE.hobbyMonth);
    world.stripe.delayMs = 1500;
    const started = Date.now();
    const response = await user.client.post(UPGRADE, { price_id: PRICE.creatorMonth }, { headers: { 'Accept-Language': 'es' } });
    expect(response.status).to.equal(503);
    expect(Date.now() - started).to.be.below(1450);
    expect((await json(response)).detail).to.match(/proveedor de pagos/);
    await new Promise((resolve) => setTimeout(resolve, 600));
    world.stripe.delayMs = 0;
    expect(world.stripe.subscriptions.get(subscriptionId)!.price).to.equal('price_hobby_month');
    expect(await billingOf(user)).to.include({ tier: 'Hobby' });
    expect((await user.client.post(UPGRADE, { price_id: PRICE.creatorMonth })).status).to.equal(200);
  });
});
