import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';
import { billingOf, PRICE, startPaymentsWorld, subscribe, type PaymentsWorld } from './payments-fixtures.ts';

const DOWNGRADE = '/api/v1/payments/subscription/schedule-downgrade';

/**
 * Issue 25 item 4: a plan change called Stripe inside a database transaction holding the
 * subscription row lock. With Stripe answering in 1 s, 14 concurrent downgrades of one
 * subscriber exhausted the pool and another user's billing status took 9.6 s. Here Stripe's
 * schedule call is held open by the test (the double's `hold`), so "slow" lasts exactly as
 * long as the assertions need: everything asserted happens while that call is in flight.
 */
describe('attack: 14 concurrent downgrades of one subscriber while Stripe is slow', function () {
  this.timeout(60_000);
  let world: PaymentsWorld;
  before(async () => {
    // a pool smaller than the burst, and a Stripe timeout longer than the test holds the call
    world = await startPaymentsWorld({ DATABASE_POOL_MAX: '5', STRIPE_TIMEOUT_MS: '30000' });
  });
  after(() => world.close());

  it("one proceeds, the other 13 answer 409 at once, and another user's billing status is served while Stripe's call is in flight", async () => {
    const subscriber = await signUpAndLogin(world.app);
    const other = await signUpAndLogin(world.app);
    const subscriptionId = await subscribe(world, subscriber, PRICE.creatorMonth);
    const slow = world.stripe.hold((method, path) => method === 'POST' && path.startsWith('/v1/subscription_schedules'));
    let released = false;
    try {
      const first = subscriber.client.post(DOWNGRADE, { price_id: PRICE.hobbyMonth });
      await slow.arrived;
      const others = await Promise.all(Array.from({ length: 13 }, () => subscriber.client.post(DOWNGRADE, { price_id: PRICE.hobbyMonth })));
      expect(others.map((response) => response.status), 'every other change refused while the first talks to Stripe').to.deep.equal(Array(13).fill(409));
      expect((await json(others[0]!)).detail).to.match(/under way/);
      // still in flight: the first downgrade has not been answered
      const billing = await other.client.get('/api/v1/users/me/billing');
      expect(billing.status).to.equal(200);
      expect(await json(billing)).to.include({ tier: 'Free' });
      released = true;
      slow.release();
      const answered = await first;
      expect(answered.status, await answered.clone().text()).to.equal(200);
      expect((await json(answered)).scheduled_change).to.include({ tier: 'Hobby' });
    } finally {
      if (!released) slow.release();
    }
    const schedules = [...world.stripe.schedules.values()].filter((schedule) => schedule.subscription === subscriptionId);
    expect(schedules, 'one schedule at Stripe').to.have.length(1);
    expect(world.stripe.calls.filter((call) => call.path.startsWith('/v1/subscription_schedules')).every((call) => call.idempotencyKey), 'every schedule call carries an idempotency key').to.equal(true);
    expect((await billingOf(subscriber)).scheduled_change).to.include({ tier: 'Hobby' });
    // the lock is released: a later change of the same user is served
    const again = await subscriber.client.post(DOWNGRADE, { price_id: PRICE.hobbyMonth });
    expect(again.status).to.be.oneOf([200, 409]);
    expect((await json(again)).detail ?? '').to.not.match(/under way/);
  });
});
