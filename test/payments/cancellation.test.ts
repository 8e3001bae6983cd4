import { expect } from 'chai';
import { json } from '../support/harness.ts';
import { ManualClock } from '../support/clock.ts';
import { SmtpSink } from '../support/smtp.ts';
import { StripeDouble } from '../../hack/fixtures/stripe-double.ts';
import { signUpAndLogin } from '../support/users.ts';
import { billingOf, PRICE, startPaymentsWorld, subscribe, WEBHOOK_SECRET, type PaymentsWorld } from './payments-fixtures.ts';

const FEEDBACK = '/api/v1/payments/subscription/cancellation-feedback';

async function feedbackOf(world: PaymentsWorld, userId: string) {
  return world.app.services.orm.em
    .fork()
    .execute<{ reason: string; detail: string | null; outcome: string; tier: string }[]>(`select reason, detail, outcome, tier from cancellation_feedback where user_id = ? order by created_at`, [userId]);
}

describe('payments: cancellation-feedback', () => {
  let world: PaymentsWorld;
  before(async () => {
    world = await startPaymentsWorld();
  });
  after(() => world.close());

  it('cancelled: the subscription ends immediately at Stripe and the tier falls to Free; the feedback is stored for the team', async () => {
    const user = await signUpAndLogin(world.app);
    const subscriptionId = await subscribe(world, user, PRICE.creatorMonth);
    const response = await user.client.post(FEEDBACK, { reason: 'too_expensive', detail: 'Students cannot pay this', outcome: 'cancelled' });
    expect(response.status, await response.clone().text()).to.equal(200);
    const body = await json(response);
    expect(body).to.include({ outcome: 'cancelled', reminder_at: null });
    expect(body.billing).to.include({ tier: 'Free', subscription_status: 'canceled', has_active_plan: false, can_access_support: false });
    expect(world.stripe.subscriptions.get(subscriptionId)!.status).to.equal('canceled');
    await world.stripe.settled();
    expect(await billingOf(user)).to.include({ tier: 'Free', subscription_status: 'canceled' });
    expect(await feedbackOf(world, user.user.id)).to.deep.equal([{ reason: 'too_expensive', detail: 'Students cannot pay this', outcome: 'cancelled', tier: 'Creator' }]);
  });

  it('discount_accepted: the retention coupon is applied once per account; discount_used is true afterwards; a second time → 409', async () => {
    const user = await signUpAndLogin(world.app);
    const subscriptionId = await subscribe(world, user, PRICE.hobbyMonth);
    const response = await user.client.post(FEEDBACK, { reason: 'too_expensive', detail: null, outcome: 'discount_accepted' });
    expect(response.status).to.equal(200);
    expect((await json(response)).billing).to.include({ discount_used: true, tier: 'Hobby', subscription_status: 'active' });
    expect(world.stripe.subscriptions.get(subscriptionId)!.discounts).to.deep.equal(['cutroom-retention']);

    const again = await user.client.post(FEEDBACK, { reason: 'too_expensive', detail: null, outcome: 'discount_accepted' });
    expect(again.status).to.equal(409);
    expect((await json(again)).detail).to.match(/only once/);
    expect(world.stripe.subscriptions.get(subscriptionId)!.discounts).to.have.length(1);
    expect((await feedbackOf(world, user.user.id)).map((row) => row.outcome)).to.deep.equal(['discount_accepted']);
  });

  it('kept_plan: recorded only (no call to Stripe)', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.hobbyMonth);
    const calls = world.stripe.calls.length;
    const response = await user.client.post(FEEDBACK, { reason: 'poor_quality', detail: 'Captions drift', outcome: 'kept_plan' });
    expect(response.status).to.equal(200);
    expect(world.stripe.calls.length).to.equal(calls);
    expect((await json(response)).billing).to.include({ tier: 'Hobby', subscription_status: 'active' });
    expect(await feedbackOf(world, user.user.id)).to.deep.equal([{ reason: 'poor_quality', detail: 'Captions drift', outcome: 'kept_plan', tier: 'Hobby' }]);
  });

  it('an unknown outcome → 422; cancelling without a paid plan → 409 and nothing is recorded', async () => {
    const user = await signUpAndLogin(world.app);
    expect((await user.client.post(FEEDBACK, { reason: 'too_expensive', detail: null, outcome: 'vanished' })).status).to.equal(422);
    expect((await user.client.post(FEEDBACK, { reason: 'too_expensive', detail: null, outcome: 'cancelled' })).status).to.equal(409);
    expect(await feedbackOf(world, user.user.id)).to.deep.equal([]);
  });

  it('Stripe down while cancelling → 503 and nothing half-changed: the plan stays and no feedback is stored', async () => {
    const user = await signUpAndLogin(world.app);
    await subscribe(world, user, PRICE.hobbyMonth);
    await world.stripe.stop();
    try {
      const response = await user.client.post(FEEDBACK, { reason: 'too_expensive', detail: null, outcome: 'cancelled' });
      expect(response.status).to.equal(503);
    } finally {
      await world.stripe.resume();
    }
    expect(await billingOf(user)).to.include({ tier: 'Hobby', subscription_status: 'active' });
    expect(await feedbackOf(world, user.user.id)).to.deep.equal([]);
  });
});

describe('payments: reminder_set (a reminder mail before renewal, scheduled durably)', () => {
  let smtp: SmtpSink;
  let stripe: StripeDouble;
  before(async () => {
    smtp = await SmtpSink.start();
    stripe = await StripeDouble.start({ webhookSecret: WEBHOOK_SECRET });
  });
  after(async () => {
    await stripe.close();
    await smtp.close();
  });

  it('reminder_set schedules a mail RENEWAL_REMINDER_DAYS before renewal, in the user\'s language, and it survives a restart', async () => {
    const first = await startPaymentsWorld({ SMTP_URL: smtp.url }, {}, stripe);
    let periodEnd: number;
    let email: string;
    let reminderAt: string;
    try {
      const user = await signUpAndLogin(first.app, { locale: 'pt' });
      email = user.email;
      const subscriptionId = await subscribe(first, user, PRICE.creatorMonth);
      periodEnd = stripe.subscriptions.get(subscriptionId)!.periodEnd;
      const response = await user.client.post(FEEDBACK, { reason: 'too_expensive', detail: null, outcome: 'reminder_set' });
      expect(response.status).to.equal(200);
      const body = await json(response);
      reminderAt = body.reminder_at;
      expect(new Date(reminderAt).getTime()).to.equal(periodEnd * 1000 - 3 * 86_400_000);
      expect(body.billing).to.include({ tier: 'Creator', subscription_status: 'active' });
    } finally {
      await first.close();
    }

    // A new process, days later: the due action is in PostgreSQL, so its sweep still sends the mail.
    const clock = new ManualClock(new Date(new Date(reminderAt).getTime() + 60_000));
    const second = await startPaymentsWorld({ SMTP_URL: smtp.url, PAYMENTS_SWEEP_MS: '100' }, { clock }, stripe);
    try {
      const mail = await smtp.waitFor({ to: email, subject: /renova-se/ }, 10_000);
      expect(mail.text).to.include(new Date(periodEnd * 1000).toISOString().slice(0, 10));
      expect(mail.text).to.include('Creator');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(smtp.to(email).filter((message) => /renova-se/.test(message.subject))).to.have.length(1);
    } finally {
      await second.close();
    }
  });
});
