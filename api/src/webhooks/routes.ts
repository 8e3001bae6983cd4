import { z } from 'zod';
import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import { listOf, listSchema, pageOf } from '../http/pagination.ts';
import type { WebhookEndpoints } from './endpoints.ts';
import { webhookEventTypes, webhookPayloadSchema } from './payloads.ts';
import {
  DeliveriesQuery,
  DeliveryParams,
  deliveryRead,
  endpointRead,
  EndpointParams,
  WebhookDeliveryPage,
  WebhookDeliveryRead,
  WebhookEndpointCreate,
  WebhookEndpointPatch,
  WebhookEndpointRead,
  WebhookEndpointWithSecret,
} from './schemas.ts';

const PATH = '/api/v1/users/me/webhooks';
const ITEM = `${PATH}/{webhook_id}`;
const tags = ['webhooks'];
const notFound = { 404: { description: 'No such webhook endpoint of yours' } };

/** The webhook endpoints of the caller, their delivery log and redelivery; the payloads as the document's `webhooks`. */
export function registerWebhookRoutes(router: AppRouter, endpoints: WebhookEndpoints, maxPerUser: number): void {
  router.add({
    method: 'get',
    path: PATH,
    summary: "The caller's webhook endpoints, oldest first (secrets are not shown).",
    tags,
    access: 'session',
    scope: 'read',
    responses: { 200: { description: 'Every endpoint of the caller', schema: listSchema(WebhookEndpointRead) } },
    handler: async (ctx, { caller, em }) => {
      ctx.body = listOf((await endpoints.list(em, caller.user.id)).map(endpointRead));
    },
  });

  router.add({
    method: 'post',
    path: PATH,
    summary: 'Registers a webhook endpoint; the answer carries its signing secret, shown only now.',
    tags,
    access: 'session',
    scope: 'write',
    idempotent: { withheld: ['secret'] },
    body: WebhookEndpointCreate,
    responses: {
      201: { description: 'The endpoint with its secret', schema: WebhookEndpointWithSecret },
      403: { description: `The caller already has ${maxPerUser} endpoints (code WebhookLimitReached)` },
      422: { description: 'A field is invalid, or the URL is a refused target (code WebhookTargetRefused): only global unicast addresses are taken (IPv6 within 2000::/3; no loopback, private, link-local, CGNAT, reserved or IPv4-in-IPv6 address), checked for every address the name resolves to' },
    },
    handler: async (ctx, { body, caller, em }) => {
      const endpoint = await endpoints.create(em, caller.user.id, body);
      ctx.status = 201;
      ctx.body = { ...endpointRead(endpoint), secret: endpoint.secret };
    },
  });

  router.add({
    method: 'get',
    path: ITEM,
    summary: 'One webhook endpoint.',
    tags,
    access: 'session',
    scope: 'read',
    params: EndpointParams,
    responses: { 200: { description: 'The endpoint', schema: WebhookEndpointRead }, ...notFound },
    handler: async (ctx, { params, caller, em }) => {
      ctx.body = endpointRead(await endpoints.get(em, caller.user.id, params.webhook_id));
    },
  });

  router.add({
    method: 'patch',
    path: ITEM,
    summary: 'Changes any fields of a webhook endpoint; enabling it again clears a disabling for failures.',
    tags,
    access: 'session',
    scope: 'write',
    params: EndpointParams,
    body: WebhookEndpointPatch,
    responses: { 200: { description: 'The endpoint', schema: WebhookEndpointRead }, ...notFound, 422: { description: 'A field is invalid, or the URL is a refused target' } },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = endpointRead(await endpoints.update(em, caller.user.id, params.webhook_id, body));
    },
  });

  router.add({
    method: 'delete',
    path: ITEM,
    summary: 'Deletes a webhook endpoint with its delivery log and pending deliveries.',
    tags,
    access: 'session',
    scope: 'write',
    params: EndpointParams,
    responses: { 204: { description: 'Deleted' }, ...notFound },
    handler: async (ctx, { params, caller, em }) => {
      await endpoints.delete(em, caller.user.id, params.webhook_id);
      ctx.status = 204;
    },
  });

  router.add({
    method: 'post',
    path: `${ITEM}/rotate-secret`,
    summary: 'Replaces the signing secret; for 24 hours deliveries carry a signature by the old secret too.',
    tags,
    access: 'session',
    scope: 'write',
    // the new secret is shown once: a replay of the rotation answers it as null
    idempotent: { withheld: ['secret'] },
    params: EndpointParams,
    responses: { 200: { description: 'The endpoint with its new secret', schema: WebhookEndpointWithSecret }, ...notFound },
    handler: async (ctx, { params, caller, em }) => {
      const endpoint = await endpoints.rotateSecret(em, caller.user.id, params.webhook_id);
      ctx.body = { ...endpointRead(endpoint), secret: endpoint.secret };
    },
  });

  router.add({
    method: 'get',
    path: `${ITEM}/deliveries`,
    summary: "The endpoint's delivery log, newest first: status, response code, latency, attempts, next attempt, last error.",
    tags,
    access: 'session',
    scope: 'read',
    params: EndpointParams,
    query: DeliveriesQuery,
    responses: { 200: { description: 'A page of deliveries', schema: WebhookDeliveryPage }, ...notFound },
    handler: async (ctx, { params, query, caller, em }) => {
      const { rows, total } = await endpoints.deliveries(em, caller.user.id, params.webhook_id, query);
      ctx.body = pageOf(rows.map(deliveryRead), total, query);
    },
  });

  router.add({
    method: 'post',
    path: `${ITEM}/deliveries/{delivery_id}/redeliver`,
    summary: 'Sends a delivery again now, with the same webhook-id; if it fails, the retry schedule starts over.',
    tags,
    access: 'session',
    scope: 'write',
    params: DeliveryParams,
    responses: {
      202: { description: 'Queued', schema: WebhookDeliveryRead },
      404: { description: 'No such endpoint or delivery of yours' },
      409: { description: 'The endpoint is disabled (WebhookEndpointDisabled) or the delivery is being attempted (WebhookDeliveryInFlight)' },
    },
    handler: async (ctx, { params, caller, em }) => {
      const delivery = await endpoints.redeliver(em, caller.user.id, params.webhook_id, params.delivery_id);
      ctx.status = 202;
      ctx.body = deliveryRead(delivery);
    },
  });

  registerWebhookPayloads(router);
}

/** Each event type as an OpenAPI 3.1 `webhooks` entry: the signed POST a receiver gets (described when the document is first built). */
function registerWebhookPayloads(router: AppRouter): void {
  router.describe((registry) => {
    const headers = z.object({
      'webhook-id': z.string().describe('The message id: the same for every attempt of one event (deduplicate on it).'),
      'webhook-timestamp': z.string().describe('Unix seconds of this attempt.'),
      'webhook-signature': z.string().describe('`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the endpoint secret (Standard Webhooks); space-separated when two secrets sign.'),
    });
    for (const type of webhookEventTypes) {
      registry.registerWebhook({
        method: 'post',
        path: type,
        operationId: `webhook${type.split('.').map((part) => part[0]!.toUpperCase() + part.slice(1)).join('')}`,
        summary: `The ${type} event, signed per the Standard Webhooks specification.`,
        tags,
        request: { headers, body: { content: { 'application/json': { schema: webhookPayloadSchema(type).meta({ id: `WebhookEvent_${type.replace('.', '_')}` }) } } } },
        responses: {
          200: {
            description:
              'Any 2xx acknowledges the delivery: the status alone decides, the body is never read (the connection is closed once the status line arrives). ' +
              'Anything else, no status within WEBHOOK_TIMEOUT_MS (10 s) or a redirect is retried. Deliveries are shared fairly among users: one user\'s slow receivers never delay another user\'s delivery by more than one timeout.',
          },
        },
      });
    }
  });
}
