import { defineEntity, p } from '@mikro-orm/core';

/** A user's webhook endpoint: where events of the chosen types are sent, signed with its own secret. */
export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().index(),
    url: p.string().length(2048),
    description: p.string().length(500).nullable(),
    eventTypes: p.array(),
    enabled: p.boolean().default(true),
    /** `whsec_` + base64 of 32 random bytes (Standard Webhooks); the HMAC key is the decoded bytes. */
    secret: p.string().length(100),
    /** After a rotation the old secret signs too, until this time, so receivers can switch over. */
    previousSecret: p.string().length(100).nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    /** The first failed attempt since the last success; null while deliveries succeed. */
    failingSince: p.datetime().nullable(),
    /** Why the service disabled it (`failing`); null when enabled or disabled by its owner. */
    disabledReason: p.string().length(50).nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type WebhookEndpointRow = InstanceType<typeof WebhookEndpoint.class>;

export const deliveryStatuses = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

/**
 * One event owed to one endpoint: the outbox row the delivery worker claims, and the
 * delivery log the owner reads. The payload is kept as the exact bytes that are signed.
 */
export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    id: p.uuid().primary(),
    endpoint: () => p.manyToOne(WebhookEndpoint).deleteRule('cascade').index(),
    /** The Standard Webhooks `webhook-id`: the same for every attempt of this event. */
    messageId: p.string().length(64),
    eventType: p.string().length(64),
    payload: p.text(),
    status: p.enum([...deliveryStatuses]).default('pending'),
    attempts: p.integer().default(0),
    /** Position in the retry schedule; a manual redelivery starts it again. */
    scheduleStep: p.integer().default(0),
    nextAttemptAt: p.datetime().nullable(),
    /** Set when a worker claims the row; a worker that dies leaves it to expire, then the row is claimed again. */
    leaseUntil: p.datetime().nullable(),
    lastAttemptAt: p.datetime().nullable(),
    responseStatus: p.integer().nullable(),
    latencyMs: p.integer().nullable(),
    lastError: p.text().nullable(),
    createdAt: p.datetime(),
  },
  indexes: [{ properties: ['status', 'nextAttemptAt'] }],
});

export type WebhookDeliveryRow = InstanceType<typeof WebhookDelivery.class>;
