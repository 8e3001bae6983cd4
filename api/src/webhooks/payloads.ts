import { z } from 'zod';
import { tierNames } from '../billing/tiers.ts';
import { streamWebhookData } from '../events/catalog.ts';

/**
 * What Cutroom sends to webhook endpoints, one schema per event type: the body of every
 * delivery is `{ type, timestamp, data }` (the Standard Webhooks payload shape). The
 * OpenAPI document lists these under `webhooks` (http/openapi.ts).
 */

/** Billing's events, which no stream carries; the stream events' webhooks come from the catalog (events/catalog.ts). */
const billingEventData = {
  'subscription.updated': z.object({
    tier: z.enum(tierNames),
    subscription_status: z.string().max(50),
    billing_interval: z.string().max(20).nullable(),
    current_period_end: z.iso.datetime().nullable(),
    trial_ends_at: z.iso.datetime().nullable(),
  }),
  'credits.updated': z.object({
    change: z.enum(['grant', 'reserve', 'deduct', 'release']).describe('The ledger entry that changed the AI minutes.'),
    minutes: z.number().nonnegative(),
    balance: z.number(),
    reserved: z.number().nonnegative(),
    available: z.number(),
  }),
} as const;

export const webhookEventData = { ...streamWebhookData, ...billingEventData };

export type WebhookEventType = keyof typeof webhookEventData;
export const webhookEventTypes = Object.keys(webhookEventData) as [WebhookEventType, ...WebhookEventType[]];
export const WebhookEventTypeSchema = z.enum(webhookEventTypes);

/** One event as recorded: its type and its data, checked against the type's schema. */
export type WebhookEvent = { [T in WebhookEventType]: { type: T; data: z.infer<(typeof webhookEventData)[T]> } }[WebhookEventType];

/** The body of a delivery of type `T`. */
export function webhookPayloadSchema<T extends WebhookEventType>(type: T) {
  return z.object({
    type: z.literal(type),
    timestamp: z.iso.datetime().describe('When the event happened.'),
    data: webhookEventData[type],
  });
}
