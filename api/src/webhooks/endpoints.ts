import type { EntityManager } from '@mikro-orm/postgresql';
import { ownedBy } from '../accounts/ownership.ts';
import type { Clock } from '../shared/clock.ts';
import { Conflict, Invalid, LimitReached, NotFound } from '../shared/errors.ts';
import type { PageRequest } from '../shared/page.ts';
import { WebhookDelivery, WebhookEndpoint, type WebhookDeliveryRow, type WebhookEndpointRow } from './entities.ts';
import type { WebhookEventType } from './payloads.ts';
import { newSigningSecret } from './signing.ts';
import { checkTargetHost, checkTargetUrl, TargetRefused, type Resolver } from './targets.ts';

/** How long the secret a rotation replaced still signs (both signatures are sent meanwhile). */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3600 * 1000;

export interface WebhookEndpointsDeps {
  clock: Clock;
  /** WEBHOOK_MAX_ENDPOINTS_PER_USER. */
  maxPerUser: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS. */
  allowPrivate: boolean;
  resolver: Resolver;
  /** Wakes the delivery worker (a redelivery is due now). */
  wake: () => void;
}

export interface EndpointFields {
  url: string;
  event_types: WebhookEventType[];
  description: string | null;
  enabled: boolean;
}

/** A user's webhook endpoints: registration within the limit and to allowed targets, changes, the delivery log and redelivery. */
export class WebhookEndpoints {
  readonly #d: WebhookEndpointsDeps;

  constructor(deps: WebhookEndpointsDeps) {
    this.#d = deps;
  }

  list(em: EntityManager, userId: string): Promise<WebhookEndpointRow[]> {
    return em.find(WebhookEndpoint, { userId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  }

  async get(em: EntityManager, userId: string, id: string): Promise<WebhookEndpointRow> {
    return ownedBy(await em.findOne(WebhookEndpoint, { id }, { refresh: true }), userId, { notFound: 'webhook.not_found' });
  }

  /** Registers an endpoint with a new secret (returned with it, the only time it is shown besides a rotation). */
  async create(em: EntityManager, userId: string, fields: EndpointFields): Promise<WebhookEndpointRow> {
    await this.#checkTarget(fields.url);
    return em.transactional(async (tx) => {
      // under the user's lock the count includes every creation committed before: concurrent ones cannot pass the limit
      await tx.execute(`select pg_advisory_xact_lock(hashtext('webhook_endpoints:' || ?))`, [userId]);
      if ((await tx.count(WebhookEndpoint, { userId })) >= this.#d.maxPerUser) {
        throw LimitReached('webhook.limit_reached', { params: { max: this.#d.maxPerUser }, code: 'WebhookLimitReached' });
      }
      const now = this.#d.clock.now();
      const endpoint = tx.create(WebhookEndpoint, {
        id: crypto.randomUUID(),
        userId,
        url: fields.url,
        description: fields.description,
        eventTypes: [...new Set(fields.event_types)],
        enabled: fields.enabled,
        secret: newSigningSecret(),
        previousSecret: null,
        previousSecretExpiresAt: null,
        failingSince: null,
        disabledReason: null,
        createdAt: now,
        updatedAt: now,
      });
      await tx.flush();
      return endpoint;
    });
  }

  /** Changes fields; a new URL is checked like a new endpoint; enabling clears a disabling for failures. */
  async update(em: EntityManager, userId: string, id: string, fields: Partial<EndpointFields>): Promise<WebhookEndpointRow> {
    const endpoint = await this.get(em, userId, id);
    if (fields.url !== undefined && fields.url !== endpoint.url) await this.#checkTarget(fields.url);
    if (fields.url !== undefined) endpoint.url = fields.url;
    if (fields.description !== undefined) endpoint.description = fields.description;
    if (fields.event_types !== undefined) endpoint.eventTypes = [...new Set(fields.event_types)];
    if (fields.enabled !== undefined && fields.enabled !== endpoint.enabled) {
      endpoint.enabled = fields.enabled;
      endpoint.disabledReason = null;
      endpoint.failingSince = null;
    }
    endpoint.updatedAt = this.#d.clock.now();
    await em.flush();
    if (endpoint.enabled) this.#d.wake();
    return endpoint;
  }

  /** Deletes the endpoint with its delivery log and pending deliveries (cascade). */
  async delete(em: EntityManager, userId: string, id: string): Promise<void> {
    const endpoint = await this.get(em, userId, id);
    await em.nativeDelete(WebhookEndpoint, { id: endpoint.id });
  }

  /** A new secret; the old one keeps signing (a second signature) for a day. */
  async rotateSecret(em: EntityManager, userId: string, id: string): Promise<WebhookEndpointRow> {
    const endpoint = await this.get(em, userId, id);
    const now = this.#d.clock.now();
    endpoint.previousSecret = endpoint.secret;
    endpoint.previousSecretExpiresAt = new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS);
    endpoint.secret = newSigningSecret();
    endpoint.updatedAt = now;
    await em.flush();
    return endpoint;
  }

  /** The endpoint's delivery log, newest first. */
  async deliveries(em: EntityManager, userId: string, id: string, page: PageRequest): Promise<{ rows: WebhookDeliveryRow[]; total: number }> {
    const endpoint = await this.get(em, userId, id);
    const [rows, total] = await em.findAndCount(
      WebhookDelivery,
      { endpoint: endpoint.id },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: page.items_per_page, offset: (page.page - 1) * page.items_per_page, refresh: true },
    );
    return { rows, total };
  }

  /**
   * Sends a delivery again now, whatever its state, with the same message id; a failure
   * then follows the retry schedule from its start. 409 while the endpoint is disabled or the
   * delivery is being attempted.
   */
  async redeliver(em: EntityManager, userId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliveryRow> {
    const endpoint = await this.get(em, userId, endpointId);
    if (!endpoint.enabled) throw Conflict('webhook.endpoint_disabled', { code: 'WebhookEndpointDisabled' });
    const now = this.#d.clock.now();
    const moved = await em.nativeUpdate(
      WebhookDelivery,
      { id: deliveryId, endpoint: endpoint.id, $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] },
      { status: 'pending', scheduleStep: 0, nextAttemptAt: now, leaseUntil: null },
    );
    const delivery = await em.findOne(WebhookDelivery, { id: deliveryId, endpoint: endpoint.id }, { refresh: true });
    if (!delivery) throw NotFound('webhook.delivery_not_found');
    if (moved === 0) throw Conflict('webhook.delivery_in_flight', { code: 'WebhookDeliveryInFlight' });
    this.#d.wake();
    return delivery;
  }

  /** Account deletion: the user's endpoints, their logs and pending deliveries. */
  async deleteAllOf(em: EntityManager, userId: string): Promise<void> {
    await em.nativeDelete(WebhookEndpoint, { userId });
  }

  async #checkTarget(raw: string): Promise<void> {
    try {
      await checkTargetHost(checkTargetUrl(raw, this.#d.allowPrivate), this.#d.allowPrivate, this.#d.resolver);
    } catch (error) {
      if (error instanceof TargetRefused) throw Invalid('webhook.target_refused', { params: { reason: error.message }, code: 'WebhookTargetRefused' });
      throw error;
    }
  }
}
