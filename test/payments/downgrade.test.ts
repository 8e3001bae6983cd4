import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';
import { billingOf, grantsOf, PRICE, startPaymentsWorld, subscribe, type PaymentsWorld } from './payments-fixtures.ts';

const DOWNGRADE = '/api/v1/payments/subscription/schedule-downgrade';
const UPGRADE = '/api/v1/payments/subscription/confirm-upgrade';

describe('payments: schedule-downgrade', () => {
  let world: PaymentsWorld;
  before(async () => {
    world = await startPaymentsWorld();
  });
  after(() => world.close());

  it('the downgrade takes effect at the end of the billing period; the current tier is kept until then; the billing status shows what is scheduled', async () => {
    const user = await signUpAndLogin(world.app);
    const subscriptionId = await subscribe(world, user, PRICE.creatorMonth);
    const periodEnd = world.stripe.subscriptions.get(subscriptionId)!.periodEnd;

    const response = await user.client.post(DOWNGRADE, { price_id: PRICE.hobbyMonth });
    expect(response.status, await response.clone().text()).to.equal(200);
    const status = await json(response);
    expect(status).to.include({ tier: 'Creator', subscription_status: 'active', can_use_ai_director: true });
    expect(status.scheduled_change).to.deep.equal({ tier: 'Hobby', billing_interval: 'month', effective_at: new Date(periodEnd * 1000).toISOString() });

    // Stripe's own subscription schedule carries it: today's price until the period end, then the new one.
    const schedule = [...world.stripe.schedules.values()].find((candidate) => candidate.subscription === subscriptionId)!;
    expect(schedule.phases.map((phase) => phase.price)).to.deep.equal(['price_creator_month', 'price_hobby_month']);
    expect(schedule.phases[0]!.end_date).to.equal(periodEnd);
    expect(world.stripe.subscriptions.get(subscriptionId)!.price).to.equal('price_creator_month');
    await world.stripe.settled();
    expect(await billingOf(user)).to.include({ tier: 'Creator' });

    world.stripe.renew(subscriptionId);
    await world.stripe.settled();
    const after = await billingOf(user);
    expect(after).to.include({ tier: 'Hobby', subscription_status: 'active', can_use_ai_director: false });
    expect(after.scheduled_change).to.equal(null);
    // The new period's invoice brings the lower tier's allowance.
    expect((await grantsOf(world.app, user.user.id, 'allowance:')).map((grant) => grant.minutes)).to.deep.equal([600, 120]);
  });

  it('an upgrade before the period end cancels the schedule', async () => {
    const user = await signUpAndLogin(world.app);
    const subscriptionId = await subscribe(world, user, PRICE.creatorMonth);
    expect((await user.client.post(DOWNGRADE, { price_id: PRICE.hobbyMonth })).status).to.equal(200);
    const scheduleId = world.stripe.subscriptions.get(subscriptionId)!.schedule!;

    const response = await user.client.post(UPGRADE, { price_id: PRICE.viralMonth });
    expect(response.status).to.equal(200);
    const status = await json(response);
    expect(status).to.include({ tier: 'Viral' });
    expect(status.scheduled_change).to.equal(null);
    expect(world.stripe.schedules.get(scheduleId)!.status).to.equal('released');

    world.stripe.renew(subscriptionId);
    await world.stripe.settled();
    expect(await billingOf(user)).to.include({ tier: 'Viral' });
  });

  it('a later downgrade replaces the scheduled one (one schedule per subscription)', async () => {
    const user = await signUpAndLogin(world.app);
    const subscriptionId = await subscribe(world, user, PRICE.viralMonth);
    expect((await user.client.post(DOWNGRADE, { price_id: PRICE.creatorMonth })).status).to.equal(200);
    const response = await user.client.post(DOWNGRADE, { price_id: PRICE.hobbyMonth });
    expect((await json(response)).scheduled_change).to.include({ tier: 'Hobby' });
    const schedules = [...world.stripe.schedules.values()].filter((candidate) => candidate.subscription === subscriptionId);
    expect(schedules).to.have.length(1);
    expect(schedules[0]!.phases.at(-1)!.price).to.equal('price_hobby_month');
  });

  it('an upgrade price sent to schedule-downgrade → 422 naming confirm-upgrade; without a paid plan → 409', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.hobbyMonth);
    const response = await user.client.post(DOWNGRADE, { price_id: PRICE.creatorMonth });
    expect(response.status).to.equal(422);
    expect((await json(response)).detail).to.match(/confirm-upgrade/);
    const free = await signUpAndLogin(world.app);
    expect((await free.client.post(DOWNGRADE, { price_id: PRICE.hobbyMonth })).status).to.equal(409);
  });
});
