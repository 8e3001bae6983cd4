import { z } from 'zod';
import { pageQuery, pageSchema } from '../http/pagination.ts';
import { deliveryStatuses, type WebhookDeliveryRow, type WebhookEndpointRow } from './entities.ts';
import { WebhookEventTypeSchema } from './payloads.ts';

export const EndpointParams = z.object({ webhook_id: z.uuid() });
export const DeliveryParams = z.object({ webhook_id: z.uuid(), delivery_id: z.uuid() });
export const DeliveriesQuery = z.object(pageQuery);

const fields = {
  url: z.url({ protocol: /^https?$/ }).max(2048).describe('Where events are POSTed (http or https; private, loopback and link-local targets are refused unless WEBHOOK_ALLOW_PRIVATE_TARGETS).'),
  event_types: z.array(WebhookEventTypeSchema).min(1).max(20).describe('The event types sent to this endpoint.'),
  description: z.string().trim().max(500).nullable(),
  enabled: z.boolean(),
};

export const WebhookEndpointCreate = z
  .strictObject({ ...fields, description: fields.description.default(null), enabled: fields.enabled.default(true) })
  .meta({ id: 'WebhookEndpointCreate' });
export const WebhookEndpointPatch = z.strictObject(fields).partial().meta({ id: 'WebhookEndpointPatch' });

export const WebhookEndpointRead = z
  .object({
    id: z.uuid(),
    ...fields,
    disabled_reason: z.enum(['failing']).nullable().describe('`failing`: Cutroom disabled it after its deliveries failed for WEBHOOK_DISABLE_AFTER_DAYS days.'),
    failing_since: z.iso.datetime().nullable().describe('The first failed attempt since the last success.'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'WebhookEndpoint' });

export const WebhookEndpointWithSecret = WebhookEndpointRead.extend({
  secret: z.string().nullable().describe('The signing secret (`whsec_` + base64), shown only here and after a rotation; null only in a replay of an Idempotency-Key creation or rotation (the secret is never kept for replays).'),
}).meta({ id: 'WebhookEndpointWithSecret' });

export const WebhookDeliveryRead = z
  .object({
    id: z.uuid(),
    message_id: z.string().describe('The `webhook-id` header of every attempt of this delivery.'),
    event_type: WebhookEventTypeSchema,
    status: z.enum(deliveryStatuses).describe('pending (waiting for its next attempt), succeeded (a 2xx), failed (every retry failed).'),
    attempts: z.int().nonnegative(),
    response_status: z.int().nullable().describe("The last attempt's HTTP status; null when no answer came."),
    latency_ms: z.int().nullable().describe('How long the last attempt took.'),
    last_error: z.string().nullable(),
    next_attempt_at: z.iso.datetime().nullable(),
    last_attempt_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    payload: z.record(z.string(), z.unknown()).describe('The body sent: `{ type, timestamp, data }`.'),
  })
  .meta({ id: 'WebhookDelivery' });

export const WebhookDeliveryPage = pageSchema(WebhookDeliveryRead, 'WebhookDeliveryPage');

const iso = (date: Date | null | undefined) => (date ? new Date(date).toISOString() : null);

export function endpointRead(row: WebhookEndpointRow): z.infer<typeof WebhookEndpointRead> {
  return {
    id: row.id,
    url: row.url,
    event_types: row.eventTypes as z.infer<typeof WebhookEventTypeSchema>[],
    description: row.description ?? null,
    enabled: row.enabled,
    disabled_reason: row.disabledReason === 'failing' ? 'failing' : null,
    failing_since: iso(row.failingSince),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export function deliveryRead(row: WebhookDeliveryRow): z.infer<typeof WebhookDeliveryRead> {
  return {
    id: row.id,
    message_id: row.messageId,
    event_type: row.eventType as z.infer<typeof WebhookEventTypeSchema>,
    status: row.status,
    attempts: row.attempts,
    response_status: row.responseStatus ?? null,
    latency_ms: row.latencyMs ?? null,
    last_error: row.lastError ?? null,
    next_attempt_at: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
    last_attempt_at: iso(row.lastAttemptAt),
    created_at: row.createdAt.toISOString(),
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  };
}
