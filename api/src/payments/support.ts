import type { EntityManager } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Mailer } from '../accounts/mailer.ts';
import type { UserRow } from '../accounts/entities.ts';
import { effectivePlan, type BillingService } from '../billing/billing-service.ts';
import { translate, type Locale, type MessageKey, type MessageParams } from '../i18n/index.ts';
import type { Clock } from '../shared/clock.ts';
import { Forbidden } from '../shared/errors.ts';
import { RateLimiter, type RateLimitFields } from '../shared/rate-limiter.ts';
import { localeOf } from './service.ts';

/** One mail written from the payments catalog in the given language. */
export function paymentMail(locale: Locale, to: string, template: 'support_team' | 'support_confirmation' | 'renewal_reminder', params: MessageParams) {
  return {
    to,
    template,
    subject: translate(locale, `payments.mail.${template}.subject` as MessageKey, params),
    text: translate(locale, `payments.mail.${template}.body` as MessageKey, params),
  };
}

interface SupportDeps {
  billing: BillingService;
  mailer: Mailer;
  clock: Clock;
  logger: Logger;
  redis: Redis;
  supportEmail: string;
  limit: { points: number; seconds: number };
}

/**
 * Support requests of paid subscribers and beta testers: a priority mail to the team
 * (SUPPORT_EMAIL) with the user's plan and credits, and a confirmation in the user's
 * language. Limited per user (SUPPORT_REQUESTS_PER_WINDOW per SUPPORT_REQUEST_WINDOW_SECONDS).
 */
export class SupportRequests {
  readonly #deps: SupportDeps;
  readonly #limiter: RateLimiter;

  constructor(deps: SupportDeps) {
    this.#deps = deps;
    this.#limiter = new RateLimiter(deps.redis, { name: 'support-request', ...deps.limit });
  }

  /** Sends the request; answers what is left of the user's allowance (the RateLimit fields), 429 past it. */
  async send(em: EntityManager, user: UserRow, request: { reason: string; message: string }): Promise<RateLimitFields> {
    const subscription = await this.#deps.billing.subscriptionOf(em, user.id);
    const plan = effectivePlan(subscription, this.#deps.clock.now());
    if (!plan.paid && !subscription.isBeta) throw Forbidden('payments.support_forbidden');
    const allowance = await this.#limiter.take(user.id);
    const credits = await this.#deps.billing.creditsOf(em, user.id);
    // The team reads English; the user's own words travel as written.
    await this.#deps.mailer.send(
      paymentMail('en', this.#deps.supportEmail, 'support_team', {
        username: user.username,
        name: user.name,
        email: user.email,
        user_id: user.id,
        tier: plan.tier,
        status: plan.status,
        paid: plan.paid ? 'yes' : 'no',
        beta: subscription.isBeta ? 'yes' : 'no',
        balance: credits.balance,
        reserved: credits.reserved,
        reason: request.reason,
        message: request.message,
      }),
    );
    const confirmation = paymentMail(localeOf(user), user.email, 'support_confirmation', { name: user.name, reason: request.reason, message: request.message });
    this.#deps.mailer.send(confirmation).catch((error: unknown) => this.#deps.logger.warn({ err: error, to: user.email }, 'support confirmation not delivered'));
    return allowance;
  }
}
