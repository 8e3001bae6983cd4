import type Stripe from 'stripe';
import { z } from 'zod';
import { InvalidInput, Unavailable } from '../shared/errors.ts';

/** How the api reaches Stripe (STRIPE_* settings). */
export interface StripeSettings {
  secretKey: string;
  webhookSecret: string | undefined;
  /** Another address than Stripe's (the local double in tests). */
  apiBase: string | undefined;
  timeoutMs: number;
  maxNetworkRetries: number;
}

/** Stripe refused the charge (card declined, authentication needed): nothing was changed. */
export class PaymentDeclined extends Error {
  constructor(cause: unknown) {
    super('payment declined', { cause });
    this.name = 'PaymentDeclined';
  }
}

const idOf = z.union([z.string(), z.object({ id: z.string() })]).transform((value) => (typeof value === 'string' ? value : value.id));

/** The fields of a subscription we read; since API 2025-03-31 the period is on each item. */
const SubscriptionView = z.object({
  id: z.string(),
  customer: idOf,
  status: z.string(),
  schedule: idOf.nullable().optional(),
  latest_invoice: idOf.nullable().optional(),
  items: z.object({
    data: z
      .array(z.object({ id: z.string(), price: z.object({ id: z.string() }), current_period_start: z.number(), current_period_end: z.number() }))
      .min(1),
  }),
});
export type SubscriptionView = z.infer<typeof SubscriptionView>;

/** The fields of an invoice we read: who, why, paid or not, and the prices on its lines. */
export const InvoiceView = z.object({
  id: z.string(),
  customer: idOf,
  status: z.string().nullable().optional(),
  billing_reason: z.string().nullable().optional(),
  lines: z
    .object({
      data: z.array(
        z.object({
          amount: z.number(),
          pricing: z.object({ price_details: z.object({ price: idOf }).nullable().optional() }).nullable().optional(),
        }),
      ),
    })
    .optional(),
  parent: z.object({ subscription_details: z.object({ subscription: idOf }).nullable().optional() }).nullable().optional(),
});
export type InvoiceView = z.infer<typeof InvoiceView>;

const CheckoutView = z.object({ id: z.string(), url: z.string() });

/** A verified webhook event: its id, type and the object it carries (read by the handler's own schema). */
export interface VerifiedEvent {
  id: string;
  type: string;
  object: unknown;
}

const EventView = z.object({ id: z.string(), type: z.string(), data: z.object({ object: z.unknown() }) });

type StripeSdk = typeof Stripe;
let sdk: Promise<StripeSdk> | undefined;

/** The SDK (about 220 modules) is loaded by the first call that needs it, not at start-up: most requests never reach Stripe. */
function loadSdk(): Promise<StripeSdk> {
  sdk ??= import('stripe').then((module) => module.default);
  return sdk;
}

/**
 * Stripe through its SDK: every call bounded by STRIPE_TIMEOUT_MS, retried
 * STRIPE_MAX_NETWORK_RETRIES times on network failures only (the SDK sends an
 * idempotency key with every POST, so a retry never charges twice). An unreachable or
 * failing Stripe is a 503; a declined card is PaymentDeclined.
 */
export class StripeGateway {
  readonly #settings: StripeSettings;
  #client: Promise<Stripe> | undefined;
  readonly #webhookSecret: string | undefined;

  constructor(settings: StripeSettings) {
    this.#settings = settings;
    this.#webhookSecret = settings.webhookSecret;
  }

  #stripe(): Promise<Stripe> {
    this.#client ??= loadSdk().then((Sdk) => this.#connect(Sdk));
    return this.#client;
  }

  #connect(Sdk: StripeSdk): Stripe {
    const settings = this.#settings;
    const base = settings.apiBase ? new URL(settings.apiBase) : undefined;
    return new Sdk(settings.secretKey, {
      timeout: settings.timeoutMs,
      maxNetworkRetries: settings.maxNetworkRetries,
      ...(base
        ? {
            host: base.hostname,
            port: base.port || (base.protocol === 'https:' ? 443 : 80),
            protocol: base.protocol === 'https:' ? 'https' : 'http',
          }
        : {}),
    });
  }

  /** One call through the SDK, its failures in the domain's words (see `call`). */
  #call<T>(request: (stripe: Stripe) => Promise<T>): Promise<T> {
    return call(async () => request(await this.#stripe()));
  }

  async createCustomer(input: { userId: string; email: string; name: string }): Promise<string> {
    const customer = await this.#call((stripe) =>
      stripe.customers.create(
        { email: input.email, name: input.name, metadata: { cutroom_user_id: input.userId } },
        { idempotencyKey: `customer:${input.userId}` },
      ),
    );
    return customer.id;
  }

  async createCheckoutSession(input: {
    customer: string;
    userId: string;
    stripePrice: string;
    successUrl: string;
    cancelUrl: string;
    locale: 'en' | 'pt' | 'es';
  }): Promise<z.infer<typeof CheckoutView>> {
    const session = await this.#call((stripe) =>
      stripe.checkout.sessions.create({
        mode: 'subscription',
        customer: input.customer,
        client_reference_id: input.userId,
        line_items: [{ price: input.stripePrice, quantity: 1 }],
        subscription_data: { metadata: { cutroom_user_id: input.userId } },
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
        locale: input.locale,
      }),
    );
    return CheckoutView.parse(session);
  }

  async retrieveSubscription(id: string): Promise<SubscriptionView> {
    return SubscriptionView.parse(await this.#call((stripe) => stripe.subscriptions.retrieve(id)));
  }

  /** The subscription, or null when Stripe has none of that id (a webhook may name anything its signer wrote). */
  async findSubscription(id: string): Promise<SubscriptionView | null> {
    try {
      return await this.retrieveSubscription(id);
    } catch (error) {
      if (error instanceof (await loadSdk()).errors.StripeInvalidRequestError && error.code === 'resource_missing') return null;
      throw error;
    }
  }

  /**
   * Moves the subscription to another price and charges the prorated difference now
   * (always_invoice); error_if_incomplete makes a declined payment leave it unchanged.
   */
  async changePriceNow(input: { subscriptionId: string; itemId: string; stripePrice: string; idempotencyKey: string }): Promise<{ subscription: SubscriptionView; invoice: InvoiceView | null }> {
    const updated = await this.#call((stripe) =>
      stripe.subscriptions.update(
        input.subscriptionId,
        {
          items: [{ id: input.itemId, price: input.stripePrice }],
          proration_behavior: 'always_invoice',
          payment_behavior: 'error_if_incomplete',
          expand: ['latest_invoice'],
        },
        { idempotencyKey: input.idempotencyKey },
      ),
    );
    const latest = (updated as { latest_invoice?: unknown }).latest_invoice;
    return {
      subscription: SubscriptionView.parse(updated),
      invoice: latest && typeof latest === 'object' ? InvoiceView.parse(latest) : null,
    };
  }

  /**
   * Stripe's own subscription schedule switches the price at the end of the current
   * period: phase one keeps today's price until then, phase two runs the new one.
   */
  async scheduleAtPeriodEnd(input: { subscription: SubscriptionView; stripePrice: string; interval: 'month' | 'year'; idempotencyKey: string }): Promise<string> {
    const item = input.subscription.items.data[0]!;
    const scheduleId =
      input.subscription.schedule ??
      (await this.#call((stripe) => stripe.subscriptionSchedules.create({ from_subscription: input.subscription.id }, { idempotencyKey: `${input.idempotencyKey}:schedule` }))).id;
    await this.#call((stripe) =>
      stripe.subscriptionSchedules.update(
        scheduleId,
        {
          end_behavior: 'release',
          proration_behavior: 'none',
          phases: [
            { items: [{ price: item.price.id, quantity: 1 }], start_date: item.current_period_start, end_date: item.current_period_end },
            { items: [{ price: input.stripePrice, quantity: 1 }], duration: { interval: input.interval, interval_count: 1 } },
          ],
        },
        { idempotencyKey: `${input.idempotencyKey}:phases` },
      ),
    );
    return scheduleId;
  }

  /** The customer's Checkout sessions still open (not paid, not expired). */
  async openCheckoutSessions(customer: string): Promise<string[]> {
    const sessions = await this.#call((stripe) => stripe.checkout.sessions.list({ customer, status: 'open', limit: 100 }));
    return z.array(z.object({ id: z.string() })).parse(sessions.data).map((session) => session.id);
  }

  /** Closes an open Checkout session: its page takes no payment any more. One no longer open is left as it is. */
  async expireCheckoutSession(sessionId: string): Promise<void> {
    try {
      await this.#call((stripe) => stripe.checkout.sessions.expire(sessionId, {}, { idempotencyKey: `expire:${sessionId}` }));
    } catch (error) {
      // paid or expired meanwhile: a payment of it is the webhook's to handle
      if (!(error instanceof (await loadSdk()).errors.StripeInvalidRequestError)) throw error;
    }
  }

  /** The customer's subscriptions that bill or may bill again (every status but canceled and incomplete_expired). */
  async liveSubscriptions(customer: string): Promise<SubscriptionView[]> {
    const subscriptions = await this.#call((stripe) => stripe.subscriptions.list({ customer, status: 'all', limit: 100 }));
    return z
      .array(SubscriptionView)
      .parse(subscriptions.data)
      .filter((subscription) => subscription.status !== 'canceled' && subscription.status !== 'incomplete_expired');
  }

  /**
   * Cancels a subscription that should not exist (a second one of a customer) and refunds
   * what its latest invoice took, once (`duplicate:<id>` keys). Returns the refunded amount.
   */
  async cancelAndRefund(subscriptionId: string): Promise<number> {
    const view = await this.retrieveSubscription(subscriptionId);
    if (view.status !== 'canceled') await this.#call((stripe) => stripe.subscriptions.cancel(subscriptionId, {}, { idempotencyKey: `duplicate:${subscriptionId}:cancel` }));
    if (!view.latest_invoice) return 0;
    const invoice = view.latest_invoice;
    const payments = await this.#call((stripe) => stripe.invoicePayments.list({ invoice, limit: 10 }));
    let refunded = 0;
    for (const payment of payments.data) {
      const intent = payment.payment?.payment_intent;
      const paymentIntent = typeof intent === 'string' ? intent : intent?.id;
      if (payment.status !== 'paid' || !paymentIntent) continue;
      try {
        const refund = await this.#call((stripe) => stripe.refunds.create({ payment_intent: paymentIntent, reason: 'duplicate' }, { idempotencyKey: `duplicate:${subscriptionId}:refund:${paymentIntent}` }));
        refunded += refund.amount;
      } catch (error) {
        if (!(error instanceof (await loadSdk()).errors.StripeInvalidRequestError && error.code === 'charge_already_refunded')) throw error;
      }
    }
    return refunded;
  }

  async releaseSchedule(scheduleId: string): Promise<void> {
    await this.#call((stripe) => stripe.subscriptionSchedules.release(scheduleId));
  }

  async cancelSubscription(subscriptionId: string): Promise<SubscriptionView> {
    return SubscriptionView.parse(await this.#call((stripe) => stripe.subscriptions.cancel(subscriptionId)));
  }

  async applyCoupon(input: { subscriptionId: string; coupon: string; idempotencyKey: string }): Promise<SubscriptionView> {
    const updated = await this.#call((stripe) =>
      stripe.subscriptions.update(input.subscriptionId, { discounts: [{ coupon: input.coupon }] }, { idempotencyKey: input.idempotencyKey }),
    );
    return SubscriptionView.parse(updated);
  }

  /** The event a webhook delivered, its signature checked on the raw body; 400 when it does not match. */
  async verifyEvent(rawBody: Buffer, signature: string | undefined): Promise<VerifiedEvent> {
    if (!this.#webhookSecret) throw Unavailable('payments.not_configured');
    const stripe = await this.#stripe();
    let event: unknown;
    try {
      event = stripe.webhooks.constructEvent(rawBody, signature ?? '', this.#webhookSecret);
    } catch (error) {
      throw InvalidInput('payments.webhook_signature_invalid', { cause: error });
    }
    const parsed = EventView.safeParse(event);
    if (!parsed.success) throw InvalidInput('payments.webhook_malformed', { cause: parsed.error });
    return { id: parsed.data.id, type: parsed.data.type, object: parsed.data.data.object };
  }
}

/** Stripe's failures in the domain's words: unreachable, slow or failing → 503; declined → PaymentDeclined. */
async function call<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    const { errors } = await loadSdk();
    if (error instanceof errors.StripeCardError) throw new PaymentDeclined(error);
    if (
      error instanceof errors.StripeConnectionError ||
      error instanceof errors.StripeAPIError ||
      error instanceof errors.StripeRateLimitError ||
      error instanceof errors.StripeIdempotencyError
    ) {
      throw Unavailable('payments.provider_unavailable', { cause: error, headers: { 'Retry-After': '5' } });
    }
    throw error;
  }
}
