import { createHash, randomUUID } from 'node:crypto';
import { LockMode, type QueryResult } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError, Conflict, InsufficientCredits } from '../shared/errors.ts';
import type { Clock } from '../shared/clock.ts';
import type { UserRow } from '../accounts/entities.ts';
import { DeletedAccount } from '../accounts/entities.ts';
import { query, statement, type Database } from '../db/statements.ts';
import { Subscription, type SubscriptionRow, type SubscriptionStatus } from './entities.ts';
import { TIERS, TRIAL, roundMinutes, type TierLimits, type TierName } from './tiers.ts';

/** Counts a user's projects; the projects feature hands one to the composition root. */
export type ProjectCounter = (database: Database, userId: string) => Promise<number>;

/** A change of a user's plan or AI-minute ledger, as its listener (webhooks) hears of it. */
export type BillingChange =
  | { kind: 'subscription'; subscription: Pick<SubscriptionRow, 'tier' | 'status' | 'billingInterval' | 'currentPeriodEnd' | 'trialEndsAt'> }
  | { kind: 'credits'; entry: 'grant' | 'reserve' | 'deduct' | 'release'; minutes: number; credits: Credits };

/** Told of every billing change inside the transaction that makes it (so what it records commits with the change). */
export type BillingChangeListener = (em: EntityManager, userId: string, change: BillingChange) => Promise<void>;

/** The billing status object of the spec, as sent. */
export interface BillingStatus {
  tier: TierName;
  subscription_status: SubscriptionStatus;
  trial_ends_at: string | null;
  credits: { ai_minutes: { balance: number; reserved: number } };
  has_active_plan: boolean;
  trial_used: boolean;
  billing_interval: string;
  discount_used: boolean;
  is_beta: boolean;
  beta_credits_used: number | null;
  beta_credits_total: number | null;
  beta_renewal_date: string | null;
  /** A downgrade waiting for the end of the billing period (schedule-downgrade), or null. */
  scheduled_change: { tier: TierName; billing_interval: string; effective_at: string } | null;
  storage_used_bytes: number;
  storage_quota_bytes: number;
  project_count: number;
  /** -1 means no limit. */
  max_projects: number;
  can_use_ai_director: boolean;
  can_watermark_free: boolean;
  can_access_support: boolean;
}

/** Times come back as epoch milliseconds (text or number alike, in or out of a transaction). */
const msOf = (value: string | number | null): Date | null => (value === null ? null : new Date(Number(value)));
const epochMs = (column: string) => `(extract(epoch from ${column}) * 1000)::bigint`;

interface PlanRecord {
  tier: TierName;
  status: SubscriptionStatus;
  trial_ends_at_ms: string | number | null;
  grace_ends_at_ms: string | number | null;
}

/** What the effective plan needs of a subscription, as a plain row (the hot paths: project creation, exports). */
const PLAN = statement<PlanRecord>('billing.plan', `select tier, status, ${epochMs('trial_ends_at')} as trial_ends_at_ms, ${epochMs('grace_ends_at')} as grace_ends_at_ms from subscriptions where user_id = ?`);

interface StatusRecord extends PlanRecord {
  billing_interval: string;
  trial_used: boolean;
  discount_used: boolean;
  is_beta: boolean;
  beta_credits_total: string | number | null;
  beta_renewal_date_ms: string | number | null;
  scheduled_tier: TierName | null;
  scheduled_billing_interval: string | null;
  scheduled_at_ms: string | number | null;
  storage_used_bytes: string | number;
  balance: string | number;
  reserved: string | number;
  beta_used: string | number;
  tombstone_trial_used: boolean | null;
}

/**
 * The whole billing status but the project count (the projects feature's) in one round
 * trip: check-auth and login bundle it, so it runs on most requests of a front end.
 * Balance and reserved are the ledger's sums as creditsOf reads them; beta use is the minutes
 * deducted since the beta period started, up to the beta credits (spent before other minutes).
 */
const STATUS = statement<StatusRecord>(
  'billing.status',
  `select s.tier, s.status, ${epochMs('s.trial_ends_at')} as trial_ends_at_ms, ${epochMs('s.grace_ends_at')} as grace_ends_at_ms,
     s.billing_interval, s.trial_used, s.discount_used, s.is_beta, s.beta_credits_total, ${epochMs('s.beta_renewal_date')} as beta_renewal_date_ms,
     s.scheduled_tier, s.scheduled_billing_interval, ${epochMs('s.scheduled_at')} as scheduled_at_ms,
     u.storage_used_bytes,
     coalesce((select sum(case e.kind when 'grant' then e.minutes when 'deduct' then -e.minutes else 0 end) from credit_entries e where e.user_id = s.user_id), 0) as balance,
     coalesce((select sum(e.minutes) from credit_entries e where e.user_id = s.user_id and e.kind = 'reserve' and not exists (
       select 1 from credit_entries x where x.user_id = e.user_id and x.reference = e.reference and x.kind in ('deduct', 'release'))), 0) as reserved,
     case when s.is_beta and s.beta_credits_total is not null then coalesce((select sum(e.minutes) from credit_entries e
       where e.user_id = s.user_id and e.kind = 'deduct' and e.created_at >= coalesce(s.beta_period_start, 'epoch'::timestamptz)), 0) else 0 end as beta_used,
     (select d.trial_used from deleted_accounts d where d.email_hash = ?) as tombstone_trial_used
   from subscriptions s join users u on u.id = s.user_id where s.user_id = ?`,
);

/** The statements of the hot paths, for bench/api's baseline to send exactly the same SQL. */
export const billingStatements = { plan: PLAN, status: STATUS } as const;

/** What a user's plan amounts to at a given moment. */
export interface EffectivePlan {
  tier: TierName;
  status: SubscriptionStatus;
  limits: Readonly<TierLimits>;
  /** Paying (active or past due on a paid tier). */
  paid: boolean;
  trialing: boolean;
}

export interface Credits {
  /** Minutes granted less minutes deducted. */
  balance: number;
  /** Minutes held by reservations not yet settled. */
  reserved: number;
  /** What a new reservation may take: balance less reserved. */
  available: number;
}

const PAID_STATUSES: readonly SubscriptionStatus[] = ['active', 'past_due'];

/**
 * A stored subscription read at `now`: a trial past its end is Free again, and a
 * canceled or absent plan is Free, without anything having to run at that moment.
 */
export function effectivePlan(subscription: Pick<SubscriptionRow, 'tier' | 'status' | 'trialEndsAt'> & { graceEndsAt?: Date | null | undefined }, now: Date): EffectivePlan {
  const trialing = subscription.status === 'trialing' && !!subscription.trialEndsAt && subscription.trialEndsAt > now;
  // A failed renewal keeps the tier for the grace period only.
  const graceOver = subscription.status === 'past_due' && !!subscription.graceEndsAt && subscription.graceEndsAt <= now;
  const paid = PAID_STATUSES.includes(subscription.status) && subscription.tier !== 'Free' && !graceOver;
  const tier: TierName = trialing || paid ? subscription.tier : 'Free';
  const status: SubscriptionStatus = subscription.status === 'trialing' && !trialing ? 'none' : subscription.status;
  return { tier, status, limits: TIERS[tier], paid, trialing };
}

/** The tombstone key of an address: it must match however the address was capitalised. */
export function emailHash(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

interface CreditChange {
  /** The job, analysis run or grant the change belongs to; unique per kind and user. */
  reference: string;
  minutes: number;
}

/**
 * The billing core: plans, the trial and the AI-minute ledger. Every method takes the
 * caller's EntityManager so it joins the caller's transaction.
 */
export class BillingService {
  readonly #clock: Clock;
  #countProjects: ProjectCounter;
  #onChange: BillingChangeListener | undefined;

  constructor(deps: { clock: Clock; countProjects?: ProjectCounter }) {
    this.#clock = deps.clock;
    this.#countProjects = deps.countProjects ?? (async () => 0);
  }

  /** Until the projects feature exists the count is 0; it installs its counter here. */
  useProjectCounter(counter: ProjectCounter): void {
    this.#countProjects = counter;
  }

  /** The webhooks install theirs here: it hears of plan and ledger changes in their transactions. */
  useChangeListener(listener: BillingChangeListener): void {
    this.#onChange = listener;
  }

  /** Tells the listener that the subscription row changed (billing's own methods and payments' Stripe sync call it). */
  async subscriptionChanged(em: EntityManager, subscription: SubscriptionRow): Promise<void> {
    await this.#onChange?.(em, subscription.user.id, { kind: 'subscription', subscription });
  }

  /** Every account starts on Free; called in the transaction that creates the user. */
  openSubscription(em: EntityManager, user: UserRow): void {
    em.create(Subscription, { user, updatedAt: this.#clock.now() });
  }

  async subscriptionOf(em: EntityManager, userId: string): Promise<SubscriptionRow> {
    return (await em.findOne(Subscription, { user: userId }, { refresh: true })) ?? this.#openMissingSubscription(em, userId);
  }

  async planOf(em: EntityManager, userId: string): Promise<EffectivePlan> {
    const [row] = await query(em, PLAN, [userId]);
    if (!row) return effectivePlan(await this.subscriptionOf(em, userId), this.#clock.now());
    return effectivePlan({ tier: row.tier, status: row.status, trialEndsAt: msOf(row.trial_ends_at_ms), graceEndsAt: msOf(row.grace_ends_at_ms) }, this.#clock.now());
  }

  async tierOf(em: EntityManager, userId: string): Promise<TierName> {
    return (await this.planOf(em, userId)).tier;
  }

  async limitsOf(em: EntityManager, userId: string): Promise<Readonly<TierLimits>> {
    return (await this.planOf(em, userId)).limits;
  }

  /** Statements only: a request that did no ORM work passes the ORM itself, and forks no EntityManager for it. */
  async statusFor(database: Database, user: Pick<UserRow, 'id' | 'email'>): Promise<BillingStatus> {
    const [[row], projectCount] = await Promise.all([query(database, STATUS, [emailHash(user.email), user.id]), this.#countProjects(database, user.id)]);
    // a user made without a subscription (seeded by SQL) gets one, then is read again
    if (!row) {
      const em = 'getConnection' in database ? database : database.em.fork();
      return this.#openMissingSubscription(em, user.id).then(() => this.statusFor(database, user));
    }
    const plan = effectivePlan({ tier: row.tier, status: row.status, trialEndsAt: msOf(row.trial_ends_at_ms), graceEndsAt: msOf(row.grace_ends_at_ms) }, this.#clock.now());
    const betaTotal = row.beta_credits_total === null ? null : Number(row.beta_credits_total);
    const scheduledAt = msOf(row.scheduled_at_ms);
    return {
      tier: plan.tier,
      subscription_status: plan.status,
      trial_ends_at: msOf(row.trial_ends_at_ms)?.toISOString() ?? null,
      credits: { ai_minutes: { balance: Number(row.balance), reserved: Number(row.reserved) } },
      has_active_plan: plan.paid || plan.trialing,
      trial_used: row.trial_used || (row.tombstone_trial_used ?? false),
      billing_interval: row.billing_interval,
      discount_used: row.discount_used,
      is_beta: row.is_beta,
      beta_credits_used: row.is_beta && betaTotal !== null ? Math.min(Number(row.beta_used), betaTotal) : null,
      beta_credits_total: betaTotal,
      beta_renewal_date: msOf(row.beta_renewal_date_ms)?.toISOString() ?? null,
      scheduled_change:
        row.scheduled_tier && scheduledAt
          ? { tier: row.scheduled_tier, billing_interval: row.scheduled_billing_interval ?? row.billing_interval, effective_at: scheduledAt.toISOString() }
          : null,
      storage_used_bytes: Number(row.storage_used_bytes),
      storage_quota_bytes: plan.limits.storageQuotaBytes,
      project_count: projectCount,
      max_projects: Number.isFinite(plan.limits.maxProjects) ? plan.limits.maxProjects : -1,
      can_use_ai_director: plan.limits.canUseAiDirector,
      can_watermark_free: plan.limits.canWatermarkFree,
      can_access_support: plan.paid || row.is_beta,
    };
  }

  /** Used by this account, or by a deleted account with the same address. */
  async trialUsed(em: EntityManager, user: Pick<UserRow, 'id' | 'email'>, subscription?: SubscriptionRow): Promise<boolean> {
    const own = subscription ?? (await this.subscriptionOf(em, user.id));
    if (own.trialUsed) return true;
    const tombstone = await em.findOne(DeletedAccount, { emailHash: emailHash(user.email) });
    return tombstone?.trialUsed ?? false;
  }

  /**
   * Starts the 7-day Creator trial with its 30 AI minutes. 409 when already used (here
   * or by a deleted account with this address) or while a paid plan runs.
   */
  async grantTrial(em: EntityManager, user: UserRow): Promise<void> {
    await em.transactional(async (tx) => {
      const subscription = await this.#lockSubscription(tx, user.id);
      if (await this.trialUsed(tx, user, subscription)) throw Conflict('billing.trial_used');
      const now = this.#clock.now();
      if (effectivePlan(subscription, now).paid) throw Conflict('billing.plan_active');
      subscription.tier = TRIAL.tier;
      subscription.status = 'trialing';
      subscription.trialUsed = true;
      subscription.trialEndsAt = new Date(now.getTime() + TRIAL.days * 86_400_000);
      subscription.updatedAt = now;
      await tx.flush();
      await this.subscriptionChanged(tx, subscription);
      await this.grantCredits(tx, user.id, { reference: 'trial', minutes: TRIAL.aiMinutes });
    });
  }

  /** Records a plan change (payments, admin tools, tests): the tier paid for and the subscription status. */
  async setPlan(
    em: EntityManager,
    userId: string,
    plan: { tier: TierName; status: SubscriptionStatus; billingInterval?: string; currentPeriodEnd?: Date | null },
  ): Promise<void> {
    await em.transactional(async (tx) => {
      const subscription = await this.#lockSubscription(tx, userId);
      subscription.tier = plan.tier;
      subscription.status = plan.status;
      if (plan.billingInterval !== undefined) subscription.billingInterval = plan.billingInterval;
      if (plan.currentPeriodEnd !== undefined) subscription.currentPeriodEnd = plan.currentPeriodEnd;
      subscription.updatedAt = this.#clock.now();
      await tx.flush();
      await this.subscriptionChanged(tx, subscription);
    });
  }

  /** The trial where it is still available (verify-email, identity-provider signup); false otherwise. */
  async grantTrialIfAvailable(em: EntityManager, user: UserRow): Promise<boolean> {
    if (await this.trialUsed(em, user)) return false;
    try {
      await this.grantTrial(em, user);
      return true;
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'conflict') return false;
      throw error;
    }
  }

  async creditsOf(em: EntityManager, userId: string): Promise<Credits> {
    const [row] = await em.execute<{ balance: string; reserved: string }[]>(
      `select
         coalesce(sum(case kind when 'grant' then minutes when 'deduct' then -minutes else 0 end), 0) as balance,
         coalesce(sum(minutes) filter (where kind = 'reserve' and not exists (
           select 1 from credit_entries s
           where s.user_id = e.user_id and s.reference = e.reference and s.kind in ('deduct', 'release'))), 0) as reserved
       from credit_entries e where e.user_id = ?`,
      [userId],
    );
    const balance = Number(row?.balance ?? 0);
    const reserved = Number(row?.reserved ?? 0);
    return { balance, reserved, available: Math.round((balance - reserved) * 10) / 10 };
  }

  /** Adds minutes (trial, monthly allowance, admin grant); a second grant with the same reference is a no-op. */
  async grantCredits(em: EntityManager, userId: string, change: CreditChange): Promise<boolean> {
    return this.#insertEntry(em, userId, 'grant', change.reference, roundMinutes(change.minutes));
  }

  /**
   * Holds minutes for a job before it is queued: 402 when the available minutes do not
   * cover it. Reserving the same reference again returns without holding more.
   */
  async reserveCredits(em: EntityManager, userId: string, change: CreditChange): Promise<boolean> {
    const minutes = roundMinutes(change.minutes);
    return em.transactional(async (tx) => {
      await this.#lockSubscription(tx, userId);
      if (await this.#hasEntry(tx, userId, 'reserve', change.reference)) return false;
      const { balance, reserved, available } = await this.creditsOf(tx, userId);
      if (available < minutes) {
        // The balance the billing status shows; what running analyses hold is said apart.
        const key = reserved > 0 ? 'billing.insufficient_credits_reserved' : 'billing.insufficient_credits';
        throw InsufficientCredits(key, { params: { needed: minutes, balance, reserved, available: Math.max(0, available) } });
      }
      return this.#insertEntry(tx, userId, 'reserve', change.reference, minutes);
    });
  }

  /**
   * Charges what a job actually used and settles its reservation. Settling happens once
   * per reference: after a deduct or a release, both are no-ops (false).
   */
  async deductCredits(em: EntityManager, userId: string, change: CreditChange): Promise<boolean> {
    return this.#settle(em, userId, 'deduct', change.reference, () => Promise.resolve(roundMinutes(change.minutes)));
  }

  /** Gives a failed job's reservation back; a no-op (false) once the reference is settled or was never reserved. */
  async releaseCredits(em: EntityManager, userId: string, change: Pick<CreditChange, 'reference'>): Promise<boolean> {
    return this.#settle(em, userId, 'release', change.reference, async (tx) => {
      const [row] = await tx.execute<{ minutes: string }[]>(
        `select minutes from credit_entries where user_id = ? and kind = 'reserve' and reference = ?`,
        [userId, change.reference],
      );
      return row ? Number(row.minutes) : undefined;
    });
  }

  async #settle(
    em: EntityManager,
    userId: string,
    kind: 'deduct' | 'release',
    reference: string,
    amount: (tx: EntityManager) => Promise<number | undefined>,
  ): Promise<boolean> {
    return em.transactional(async (tx) => {
      await this.#lockSubscription(tx, userId);
      const [settled] = await tx.execute<{ n: string }[]>(
        `select count(*) as n from credit_entries where user_id = ? and reference = ? and kind in ('deduct', 'release')`,
        [userId, reference],
      );
      if (Number(settled?.n ?? 0) > 0) return false;
      const minutes = await amount(tx);
      if (minutes === undefined) return false;
      return this.#insertEntry(tx, userId, kind, reference, minutes);
    });
  }

  /**
   * Serialises changes of one user's plan and ledger (reservations, payments, webhooks):
   * call inside a transaction; the row stays locked until it ends.
   */
  lockSubscription(em: EntityManager, userId: string): Promise<SubscriptionRow> {
    return this.#lockSubscription(em, userId);
  }

  /** The lock, without creating a missing row: null when the user is gone (deleted meanwhile). */
  async lockExistingSubscription(em: EntityManager, userId: string): Promise<SubscriptionRow | null> {
    return em.findOne(Subscription, { user: userId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  }

  /** Serialises ledger changes of one user, so two reservations cannot both spend the same minutes. */
  async #lockSubscription(em: EntityManager, userId: string): Promise<SubscriptionRow> {
    const options = { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } as const;
    const found = await em.findOne(Subscription, { user: userId }, options);
    if (found) return found;
    await this.#openMissingSubscription(em, userId);
    return em.findOneOrFail(Subscription, { user: userId }, options);
  }

  /** A user made without one (seeded by SQL, say) is on Free; the row appears on first use. */
  async #openMissingSubscription(em: EntityManager, userId: string): Promise<SubscriptionRow> {
    await em.execute(`insert into subscriptions (user_id, updated_at) values (?, ?) on conflict (user_id) do nothing`, [userId, this.#clock.now()]);
    return em.findOneOrFail(Subscription, { user: userId }, { refresh: true });
  }

  async #hasEntry(em: EntityManager, userId: string, kind: string, reference: string): Promise<boolean> {
    const rows = await em.execute(`select 1 from credit_entries where user_id = ? and kind = ? and reference = ?`, [userId, kind, reference]);
    return rows.length > 0;
  }

  async #insertEntry(em: EntityManager, userId: string, kind: 'grant' | 'reserve' | 'deduct' | 'release', reference: string, minutes: number): Promise<boolean> {
    const result = await em.execute<QueryResult>(
      `insert into credit_entries (id, user_id, kind, minutes, reference, created_at) values (?, ?, ?, ?, ?, ?)
       on conflict (user_id, kind, reference) do nothing`,
      [randomUUID(), userId, kind, minutes, reference, this.#clock.now()],
      'run',
    );
    if (result.affectedRows === 0) return false;
    if (this.#onChange) await this.#onChange(em, userId, { kind: 'credits', entry: kind, minutes, credits: await this.creditsOf(em, userId) });
    return true;
  }

}
