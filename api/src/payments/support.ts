import type { EntityManager } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Mailer } from '../accounts/mailer.ts';
import type { UserRow } from '../accounts/entities.ts';
import { effectivePlan, type BillingService } from '../billing/billing-service.ts';
import { translate, type Locale, type MessageKey, type MessageParams } from '../i18n/index.ts';
import type { Clock } from '../shared/clock.ts';
import { Forbidden, RateLimited } from '../shared/errors.ts';
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
  readonly #limiter: RateLimiterRedis;

  constructor(deps: SupportDeps) {
    this.#deps = deps;
    this.#limiter = new RateLimiterRedis({ storeClient: deps.redis, keyPrefix: 'rate:support-request', points: deps.limit.points, duration: deps.limit.seconds });
  }

  async send(em: EntityManager, user: UserRow, request: { reason: string; message: string }): Promise<void> {
    const subscription = await this.#deps.billing.subscriptionOf(em, user.id);
    const plan = effectivePlan(subscription, this.#deps.clock.now());
    if (!plan.paid && !subscription.isBeta) throw Forbidden('payments.support_forbidden');
    try {
      await this.#limiter.consume(user.id);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) throw RateLimited(rejection.msBeforeNext / 1000);
      throw rejection;
    }
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
  }
}
