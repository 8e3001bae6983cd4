import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { eventually } from '../support/wait.ts';
import { PaymentCustomer } from '../../api/src/payments/entities.ts';
import { billingOf, grantsOf, PRICE, startPaymentsWorld, subscribe, type PaymentsWorld } from './payments-fixtures.ts';

const CHECKOUT = '/api/v1/payments/checkout';
const FEEDBACK = '/api/v1/payments/subscription/cancellation-feedback';

/**
 * Issue 25 item 5: two Checkout sessions (two tabs) could both be paid. The user was charged
 * twice, and "cancelled" stopped one subscription while the other kept billing and silently
 * became the plan.
 */
describe('attack: two Checkout sessions of one user, both paid', function () {
  this.timeout(60_000);
  let world: PaymentsWorld;
  before(async () => {
    world = await startPaymentsWorld();
  });
  after(() => world.close());

  const sessionOf = (url: string) => String(url).split('/pay/')[1]!;
  async function checkout(user: SignedIn, priceId: number): Promise<string> {
    const response = await user.client.post(CHECKOUT, { price_id: priceId });
    expect(response.status, await response.clone().text()).to.equal(200);
    return sessionOf((await json(response)).url);
  }
  /** A Checkout session the api did not make (opened before this fix, or by a race): straight at Stripe. */
  async function strayCheckout(user: SignedIn, stripePrice: string): Promise<string> {
    const link = await world.app.services.orm.em.fork().findOneOrFail(PaymentCustomer, { userId: user.user.id });
    const body = new URLSearchParams({ mode: 'subscription', customer: link.stripeCustomerId, client_reference_id: user.user.id, 'line_items[0][price]': stripePrice, 'line_items[0][quantity]': '1' });
    const response = await fetch(`${world.stripe.url}/v1/checkout/sessions`, { method: 'POST', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(response.status).to.equal(200);
    return ((await response.json()) as { id: string }).id;
  }

  it("a second checkout expires the first session: the first tab's page takes no payment, the second's does", async () => {
    const user = await signUpAndLogin(world.app);
    const first = await checkout(user, PRICE.creatorMonth);
    const second = await checkout(user, PRICE.hobbyMonth);
    expect(world.stripe.checkoutSessions.get(first)!.status).to.equal('expired');
    expect(() => world.stripe.completeCheckout(first)).to.throw(/expired/);
    world.stripe.completeCheckout(second);
    await world.stripe.settled();
    expect(await billingOf(user)).to.include({ tier: 'Hobby', subscription_status: 'active' });
    expect([...world.stripe.subscriptions.values()].filter((subscription) => subscription.customer === world.stripe.checkoutSessions.get(second)!.customer)).to.have.length(1);
  });

  it('a second live subscription arriving for the same user is cancelled and refunded, logged and alerted; the plan and the allowance stay those of the first', async () => {
    const user = await signUpAndLogin(world.app);
    const firstId = await subscribe(world, user, PRICE.creatorMonth);
    const allowanceBefore = await grantsOf(world.app, user.user.id, 'allowance:');
    const stray = await strayCheckout(user, 'price_viral_month');
    const second = world.stripe.completeCheckout(stray);
    await world.stripe.settled();
    expect(world.stripe.subscriptions.get(second.id)!.status, 'the second is cancelled').to.equal('canceled');
    expect(world.stripe.subscriptions.get(firstId)!.status, 'the first bills on').to.equal('active');
    const invoice = world.stripe.invoices.get(world.stripe.subscriptions.get(second.id)!.latestInvoice!)!;
    const refunds = [...world.stripe.refunds.values()].filter((refund) => refund.paymentIntent === invoice.paymentIntent);
    expect(refunds, 'its payment refunded once').to.have.length(1);
    expect(refunds[0]).to.include({ reason: 'duplicate' });
    expect(refunds[0]!.amount).to.be.above(0);
    expect(await billingOf(user)).to.include({ tier: 'Creator', subscription_status: 'active' });
    expect(await grantsOf(world.app, user.user.id, 'allowance:'), 'no minutes for the refunded invoice').to.deep.equal(allowanceBefore);
    const alert = world.app.logs.find((line) => line.alert === 'duplicate_subscription' && line.subscription === second.id);
    expect(alert, 'logged for the alert').to.include({ level: 50 });
    const metrics = await world.app.services.metrics.getSingleMetricAsString('cutroom_duplicate_subscriptions_total');
    expect(metrics).to.match(/cutroom_duplicate_subscriptions_total [1-9]/);
    // cancelling the plan leaves nothing billing
    expect((await user.client.post(FEEDBACK, { reason: 'too_expensive', detail: null, outcome: 'cancelled' })).status).to.equal(200);
    expect(world.stripe.subscriptions.get(firstId)!.status).to.equal('canceled');
  });

  it('cancellation cancels every live subscription of the customer, also one no webhook announced', async () => {
    const user = await signUpAndLogin(world.app);
    const firstId = await subscribe(world, user, PRICE.creatorMonth);
    const stray = await strayCheckout(user, 'price_hobby_month');
    world.stripe.autoDeliver = false;
    let second;
    try {
      second = world.stripe.completeCheckout(stray);
    } finally {
      world.stripe.autoDeliver = true;
    }
    const response = await user.client.post(FEEDBACK, { reason: 'too_expensive', detail: null, outcome: 'cancelled' });
    expect(response.status, await response.clone().text()).to.equal(200);
    expect((await json(response)).billing).to.include({ tier: 'Free', subscription_status: 'canceled' });
    expect(world.stripe.subscriptions.get(firstId)!.status).to.equal('canceled');
    expect(world.stripe.subscriptions.get(second.id)!.status, 'the second stops billing too').to.equal('canceled');
    await world.stripe.settled();
    await eventually(async () => ((await billingOf(user)).tier === 'Free' ? true : undefined), 'still Free after the events');
  });
});
