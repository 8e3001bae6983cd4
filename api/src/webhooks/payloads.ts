import { z } from 'zod';
import { tierNames } from '../billing/tiers.ts';

/**
 * What Cutroom sends to webhook endpoints, one schema per event type: the body of every
 * delivery is `{ type, timestamp, data }` (the Standard Webhooks payload shape). The
 * OpenAPI document lists these under `webhooks` (http/openapi.ts).
 */

/** Longest text an event carries (a failure's message, a display name): payloads stay small. */
export const WEBHOOK_TEXT_MAX = 1000;
const text = z.string().max(WEBHOOK_TEXT_MAX);
const uuid = z.uuid();

const mediaIds = {
  media_item_uuid: uuid.describe('The media item the file belongs to.'),
  media_file_uuid: uuid.describe('The stored file the artifacts were made for.'),
  project_uuid: uuid.nullable().describe("The item's project; null for an item of the library."),
  display_name: z.string().max(255).nullable(),
};

export const webhookEventData = {
  'media.ready': z.object({ ...mediaIds, proxy_status: z.string().max(50) }),
  'media.failed': z.object({ ...mediaIds, error: text }),
  'analysis.started': z.object({ project_uuid: uuid, analysis_run_id: uuid }),
  'analysis.completed': z.object({ project_uuid: uuid, analysis_run_id: uuid, edit_count: z.int().nonnegative() }),
  'analysis.failed': z.object({ project_uuid: uuid, analysis_run_id: uuid, error: text }),
  'export.started': z.object({ project_uuid: uuid, export_uuid: uuid }),
  'export.completed': z.object({ project_uuid: uuid, export_uuid: uuid }),
  'export.failed': z.object({ project_uuid: uuid, export_uuid: uuid, error: text }),
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

/** A text cut to what a payload carries. */
export function payloadText(value: string): string {
  return value.length > WEBHOOK_TEXT_MAX ? `${value.slice(0, WEBHOOK_TEXT_MAX - 1)}…` : value;
}
