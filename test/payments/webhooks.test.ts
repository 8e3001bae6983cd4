import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { ManualClock } from '../support/clock.ts';
import { signUpAndLogin } from '../support/users.ts';
import { billingOf, grantsOf, PRICE, startPaymentsWorld, subscribe, type PaymentsWorld } from './payments-fixtures.ts';

const WEBHOOK = '/api/v1/payments/webhook';

async function recordedEvents(world: PaymentsWorld, eventId: string): Promise<number> {
  const rows = await world.app.services.orm.em.fork().execute(`select 1 from payment_events where event_id = ?`, [eventId]);
  return rows.length;
}

describe('payments: webhooks (POST /api/v1/payments/webhook)', () => {
  let world: PaymentsWorld;
  let clock: ManualClock;
  before(async () => {
    clock = new ManualClock();
    world = await startPaymentsWorld({ PAYMENT_GRACE_DAYS: '7' }, { clock });
  });
  afterEach(async () => {
    world.stripe.autoDeliver = true;
    world.stripe.declinePayments = false;
    await world.stripe.resume().catch(() => undefined);
  });
  after(() => world.close());

  it('a bad signature → 400 and nothing changes; no session nor CSRF token is needed for a good one', async () => {
    const user = await signUpAndLogin(world.app);
    world.stripe.autoDeliver = false;
    const checkout = await json(await user.client.post('/api/v1/payments/checkout', { price_id: PRICE.hobbyMonth }));
    world.stripe.completeCheckout(String(checkout.url).split('/pay/')[1]!);
    const paid = world.stripe.eventsOf('invoice.paid').at(-1)!;

    const forged = await world.stripe.deliver(paid, { secret: 'whsec_not_ours' });
    expect(forged.status).to.equal(400);
    const unsigned = await world.app.fetch(WEBHOOK, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(paid) });
    expect(unsigned.status).to.equal(400);
    expect(await recordedEvents(world, paid.id)).to.equal(0);
    expect(await billingOf(user)).to.include({ tier: 'Free', subscription_status: 'none' });

    const genuine = await world.stripe.deliver(paid);
    expect(genuine.status).to.equal(200);
    expect(await billingOf(user)).to.include({ tier: 'Hobby', subscription_status: 'active' });
  });

  it('every event is processed exactly once by event id: a redelivered invoice.paid grants the allowance once', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.creatorMonth);
    const paid = world.stripe.eventsOf('invoice.paid').at(-1)!;
    const again = await world.stripe.deliver(paid);
    expect(again.status).to.equal(200);
    expect(await json(again)).to.deep.equal({ received: true, duplicate: true });
    const twiceAtOnce = await Promise.all([world.stripe.deliver(paid), world.stripe.deliver(paid)]);
    expect(twiceAtOnce.map((response) => response.status)).to.deep.equal([200, 200]);
    expect(await grantsOf(world.app, user.user.id, 'allowance:')).to.deep.equal([{ reference: `allowance:${(paid.data.object as { id: string }).id}`, minutes: 600 }]);
  });

  it('events in any order: checkout\'s events delivered backwards give the same plan and one allowance', async () => {
    const user = await signUpAndLogin(world.app);
    world.stripe.autoDeliver = false;
    const checkout = await json(await user.client.post('/api/v1/payments/checkout', { price_id: PRICE.viralMonth }));
    const since = world.stripe.events.length;
    world.stripe.completeCheckout(String(checkout.url).split('/pay/')[1]!);
    const events = world.stripe.events.slice(since);
    expect(events.map((event) => event.type)).to.deep.equal(['checkout.session.completed', 'customer.subscription.created', 'invoice.paid']);
    for (const event of [...events].reverse()) expect((await world.stripe.deliver(event)).status).to.equal(200);
    expect(await billingOf(user)).to.include({ tier: 'Viral', subscription_status: 'active' });
    expect((await grantsOf(world.app, user.user.id, 'allowance:')).map((grant) => grant.minutes)).to.deep.equal([2400]);
  });

  it('a late subscription.updated arriving after subscription.deleted leaves the plan canceled (state is read back from Stripe)', async () => {
    const user = await signUpAndLogin(world.app);
    const subscriptionId = await subscribe(world, user, PRICE.hobbyMonth);
    world.stripe.autoDeliver = false;
    world.stripe.renew(subscriptionId);
    const updated = world.stripe.eventsOf('customer.subscription.updated').at(-1)!;
    expect((updated.data.object as { status: string }).status).to.equal('active');
    const cancel = await user.client.post('/api/v1/payments/subscription/cancellation-feedback', { reason: 'too_expensive', detail: null, outcome: 'cancelled' });
    expect(cancel.status).to.equal(200);
    const deleted = world.stripe.eventsOf('customer.subscription.deleted').at(-1)!;
    expect((await world.stripe.deliver(deleted)).status).to.equal(200);
    expect((await world.stripe.deliver(updated)).status).to.equal(200);
    expect(await billingOf(user)).to.include({ tier: 'Free', subscription_status: 'canceled' });
  });

  it('invoice payment failed → past_due; the tier holds for PAYMENT_GRACE_DAYS, then reads as Free; paying restores it', async () => {
    const user = await signUpAndLogin(world.app);
    const subscriptionId = await subscribe(world, user, PRICE.creatorMonth);
    world.stripe.declinePayments = true;
    world.stripe.renew(subscriptionId);
    await world.stripe.settled();
    expect(await billingOf(user)).to.include({ tier: 'Creator', subscription_status: 'past_due', has_active_plan: true });

    clock.advance(7 * 86_400_000 + 1000);
    expect((await user.client.logIn(user.username, user.password)).status).to.equal(200);
    expect(await billingOf(user)).to.include({ tier: 'Free', subscription_status: 'past_due', has_active_plan: false, can_access_support: false });

    world.stripe.declinePayments = false;
    world.stripe.payOpenInvoice(subscriptionId);
    await world.stripe.settled();
    expect(await billingOf(user)).to.include({ tier: 'Creator', subscription_status: 'active', has_active_plan: true });
    // The renewal's allowance comes with its payment, once.
    expect((await grantsOf(world.app, user.user.id, 'allowance:')).map((grant) => grant.minutes)).to.deep.equal([600, 600]);
    clock.set(new Date());
  });

  it('a webhook for an unknown customer is logged and acknowledged', async () => {
    const event = world.stripe.emit('customer.subscription.updated', { id: 'sub_nobody', object: 'subscription', customer: 'cus_nobody', status: 'active', items: { data: [] } });
    await world.stripe.settled();
    expect(world.stripe.deliveries.get(event.id)).to.equal(200);
    expect(await recordedEvents(world, event.id)).to.equal(1);
    expect(world.app.logs.some((line) => line.level === 40 && /customer we do not know/.test(line.msg) && line.event_id === event.id)).to.equal(true);
  });

  const customerOf = async (userId: string): Promise<string> => {
    const [row] = await world.app.services.orm.em.fork().execute<{ stripe_customer_id: string }[]>(`select stripe_customer_id from payment_customers where user_id = ?`, [userId]);
    return row!.stripe_customer_id;
  };
  const warned = (eventId: string, pattern: RegExp) => world.app.logs.some((line) => line.level === 40 && pattern.test(line.msg) && line.event_id === eventId);

  it('a Stripe-signed event with an unexpected object shape is acknowledged (200) and logged, nothing changes (it answered 500)', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.hobbyMonth);
    for (const [type, object] of [
      ['customer.subscription.updated', { object: 'subscription', customer: 42 }],
      ['invoice.paid', { id: 'in_odd', object: 'invoice' }],
      ['checkout.session.completed', { object: 'checkout.session', client_reference_id: { nested: true } }],
    ] as const) {
      const event = world.stripe.emit(type, object);
      await world.stripe.settled();
      expect(world.stripe.deliveries.get(event.id), type).to.equal(200);
      expect(warned(event.id, /unexpected shape/), type).to.equal(true);
    }
    expect(await billingOf(user)).to.include({ tier: 'Hobby', subscription_status: 'active' });
  });

  it('a Stripe-signed event naming a subscription Stripe does not know is acknowledged (200) and logged (it answered 404)', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.hobbyMonth);
    const event = world.stripe.emit('customer.subscription.updated', { id: 'sub_never_made', object: 'subscription', customer: await customerOf(user.user.id) });
    await world.stripe.settled();
    expect(world.stripe.deliveries.get(event.id)).to.equal(200);
    expect(warned(event.id, /subscription Stripe does not know/)).to.equal(true);
    expect(await billingOf(user)).to.include({ tier: 'Hobby', subscription_status: 'active' });
  });

  it('plan sync checks that the subscription belongs to the user\'s customer: an event pairing one customer with another customer\'s subscription changes neither plan', async () => {
    const owner = await signUpAndLogin(world.app);
    await subscribe(world, owner, PRICE.creatorMonth);
    const other = await signUpAndLogin(world.app);
    await subscribe(world, other, PRICE.hobbyMonth);
    const [link] = await world.app.services.orm.em.fork().execute<{ stripe_subscription_id: string }[]>(`select stripe_subscription_id from payment_customers where user_id = ?`, [owner.user.id]);
    const event = world.stripe.emit('customer.subscription.updated', { id: link!.stripe_subscription_id, object: 'subscription', customer: await customerOf(other.user.id) });
    await world.stripe.settled();
    expect(world.stripe.deliveries.get(event.id)).to.equal(200);
    expect(warned(event.id, /belongs to another customer/)).to.equal(true);
    expect(await billingOf(other)).to.include({ tier: 'Hobby', subscription_status: 'active' });
    expect(await billingOf(owner)).to.include({ tier: 'Creator', subscription_status: 'active' });
  });

  it('event types we do not handle are acknowledged and recorded only', async () => {
    const event = world.stripe.emit('customer.created', { id: 'cus_new', object: 'customer' });
    await world.stripe.settled();
    expect(world.stripe.deliveries.get(event.id)).to.equal(200);
  });

  it('Stripe down or slow while an event is handled → 503 and the event is not recorded, so Stripe\'s redelivery applies it', async () => {
    const user = await signUpAndLogin(world.app);
    world.stripe.autoDeliver = false;
    const checkout = await json(await user.client.post('/api/v1/payments/checkout', { price_id: PRICE.hobbyMonth }));
    world.stripe.completeCheckout(String(checkout.url).split('/pay/')[1]!);
    const created = world.stripe.eventsOf('customer.subscription.created').at(-1)!;
    await world.stripe.stop();
    const down = await world.stripe.deliver(created);
    await world.stripe.resume();
    expect(down.status).to.equal(503);
    world.stripe.delayMs = 1500;
    const slow = await world.stripe.deliver(created);
    world.stripe.delayMs = 0;
    expect(slow.status).to.equal(503);
    expect(await recordedEvents(world, created.id)).to.equal(0);
    expect(await billingOf(user)).to.include({ tier: 'Free' });
    expect((await world.stripe.deliver(created)).status).to.equal(200);
    expect(await billingOf(user)).to.include({ tier: 'Hobby', subscription_status: 'active' });
  });
});
