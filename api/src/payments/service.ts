import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { UserRow } from '../accounts/entities.ts';
import { effectivePlan, type BillingService, type BillingStatus } from '../billing/billing-service.ts';
import type { SubscriptionRow, SubscriptionStatus } from '../billing/entities.ts';
import { TIERS, type TierName } from '../billing/tiers.ts';
import type { Locale } from '../i18n/index.ts';
import type { Clock } from '../shared/clock.ts';
import { Conflict, DomainError, Invalid, Unavailable } from '../shared/errors.ts';
import type { DueActions } from './due-actions.ts';
import { CancellationFeedback, PaymentCustomer, type CancellationOutcome, type PaymentCustomerRow } from './entities.ts';
import { comparePlans, type BillingInterval, type PlanPrice, type PriceTable } from './price-table.ts';
import { PaymentDeclined, type InvoiceView, type StripeGateway, type SubscriptionView } from './stripe-gateway.ts';

const DAY_MS = 86_400_000;

/** Stripe statuses of a subscription that bills, or will bill again. */
const LIVE_STRIPE_STATUSES = new Set(['active', 'trialing', 'past_due', 'unpaid']);

/** Stripe's subscription statuses in ours; `incomplete` (checkout not paid yet) is no plan yet. */
const STATUS_OF_STRIPE: Record<string, SubscriptionStatus> = {
  active: 'active',
  trialing: 'active',
  past_due: 'past_due',
  unpaid: 'past_due',
  canceled: 'canceled',
  incomplete_expired: 'canceled',
  paused: 'canceled',
};

interface PlanSettings {
  graceDays: number;
  reminderDays: number;
  retentionCoupon: string;
}

export interface PaymentsDeps {
  billing: BillingService;
  /** Undefined without STRIPE_SECRET_KEY: every call that needs Stripe is then a 503. */
  gateway: StripeGateway | undefined;
  prices: PriceTable;
  dueActions: DueActions;
  clock: Clock;
  logger: Logger;
  settings: PlanSettings;
  baseUrl: () => string;
  /** Where a user's plan change is held while it talks to Stripe (no database connection is held across those calls). */
  changeLock: ChangeLock;
}

/** A short per-user lock outside the database pool: a second change of one user meets it and answers 409 at once. */
export interface ChangeLock {
  /** The release, or undefined when another change of the user holds the lock. */
  acquire(userId: string): Promise<(() => Promise<void>) | undefined>;
}

export interface CancellationInput {
  reason: string;
  detail: string | null;
  outcome: CancellationOutcome;
}

/**
 * Paid plans on Stripe: checkout for a first plan, upgrades charged now, downgrades at the
 * end of the period, the cancellation flow, and applying what Stripe reports (webhooks)
 * to billing's subscription row. Every change of a user's plan holds that row's lock
 * (the ledger's lock too), so requests and webhooks of one user never interleave.
 */
export class PlanChanges {
  readonly #deps: PaymentsDeps;

  constructor(deps: PaymentsDeps) {
    this.#deps = deps;
  }

  get billing(): BillingService {
    return this.#deps.billing;
  }

  gateway(): StripeGateway {
    if (!this.#deps.gateway) throw Unavailable('payments.not_configured');
    return this.#deps.gateway;
  }

  /**
   * A Free or trial user's way to a paid plan: the Stripe Checkout address. The plan
   * starts when Stripe's webhook says the subscription is paid, not here.
   */
  async startCheckout(em: EntityManager, user: UserRow, priceId: number): Promise<{ url: string }> {
    const gateway = this.gateway();
    const price = this.#deps.prices.byId(priceId);
    // one checkout of a user at a time, and one open session: an earlier session's page can no longer be paid
    return this.#exclusive(user.id, async () => {
      const subscription = await this.#deps.billing.subscriptionOf(em, user.id);
      if (effectivePlan(subscription, this.#deps.clock.now()).paid) throw Conflict('billing.plan_active');
      const link = await this.#customerOf(em, user);
      for (const open of await gateway.openCheckoutSessions(link.stripeCustomerId)) await gateway.expireCheckoutSession(open);
      const base = this.#deps.baseUrl();
      return gateway.createCheckoutSession({
        customer: link.stripeCustomerId,
        userId: user.id,
        stripePrice: price.stripePrice,
        successUrl: `${base}/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
        cancelUrl: `${base}/billing?checkout=canceled`,
        locale: localeOf(user),
      });
    });
  }

  /**
   * A live subscription of the user's customer other than the one the plan follows, while
   * that one is live too: a second Checkout paid (two tabs), which would bill twice and
   * silently become the plan when the first is cancelled.
   */
  async isDuplicate(tx: EntityManager, userId: string, view: SubscriptionView): Promise<boolean> {
    if (!LIVE_STRIPE_STATUSES.has(view.status)) return false;
    const link = await tx.findOne(PaymentCustomer, { userId }, { refresh: true });
    if (!link?.stripeSubscriptionId || link.stripeSubscriptionId === view.id || view.customer !== link.stripeCustomerId) return false;
    const subscription = await this.#deps.billing.subscriptionOf(tx, userId);
    return effectivePlan(subscription, this.#deps.clock.now()).paid;
  }

  /** Whether an invoice is of the subscription the user's plan follows (its allowance is then due). */
  async isPlanSubscription(tx: EntityManager, userId: string, subscriptionId: string): Promise<boolean> {
    const link = await tx.findOne(PaymentCustomer, { userId }, { refresh: true });
    return link?.stripeSubscriptionId === subscriptionId;
  }

  /**
   * A higher plan now: Stripe charges the prorated difference at once and, only when that
   * payment succeeds, the tier changes. A declined payment leaves the old tier (402).
   * Held by the user's change lock, not a row lock: the Stripe calls run with no database
   * connection taken, and their answer is applied in a short transaction.
   */
  async confirmUpgrade(em: EntityManager, user: UserRow, priceId: number): Promise<void> {
    const gateway = this.gateway();
    const target = this.#deps.prices.byId(priceId);
    await this.#exclusive(user.id, async () => {
      const { subscription, link, current } = await this.#readPaidPlan(em, user.id);
      const order = comparePlans(target, current);
      if (order === 0) throw Conflict('payments.already_on_plan');
      if (order < 0) throw Invalid('payments.not_an_upgrade');
      const view = await gateway.retrieveSubscription(link.stripeSubscriptionId!);
      // An upgrade before the period end replaces the scheduled downgrade.
      if (view.schedule) await gateway.releaseSchedule(view.schedule);
      let changed: Awaited<ReturnType<StripeGateway['changePriceNow']>> | undefined;
      try {
        changed = await gateway.changePriceNow({
          subscriptionId: view.id,
          itemId: view.items.data[0]!.id,
          stripePrice: target.stripePrice,
          // The row's version: a retry of this very request reuses Stripe's answer, a later upgrade does not.
          idempotencyKey: `upgrade:${user.id}:${subscription.updatedAt.getTime()}:${target.id}`,
        });
      } catch (error) {
        if (!(error instanceof PaymentDeclined)) throw error;
      }
      await em.fork().transactional(async (tx) => {
        const locked = await this.#deps.billing.lockSubscription(tx, user.id);
        if (view.schedule) {
          const row = await tx.findOneOrFail(PaymentCustomer, { userId: user.id }, { refresh: true });
          this.#clearSchedule(locked, row);
          await tx.flush();
        }
        if (!changed) return;
        await this.applySubscription(tx, user.id, changed.subscription);
        if (changed.invoice) await this.grantInvoiceAllowance(tx, user.id, changed.invoice);
      });
      if (!changed) throw new DomainError('insufficient_credits', 'payments.payment_failed', { code: 'PaymentDeclined', params: { tier: subscription.tier } });
    });
  }

  /**
   * A lower plan from the end of the billing period, through Stripe's own subscription
   * schedule; the current tier holds until Stripe switches the price. Held by the user's
   * change lock; the schedule's id is recorded in a short transaction after Stripe answered.
   */
  async scheduleDowngrade(em: EntityManager, user: UserRow, priceId: number): Promise<void> {
    const gateway = this.gateway();
    const target = this.#deps.prices.byId(priceId);
    await this.#exclusive(user.id, async () => {
      const { subscription, link, current } = await this.#readPaidPlan(em, user.id);
      const order = comparePlans(target, current);
      if (order === 0) throw Conflict('payments.already_on_plan');
      if (order > 0) throw Invalid('payments.not_a_downgrade');
      const view = await gateway.retrieveSubscription(link.stripeSubscriptionId!);
      const scheduleId = await gateway.scheduleAtPeriodEnd({
        subscription: view,
        stripePrice: target.stripePrice,
        interval: target.interval,
        idempotencyKey: `downgrade:${user.id}:${subscription.updatedAt.getTime()}:${target.id}`,
      });
      await em.fork().transactional(async (tx) => {
        const locked = await this.#deps.billing.lockSubscription(tx, user.id);
        const row = await tx.findOneOrFail(PaymentCustomer, { userId: user.id }, { refresh: true });
        const now = this.#deps.clock.now();
        row.stripeScheduleId = scheduleId;
        row.scheduledPriceId = target.id;
        row.updatedAt = now;
        locked.scheduledTier = target.tier;
        locked.scheduledBillingInterval = target.interval;
        locked.scheduledAt = new Date(view.items.data[0]!.current_period_end * 1000);
        locked.updatedAt = now;
        await tx.flush();
      });
    });
  }

  /**
   * Records why a subscriber thought of leaving and performs what they chose; returns when a
   * reminder is due. An outcome that calls Stripe (cancelled, discount_accepted) holds the
   * user's change lock and applies Stripe's answer in a short transaction after it.
   */
  async cancellationFeedback(em: EntityManager, user: UserRow, input: CancellationInput): Promise<{ reminderAt: Date | null }> {
    const record = (tx: EntityManager, tier: TierName, now: Date) => {
      tx.create(CancellationFeedback, { id: randomUUID(), userId: user.id, reason: input.reason, detail: input.detail, outcome: input.outcome, tier, createdAt: now });
    };
    switch (input.outcome) {
      case 'cancelled':
        return this.#exclusive(user.id, async () => {
          const { subscription, link } = await this.#readPaidPlan(em, user.id);
          const tier = effectivePlan(subscription, this.#deps.clock.now()).tier;
          // every live subscription of the customer ends, not only the one the plan follows
          const gateway = this.gateway();
          const view = await gateway.cancelSubscription(link.stripeSubscriptionId!);
          for (const other of await gateway.liveSubscriptions(link.stripeCustomerId)) {
            if (other.id === view.id) continue;
            await gateway.cancelSubscription(other.id);
            this.#deps.logger.warn({ userId: user.id, subscription: other.id }, 'a second live subscription of the customer was cancelled with the plan');
          }
          await em.fork().transactional(async (tx) => {
            await this.applySubscription(tx, user.id, view);
            record(tx, tier, this.#deps.clock.now());
            await tx.flush();
          });
          return { reminderAt: null };
        });
      case 'discount_accepted':
        return this.#exclusive(user.id, async () => {
          const { subscription, link } = await this.#readPaidPlan(em, user.id);
          if (subscription.discountUsed) throw Conflict('payments.discount_used');
          const tier = effectivePlan(subscription, this.#deps.clock.now()).tier;
          const view = await this.gateway().applyCoupon({
            subscriptionId: link.stripeSubscriptionId!,
            coupon: this.#deps.settings.retentionCoupon,
            idempotencyKey: `retention-discount:${user.id}`,
          });
          await em.fork().transactional(async (tx) => {
            await this.applySubscription(tx, user.id, view);
            // After applying: the lock's refresh would drop an unflushed change.
            const locked = await this.#deps.billing.lockSubscription(tx, user.id);
            locked.discountUsed = true;
            record(tx, tier, this.#deps.clock.now());
            await tx.flush();
          });
          return { reminderAt: null };
        });
      case 'reminder_set':
      case 'kept_plan':
        return em.transactional(async (tx) => {
          const subscription = await this.#deps.billing.lockSubscription(tx, user.id);
          const now = this.#deps.clock.now();
          const tier = effectivePlan(subscription, now).tier;
          let reminderAt: Date | null = null;
          if (input.outcome === 'reminder_set') {
            await this.#paidPlan(tx, subscription, user.id);
            if (!subscription.currentPeriodEnd) throw Conflict('payments.no_subscription');
            const before = subscription.currentPeriodEnd.getTime() - this.#deps.settings.reminderDays * DAY_MS;
            reminderAt = new Date(Math.max(before, now.getTime()));
            await this.#deps.dueActions.schedule(tx, user.id, 'renewal_reminder', reminderAt);
          }
          record(tx, tier, now);
          await tx.flush();
          return { reminderAt };
        });
    }
  }

  /** Runs one plan change of the user at a time; another already under way answers 409 at once. */
  async #exclusive<T>(userId: string, change: () => Promise<T>): Promise<T> {
    const release = await this.#deps.changeLock.acquire(userId);
    if (!release) throw Conflict('payments.change_in_progress');
    try {
      return await change();
    } finally {
      await release().catch((error: unknown) => this.#deps.logger.warn({ err: error, userId }, 'a plan change lock could not be released; it expires on its own'));
    }
  }

  /** The user's plan read without a lock (the change lock serialises the user's changes); 409 when there is no paid plan. */
  async #readPaidPlan(em: EntityManager, userId: string) {
    const read = em.fork();
    const subscription = await this.#deps.billing.subscriptionOf(read, userId);
    return { subscription, ...(await this.#paidPlan(read, subscription, userId)) };
  }

  /**
   * Makes billing's row say what Stripe says of a subscription: tier and interval from
   * the price, status, period end, grace when past due, and whether a schedule still
   * waits. A late event of a subscription the user no longer has changes nothing.
   * False, changing nothing, when the subscription belongs to another customer than the user's.
   */
  async applySubscription(tx: EntityManager, userId: string, view: SubscriptionView): Promise<boolean> {
    const subscription = await this.#deps.billing.lockSubscription(tx, userId);
    const link = await tx.findOne(PaymentCustomer, { userId }, { refresh: true });
    if (!link) return true;
    if (view.customer !== link.stripeCustomerId) return false;
    const status = STATUS_OF_STRIPE[view.status];
    if (!status) return true;
    if (link.stripeSubscriptionId && link.stripeSubscriptionId !== view.id && status === 'canceled') return true;
    const now = this.#deps.clock.now();
    const item = view.items.data[0]!;
    const price = this.#deps.prices.byStripePrice(item.price.id);
    if (price) {
      subscription.tier = price.tier;
      subscription.billingInterval = price.interval;
      link.priceId = price.id;
    } else {
      this.#deps.logger.warn({ userId, stripePrice: item.price.id }, 'a Stripe price missing from STRIPE_PRICES: the tier is left as it was');
    }
    link.stripeSubscriptionId = view.id;
    subscription.status = status;
    subscription.currentPeriodEnd = new Date(item.current_period_end * 1000);
    subscription.graceEndsAt = status === 'past_due' ? (subscription.graceEndsAt ?? new Date(now.getTime() + this.#deps.settings.graceDays * DAY_MS)) : null;
    // The schedule is over once Stripe moved to its price, released it, or the plan ended.
    if (!view.schedule || status === 'canceled' || (link.scheduledPriceId !== null && link.scheduledPriceId === price?.id)) {
      this.#clearSchedule(subscription, link);
    }
    if (status === 'canceled') await this.#deps.dueActions.cancelPending(tx, userId, 'renewal_reminder');
    subscription.updatedAt = now;
    link.updatedAt = now;
    await tx.flush();
    await this.#deps.billing.subscriptionChanged(tx, subscription);
    return true;
  }

  /**
   * The AI minutes a paid invoice brings, granted once per invoice (`allowance:<invoice
   * id>`): a new period brings the tier's monthly minutes (twelve months' for a yearly
   * price); an upgrade's proration invoice brings the difference between the two plans.
   */
  async grantInvoiceAllowance(tx: EntityManager, userId: string, invoice: InvoiceView): Promise<void> {
    if (invoice.status !== 'paid') return;
    const minutes = this.allowanceOf(invoice);
    if (minutes > 0) await this.#deps.billing.grantCredits(tx, userId, { reference: `allowance:${invoice.id}`, minutes });
  }

  allowanceOf(invoice: InvoiceView): number {
    const charged: PlanPrice[] = [];
    const credited: PlanPrice[] = [];
    for (const line of invoice.lines?.data ?? []) {
      const stripePrice = line.pricing?.price_details?.price;
      const price = stripePrice ? this.#deps.prices.byStripePrice(stripePrice) : undefined;
      if (price) (line.amount < 0 ? credited : charged).push(price);
    }
    const most = (prices: PlanPrice[]) => Math.max(0, ...prices.map((price) => periodMinutes(price.tier, price.interval)));
    switch (invoice.billing_reason) {
      case 'subscription_create':
      case 'subscription_cycle':
        return most(charged);
      case 'subscription_update':
        return Math.max(0, most(charged) - most(credited));
      case null:
      case undefined:
      default:
        return 0;
    }
  }

  /** The user of a Stripe customer, if it is one of ours. */
  async userOfCustomer(em: EntityManager, customerId: string): Promise<string | undefined> {
    return (await em.findOne(PaymentCustomer, { stripeCustomerId: customerId }))?.userId;
  }

  /** Links a customer that Checkout reports for a user who has none yet. */
  async linkCustomer(em: EntityManager, userId: string, customerId: string): Promise<void> {
    await em.execute(
      `insert into payment_customers (user_id, stripe_customer_id, updated_at) values (?, ?, ?) on conflict do nothing`,
      [userId, customerId, this.#deps.clock.now()],
    );
  }

  /** On account deletion: a live subscription is canceled at Stripe first, then the rows go. */
  async closeAccount(em: EntityManager, userId: string): Promise<void> {
    // Locked first: a webhook for this user then waits, and finds the user gone.
    const subscription = await this.#deps.billing.lockExistingSubscription(em, userId);
    const link = await em.findOne(PaymentCustomer, { userId });
    if (link?.stripeSubscriptionId && subscription) {
      if (subscription.status === 'active' || subscription.status === 'past_due') {
        await this.gateway().cancelSubscription(link.stripeSubscriptionId);
      }
    }
    // a second subscription the webhook has not caught yet bills on too: every live one goes
    if (link && this.#deps.gateway) {
      for (const other of await this.#deps.gateway.liveSubscriptions(link.stripeCustomerId)) await this.#deps.gateway.cancelSubscription(other.id);
    }
    await em.execute(`delete from payment_customers where user_id = ?`, [userId]);
    await em.execute(`delete from cancellation_feedback where user_id = ?`, [userId]);
    await this.#deps.dueActions.deleteAllOf(em, userId);
  }

  /** The reminder a subscriber asked for, if the plan still renews; undefined when it no longer applies. */
  async reminderFor(em: EntityManager, userId: string): Promise<{ tier: TierName; renewsAt: Date } | undefined> {
    const subscription = await this.#deps.billing.subscriptionOf(em, userId);
    const now = this.#deps.clock.now();
    if (!effectivePlan(subscription, now).paid || !subscription.currentPeriodEnd || subscription.currentPeriodEnd <= now) return undefined;
    return { tier: subscription.tier, renewsAt: subscription.currentPeriodEnd };
  }

  statusFor(em: EntityManager, user: UserRow): Promise<BillingStatus> {
    return this.#deps.billing.statusFor(em, user);
  }

  /** The user's live paid plan and its Stripe subscription; 409 when there is none to change. */
  async #paidPlan(
    em: EntityManager,
    subscription: SubscriptionRow,
    userId: string,
  ): Promise<{ link: PaymentCustomerRow; current: { tier: TierName; interval: BillingInterval } }> {
    const link = await em.findOne(PaymentCustomer, { userId }, { refresh: true });
    if (!link?.stripeSubscriptionId || !effectivePlan(subscription, this.#deps.clock.now()).paid) throw Conflict('payments.no_subscription');
    const interval: BillingInterval = subscription.billingInterval === 'year' ? 'year' : 'month';
    return { link, current: { tier: subscription.tier, interval } };
  }

  #clearSchedule(subscription: SubscriptionRow, link: PaymentCustomerRow): void {
    subscription.scheduledTier = null;
    subscription.scheduledBillingInterval = null;
    subscription.scheduledAt = null;
    link.stripeScheduleId = null;
    link.scheduledPriceId = null;
  }

  /** The user's Stripe customer, made on first checkout (idempotent per user at Stripe). */
  async #customerOf(em: EntityManager, user: UserRow): Promise<PaymentCustomerRow> {
    const existing = await em.findOne(PaymentCustomer, { userId: user.id }, { refresh: true });
    if (existing) return existing;
    const customerId = await this.gateway().createCustomer({ userId: user.id, email: user.email, name: user.name });
    await this.linkCustomer(em, user.id, customerId);
    return em.findOneOrFail(PaymentCustomer, { userId: user.id }, { refresh: true });
  }
}

/** Minutes one paid period brings: the tier's monthly allowance, twelve of them for a year paid up front. */
function periodMinutes(tier: TierName, interval: BillingInterval): number {
  return TIERS[tier].monthlyAiMinutes * (interval === 'year' ? 12 : 1);
}

export function localeOf(user: Pick<UserRow, 'locale'>): Locale {
  const locale = String(user.locale);
  return locale === 'pt' || locale === 'es' ? locale : 'en';
}
