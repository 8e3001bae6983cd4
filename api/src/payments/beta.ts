import type { EntityManager } from '@mikro-orm/postgresql';
import { User, type UserRow } from '../accounts/entities.ts';
import type { BillingService } from '../billing/billing-service.ts';
import type { Clock } from '../shared/clock.ts';
import { Invalid, NotFound } from '../shared/errors.ts';
import type { DueActions } from './due-actions.ts';

const DAY_MS = 86_400_000;

export interface BetaGrant {
  /** Who: the user's id or address (one of them). */
  userId?: string | undefined;
  email?: string | undefined;
  /** AI minutes granted now and again at each renewal. */
  credits: number;
  /** When the beta credits renew first; every BETA_RENEWAL_DAYS after that. */
  renewalDate: Date;
}

/**
 * The beta program: an admin makes a user a beta tester with a number of AI minutes that
 * renew on a date. Beta credits are ledger grants (`beta:<period start>`); the renewal is
 * a due action, so it happens even if no api was running at that moment.
 */
export class BetaProgram {
  readonly #deps: { billing: BillingService; dueActions: DueActions; clock: Clock; renewalDays: number };

  constructor(deps: { billing: BillingService; dueActions: DueActions; clock: Clock; renewalDays: number }) {
    this.#deps = deps;
  }

  /** Grants (or re-grants, replacing the renewal) beta access; returns the user. */
  async grant(em: EntityManager, grant: BetaGrant): Promise<UserRow> {
    const now = this.#deps.clock.now();
    if (grant.renewalDate <= now) throw Invalid('payments.renewal_date_past');
    const user = await em.findOne(User, grant.userId ? { id: grant.userId } : { email: (grant.email ?? '').toLowerCase() });
    if (!user) throw NotFound('payments.user_not_found');
    await em.transactional(async (tx) => {
      const subscription = await this.#deps.billing.lockSubscription(tx, user.id);
      subscription.isBeta = true;
      subscription.betaCreditsTotal = grant.credits;
      subscription.betaPeriodStart = now;
      subscription.betaRenewalDate = grant.renewalDate;
      subscription.updatedAt = now;
      await tx.flush();
      await this.#deps.billing.grantCredits(tx, user.id, { reference: `beta:${now.toISOString()}`, minutes: grant.credits });
      await this.#deps.dueActions.cancelPending(tx, user.id, 'beta_renewal');
      await this.#deps.dueActions.schedule(tx, user.id, 'beta_renewal', grant.renewalDate);
    });
    return user;
  }

  /**
   * The renewal due at `dueAt`: the beta credits again, a new period, the next renewal.
   * A renewal an admin replaced since (another date) does nothing.
   */
  async renew(tx: EntityManager, userId: string, dueAt: Date): Promise<void> {
    const subscription = await this.#deps.billing.lockSubscription(tx, userId);
    if (!subscription.isBeta || subscription.betaCreditsTotal == null || subscription.betaRenewalDate?.getTime() !== dueAt.getTime()) return;
    await this.#deps.billing.grantCredits(tx, userId, { reference: `beta:${dueAt.toISOString()}`, minutes: subscription.betaCreditsTotal });
    const next = new Date(dueAt.getTime() + this.#deps.renewalDays * DAY_MS);
    subscription.betaPeriodStart = dueAt;
    subscription.betaRenewalDate = next;
    subscription.updatedAt = this.#deps.clock.now();
    await tx.flush();
    await this.#deps.dueActions.schedule(tx, userId, 'beta_renewal', next);
  }
}
