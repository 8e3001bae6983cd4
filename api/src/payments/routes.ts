import { parseJsonBody } from '../http/json-body.ts';
import type { Middleware } from 'koa';
import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import type { ResponseSpec } from '../http/router.ts';
import type { AppContext, AppState } from '../http/state.ts';
import { announceRateLimit } from '../http/rate-limit-headers.ts';
import { DomainError } from '../shared/errors.ts';
import type { Payments } from './payments.ts';
import {
  BetaGrantRead,
  BetaGrantRequest,
  CancellationFeedbackRead,
  CancellationFeedbackRequest,
  CheckoutSessionRead,
  PriceRequest,
  SupportRequestBody,
  SupportRequestRead,
  WebhookRead,
} from './schemas.ts';
import { BillingStatusSchema } from '../billing/schemas.ts';

const WEBHOOK_PATH = '/api/v1/payments/webhook';

/**
 * Keeps the webhook's body as the bytes Stripe signed (any parsing first would break the
 * signature); every other request goes to the shared body parser.
 */
export function webhookRawBody(maxBytes: number, parser: Middleware<AppState>): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.method !== 'POST' || ctx.path !== WEBHOOK_PATH) return parser(ctx, next);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new DomainError('too_large', 'http.413');
      chunks.push(chunk);
    }
    const raw = Buffer.concat(chunks);
    // the edge's own rules (malformed or too deeply nested JSON → 400) hold here too; the signature is checked on the raw bytes
    parseJsonBody(raw.toString('utf8'));
    rawBodies.set(ctx, raw);
    await next();
  };
}

const rawBodies = new WeakMap<AppContext, Buffer>();

const plans = ['payments'];

export function registerPaymentRoutes(router: AppRouter, payments: Payments): void {
  const priceErrors = {
    409: { description: 'No paid subscription to change, already on that plan, or another change of the plan is under way (payments.change_in_progress)' },
    422: { description: 'Unknown price_id, or a plan on the wrong side of the current one' },
    503: { description: 'Stripe cannot be reached or is too slow; nothing was changed' },
  };

  router.add({
    method: 'post',
    path: '/api/v1/payments/checkout',
    summary: 'A Free or trial user starts a paid plan: answers the Stripe Checkout address; the plan starts when Stripe confirms payment (webhook).',
    tags: plans,
    access: 'session',
    scope: 'billing',
    body: PriceRequest,
    responses: { 200: { description: 'The Checkout session address', schema: CheckoutSessionRead }, 409: { description: 'A paid plan is already active' }, 422: priceErrors[422], 503: priceErrors[503] },
    handler: async (ctx, { body, caller, em }) => {
      ctx.body = { url: (await payments.plans.startCheckout(em, caller.user, body.price_id)).url };
    },
  });

  // The two plan changes take the same body and answer the billing status; only the change differs.
  const planChanges: { path: string; summary: string; responses: Record<number, ResponseSpec>; change: typeof payments.plans.confirmUpgrade }[] = [
    {
      path: '/api/v1/payments/subscription/confirm-upgrade',
      summary: 'Upgrades now: the prorated difference is charged immediately; the new tier replaces the old once Stripe confirms the payment.',
      responses: {
        200: { description: 'Billing status on the new plan', schema: BillingStatusSchema },
        402: { description: 'The payment was declined: the old plan stays (code PaymentDeclined)' },
      },
      change: payments.plans.confirmUpgrade.bind(payments.plans),
    },
    {
      path: '/api/v1/payments/subscription/schedule-downgrade',
      summary: 'Downgrades at the end of the billing period; the current tier is kept until then (billing status shows scheduled_change).',
      responses: { 200: { description: 'Billing status with the scheduled change', schema: BillingStatusSchema } },
      change: payments.plans.scheduleDowngrade.bind(payments.plans),
    },
  ];
  for (const { path, summary, responses, change } of planChanges) {
    router.add({
      method: 'post',
      path,
      summary,
      tags: plans,
      access: 'session',
      scope: 'billing',
      body: PriceRequest,
      responses: { ...responses, ...priceErrors },
      handler: async (ctx, { body, caller, em }) => {
        const { user } = caller;
        await change(em, user, body.price_id);
        ctx.body = await payments.plans.statusFor(em, user);
      },
    });
  }

  router.add({
    method: 'post',
    path: '/api/v1/payments/subscription/cancellation-feedback',
    summary: 'Records why a subscriber thought of leaving and performs the outcome: cancelled (now), reminder_set, discount_accepted (once per account), kept_plan.',
    tags: plans,
    access: 'session',
    scope: 'billing',
    body: CancellationFeedbackRequest,
    responses: {
      200: { description: 'The outcome performed and the billing status', schema: CancellationFeedbackRead },
      409: { description: 'No paid subscription, the discount was already used, or another change of the plan is under way' },
      503: priceErrors[503],
    },
    handler: async (ctx, { body, caller, em }) => {
      const { user } = caller;
      const { reminderAt } = await payments.plans.cancellationFeedback(em, user, body);
      ctx.body = { outcome: body.outcome, reminder_at: reminderAt?.toISOString() ?? null, billing: await payments.plans.statusFor(em, user) };
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/payments/subscription/support-request',
    summary: 'Sends a priority e-mail to the team with the user\'s tier, credits and paid status, and a confirmation to the user. Paid subscribers and beta testers only.',
    tags: plans,
    access: 'session',
    scope: 'billing',
    body: SupportRequestBody,
    responses: {
      200: { description: 'Both mails are on their way', schema: SupportRequestRead },
      403: { description: 'Not a paid subscriber nor a beta tester (can_access_support false)' },
      429: { description: 'Too many support requests (Retry-After)' },
    },
    handler: async (ctx, { body, caller, em }) => {
      announceRateLimit(ctx, await payments.support.send(em, caller.user, body));
      ctx.body = { sent: true };
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/admin/beta/grant',
    summary: 'Superusers: makes a user (by user_id or email) a beta tester with `credits` AI minutes that renew on `renewal_date`, then every BETA_RENEWAL_DAYS.',
    tags: ['admin'],
    access: 'superuser',
    scope: 'billing',
    body: BetaGrantRequest,
    responses: {
      200: { description: 'The user\'s billing status as a beta tester', schema: BetaGrantRead },
      404: { description: 'No such user' },
      422: { description: 'Renewal date not in the future, or not exactly one of user_id and email' },
    },
    handler: async (ctx, { body, em }) => {
      const user = await payments.beta.grant(em, {
        userId: body.user_id,
        email: body.email,
        credits: body.credits,
        renewalDate: new Date(body.renewal_date),
      });
      ctx.body = { user_id: user.id, billing: await payments.plans.statusFor(em, user) };
    },
  });

  router.add({
    method: 'post',
    path: WEBHOOK_PATH,
    summary: 'Stripe webhooks, authenticated by the Stripe-Signature header over the raw body (no session, no CSRF token). Each event id is applied once.',
    tags: plans,
    access: 'public',
    responses: {
      200: {
        description: 'Received (also, logged and changing nothing, for a redelivered event, a customer we do not know, a subscription Stripe does not know or of another customer, or an object of an unexpected shape)',
        schema: WebhookRead,
      },
      400: { description: 'The signature does not match the body' },
      503: { description: 'Stripe could not be asked for the current state; Stripe delivers again later' },
    },
    handler: async (ctx, { em }) => {
      const event = await payments.plans.gateway().verifyEvent(rawBodies.get(ctx) ?? Buffer.alloc(0), ctx.get('Stripe-Signature') || undefined);
      const outcome = await payments.webhooks.handle(em, event);
      ctx.body = { received: true, duplicate: outcome === 'duplicate' };
    },
  });
}
