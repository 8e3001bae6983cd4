import { expect } from 'chai';
import type { ServiceOverrides } from '../../api/src/app.ts';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { StripeDouble } from '../../hack/fixtures/stripe-double.ts';
import type { SignedIn } from '../support/users.ts';

export const WEBHOOK_SECRET = 'whsec_cutroom_test_secret';

/** The default price table (STRIPE_PRICES): the integer ids clients send. */
export const PRICE = {
  hobbyMonth: 1,
  hobbyYear: 2,
  creatorMonth: 3,
  creatorYear: 4,
  viralMonth: 5,
  viralYear: 6,
} as const;

export interface PaymentsWorld {
  app: TestApp;
  stripe: StripeDouble;
  close(): Promise<void>;
}

/** The app with its Stripe pointed at a fresh double whose events go to the app's webhook. */
export async function startPaymentsWorld(env: Record<string, string> = {}, overrides: ServiceOverrides = {}, stripe?: StripeDouble): Promise<PaymentsWorld> {
  const double = stripe ?? (await StripeDouble.start({ webhookSecret: WEBHOOK_SECRET }));
  const app = await startTestApp(
    {
      STRIPE_SECRET_KEY: 'sk_test_cutroom',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: double.url,
      STRIPE_TIMEOUT_MS: '1000',
      STRIPE_MAX_NETWORK_RETRIES: '0',
      ...env,
    },
    overrides,
  );
  double.webhookUrl = `${app.url}/api/v1/payments/webhook`;
  return {
    app,
    stripe: double,
    close: async () => {
      await double.settled();
      await app.close();
      if (!stripe) await double.close();
    },
  };
}

/** Checkout as a browser would do it: the session URL, the payment at Stripe, the webhooks delivered. */
export async function subscribe(world: PaymentsWorld, user: SignedIn, priceId: number): Promise<string> {
  const response = await user.client.post('/api/v1/payments/checkout', { price_id: priceId });
  expect(response.status, await response.clone().text()).to.equal(200);
  const { url } = await json(response);
  const sessionId = String(url).split('/pay/')[1]!;
  const subscription = world.stripe.completeCheckout(sessionId);
  await world.stripe.settled();
  return subscription.id;
}

export async function billingOf(user: SignedIn) {
  return json(await user.client.get('/api/v1/users/me/billing'));
}

/** Ledger grants of a user by reference prefix (`allowance:`, `beta:`). */
export async function grantsOf(app: TestApp, userId: string, prefix: string): Promise<{ reference: string; minutes: number }[]> {
  const rows = await app.services.orm.em
    .fork()
    .execute<{ reference: string; minutes: string }[]>(`select reference, minutes from credit_entries where user_id = ? and kind = 'grant' and reference like ? order by created_at`, [userId, `${prefix}%`]);
  return rows.map((row) => ({ reference: row.reference, minutes: Number(row.minutes) }));
}
