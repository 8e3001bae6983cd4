import { z } from 'zod';
import { BillingStatusSchema } from '../billing/schemas.ts';
import { cancellationOutcomes } from './entities.ts';
import { issueKey } from '../i18n/index.ts';

/** A plan named by the price table's integer id. */
export const PriceRequest = z.object({
  price_id: z.int().describe('An id of the price table (STRIPE_PRICES): it names a tier and a billing interval.'),
});

export const CheckoutSessionRead = z
  .object({ url: z.string().describe('Stripe Checkout address to send the browser to; the plan starts when Stripe confirms the payment.') })
  .meta({ id: 'CheckoutSession' });

export const CancellationFeedbackRequest = z.object({
  reason: z.string().trim().min(1).max(64).describe('Why, e.g. too_expensive or poor_quality.'),
  detail: z.string().max(2000).nullable().default(null),
  outcome: z.enum(cancellationOutcomes),
});

export const CancellationFeedbackRead = z
  .object({
    outcome: z.enum(cancellationOutcomes),
    reminder_at: z.iso.datetime().nullable().describe('For reminder_set: when the reminder mail goes out.'),
    billing: BillingStatusSchema,
  })
  .meta({ id: 'CancellationFeedbackResult' });

export const SupportRequestBody = z.object({
  reason: z.string().trim().min(1).max(64),
  message: z.string().trim().min(1).max(5000),
});

export const SupportRequestRead = z.object({ sent: z.literal(true) }).meta({ id: 'SupportRequestResult' });

export const BetaGrantRequest = z
  .object({
    user_id: z.uuid().optional().describe('The user, by id (or give email).'),
    email: z.email().optional().describe('The user, by address (or give user_id).'),
    credits: z.number().positive().max(100_000).describe('Beta AI minutes granted now and again at each renewal.'),
    renewal_date: z.iso.datetime({ offset: true }).describe('When the beta credits renew first; then every BETA_RENEWAL_DAYS.'),
  })
  .refine((body) => (body.user_id === undefined) !== (body.email === undefined), { error: issueKey('validation.user_id_or_email'), path: ['user_id'] });

export const BetaGrantRead = z.object({ user_id: z.uuid(), billing: BillingStatusSchema }).meta({ id: 'BetaGrantResult' });

export const WebhookRead = z.object({ received: z.literal(true), duplicate: z.boolean() });
