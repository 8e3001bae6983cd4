import type { QueryResult } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import { z } from 'zod';
import type { Clock } from '../shared/clock.ts';
import type { PlanChanges } from './service.ts';
import { InvoiceView, type VerifiedEvent } from './stripe-gateway.ts';

const idOf = z.union([z.string(), z.object({ id: z.string() })]).transform((value) => (typeof value === 'string' ? value : value.id));

const CheckoutCompleted = z.object({
  customer: idOf.nullable().optional(),
  subscription: idOf.nullable().optional(),
  client_reference_id: z.string().nullable().optional(),
});
const SubscriptionEvent = z.object({ id: z.string(), customer: idOf });

export type WebhookOutcome = 'applied' | 'duplicate' | 'ignored' | 'unknown_customer';

/**
 * Applies Stripe's events exactly once by event id: the id is written in the transaction
 * that applies the event, so a redelivery (or the same event arriving twice at once)
 * finds it and changes nothing. Order does not matter: a subscription event only names
 * the subscription, whose current state is read back from Stripe under the row lock.
 */
export class StripeWebhooks {
  readonly #plans: PlanChanges;
  readonly #clock: Clock;
  readonly #logger: Logger;
  /** cutroom_duplicate_subscriptions_total: second subscriptions cancelled and refunded (alert on any increase). */
  readonly #duplicates: Pick<Counter, 'inc'> | undefined;

  constructor(deps: { plans: PlanChanges; clock: Clock; logger: Logger; duplicates?: Pick<Counter, 'inc'> }) {
    this.#duplicates = deps.duplicates;
    this.#plans = deps.plans;
    this.#clock = deps.clock;
    this.#logger = deps.logger;
  }

  async handle(em: EntityManager, event: VerifiedEvent): Promise<WebhookOutcome> {
    return em.transactional(async (tx) => {
      const recorded = await tx.execute<QueryResult>(
        `insert into payment_events (event_id, type, processed_at) values (?, ?, ?) on conflict (event_id) do nothing`,
        [event.id, event.type, this.#clock.now()],
        'run',
      );
      if (recorded.affectedRows === 0) return 'duplicate';
      const outcome = await this.#apply(tx, event);
      if (outcome === 'unknown_customer') this.#logger.warn({ event_id: event.id, type: event.type }, 'a Stripe event for a customer we do not know: acknowledged, nothing changed');
      return outcome;
    });
  }

  async #apply(tx: EntityManager, event: VerifiedEvent): Promise<WebhookOutcome> {
    switch (event.type) {
      case 'checkout.session.completed': {
        const session = this.#read(CheckoutCompleted, event);
        if (!session) return 'ignored';
        const userId = await this.#userOfCheckout(tx, session.client_reference_id ?? null, session.customer ?? null);
        if (!userId || !(await this.#plans.billing.lockExistingSubscription(tx, userId))) return 'unknown_customer';
        if (session.subscription) return this.#sync(tx, userId, session.subscription, event);
        return 'applied';
      }
      case 'customer.subscription.created':
      case 'customer.subscription.updated':
      case 'customer.subscription.deleted': {
        const subscription = this.#read(SubscriptionEvent, event);
        if (!subscription) return 'ignored';
        const userId = await this.#lockedUserOf(tx, subscription.customer);
        if (!userId) return 'unknown_customer';
        return this.#sync(tx, userId, subscription.id, event);
      }
      case 'invoice.paid':
      case 'invoice.payment_failed': {
        const invoice = this.#read(InvoiceView, event);
        if (!invoice) return 'ignored';
        const userId = await this.#lockedUserOf(tx, invoice.customer);
        if (!userId) return 'unknown_customer';
        const subscriptionId = invoice.parent?.subscription_details?.subscription;
        const outcome = subscriptionId ? await this.#sync(tx, userId, subscriptionId, event) : 'applied';
        // a duplicate subscription's invoice (refunded) brings no minutes; the plan's does
        if (event.type === 'invoice.paid' && (!subscriptionId || (await this.#plans.isPlanSubscription(tx, userId, subscriptionId)))) {
          await this.#plans.grantInvoiceAllowance(tx, userId, invoice);
        }
        return outcome;
      }
      default:
        return 'ignored';
    }
  }

  /**
   * The user of a customer with their plan row locked, so requests and events of one user
   * apply in one order; undefined when unknown, or deleted while we waited for the lock.
   */
  async #lockedUserOf(tx: EntityManager, customer: string): Promise<string | undefined> {
    const userId = await this.#plans.userOfCustomer(tx, customer);
    if (!userId) return undefined;
    return (await this.#plans.billing.lockExistingSubscription(tx, userId)) ? userId : undefined;
  }

  /**
   * Reads the subscription's state now (the caller holds the user's row lock). A subscription
   * Stripe does not know, or one of another customer, is logged and acknowledged: Stripe
   * would redeliver an error for days and it would never apply.
   */
  async #sync(tx: EntityManager, userId: string, subscriptionId: string, event: VerifiedEvent): Promise<WebhookOutcome> {
    const view = await this.#plans.gateway().findSubscription(subscriptionId);
    if (!view) {
      this.#logger.warn({ event_id: event.id, type: event.type, subscription: subscriptionId }, 'a Stripe event naming a subscription Stripe does not know: acknowledged, nothing changed');
      return 'ignored';
    }
    if (await this.#plans.isDuplicate(tx, userId, view)) {
      const refunded = await this.#plans.gateway().cancelAndRefund(view.id);
      this.#duplicates?.inc();
      this.#logger.error(
        { alert: 'duplicate_subscription', event_id: event.id, type: event.type, userId, subscription: view.id, refunded },
        'a second live subscription of one user was cancelled and refunded (two Checkout sessions paid)',
      );
      return 'applied';
    }
    if (!(await this.#plans.applySubscription(tx, userId, view))) {
      this.#logger.warn({ event_id: event.id, type: event.type, subscription: subscriptionId }, 'a Stripe event naming a subscription that belongs to another customer: acknowledged, nothing changed');
      return 'ignored';
    }
    return 'applied';
  }

  /** The event's object in the shape its type promises; undefined (logged) for any other shape, which is acknowledged. */
  #read<T>(schema: z.ZodType<T>, event: VerifiedEvent): T | undefined {
    const parsed = schema.safeParse(event.object);
    if (parsed.success) return parsed.data;
    this.#logger.warn({ event_id: event.id, type: event.type, issues: parsed.error.issues.slice(0, 5) }, 'a Stripe event whose object has an unexpected shape: acknowledged, nothing changed');
    return undefined;
  }

  /** Checkout names our user (client_reference_id); its customer is linked if the user had none. */
  async #userOfCheckout(tx: EntityManager, reference: string | null, customer: string | null): Promise<string | undefined> {
    if (customer) {
      const known = await this.#plans.userOfCustomer(tx, customer);
      if (known) return known;
    }
    if (!reference || !z.uuid().safeParse(reference).success || !customer) return undefined;
    const [user] = await tx.execute<{ id: string }[]>(`select id from users where id = ?`, [reference]);
    if (!user) return undefined;
    await this.#plans.linkCustomer(tx, user.id, customer);
    return user.id;
  }
}
