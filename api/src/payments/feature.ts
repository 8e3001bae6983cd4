import type { BillingService } from '../billing/billing-service.ts';
import type { Clock } from '../shared/clock.ts';
import type { Config } from '../config.ts';
import type { Logger } from 'pino';
import type { Mailer } from '../accounts/mailer.ts';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import { Counter, type Registry } from 'prom-client';
import type { Payments } from './payments.ts';
import { User } from '../accounts/entities.ts';
import { BetaProgram } from './beta.ts';
import { DueActions, startDueActionSweep, type DueActionHandler } from './due-actions.ts';
import type { DueActionKind } from './entities.ts';
import { PriceTable } from './price-table.ts';
import { registerPaymentRoutes } from './routes.ts';
import { localeOf, PlanChanges } from './service.ts';
import { redisChangeLock } from './change-lock.ts';
import { StripeGateway } from './stripe-gateway.ts';
import { paymentMail, SupportRequests } from './support.ts';
import { StripeWebhooks } from './webhooks.ts';
import type { AppRouter } from '../accounts/guards.ts';

type PaymentServices = { config: Config; billing: BillingService; clock: Clock; logger: Logger; mailer: Mailer; redis: Redis; orm: MikroORM; baseUrl: string; metrics: Registry };

export function createPayments(services: PaymentServices): Payments {
  const { config, billing, clock, logger, mailer, redis } = services;
  const prices = new PriceTable(config.STRIPE_PRICES);
  const gateway = config.STRIPE_SECRET_KEY
    ? new StripeGateway({
        secretKey: config.STRIPE_SECRET_KEY,
        webhookSecret: config.STRIPE_WEBHOOK_SECRET,
        apiBase: config.STRIPE_API_BASE,
        timeoutMs: config.STRIPE_TIMEOUT_MS,
        maxNetworkRetries: config.STRIPE_MAX_NETWORK_RETRIES,
      })
    : undefined;
  const dueActions = new DueActions(clock);
  const plans = new PlanChanges({
    billing,
    gateway,
    prices,
    dueActions,
    clock,
    logger,
    settings: { graceDays: config.PAYMENT_GRACE_DAYS, reminderDays: config.RENEWAL_REMINDER_DAYS, retentionCoupon: config.STRIPE_RETENTION_COUPON },
    baseUrl: () => services.baseUrl,
    // held for at most every Stripe call of a change timing out, each with its retries, and a margin
    changeLock: redisChangeLock(redis, 5 * config.STRIPE_TIMEOUT_MS * (config.STRIPE_MAX_NETWORK_RETRIES + 1) + 5000),
  });
  return {
    plans,
    webhooks: new StripeWebhooks({
      plans,
      clock,
      logger,
      duplicates: new Counter({ name: 'cutroom_duplicate_subscriptions_total', help: 'Second live subscriptions of one user cancelled and refunded (two Checkout sessions paid); alert on any increase.', registers: [services.metrics] }),
    }),
    support: new SupportRequests({
      billing,
      mailer,
      clock,
      logger,
      redis,
      supportEmail: config.SUPPORT_EMAIL,
      limit: { points: config.SUPPORT_REQUESTS_PER_WINDOW, seconds: config.SUPPORT_REQUEST_WINDOW_SECONDS },
    }),
    beta: new BetaProgram({ billing, dueActions, clock, renewalDays: config.BETA_RENEWAL_DAYS }),
    dueActions,
    prices,
  };
}

/** The payments routes. */
export function registerPayments(router: AppRouter, payments: Payments): void {
  registerPaymentRoutes(router, payments);
}

/** Runs due reminders and beta renewals every PAYMENTS_SWEEP_MS; returns the stop function. */
export function schedulePaymentsSweep(services: PaymentServices, payments: Payments): () => Promise<void> {
  const handlers: Record<DueActionKind, DueActionHandler> = {
    renewal_reminder: async (tx, { userId }) => {
      const reminder = await payments.plans.reminderFor(tx, userId);
      const user = await tx.findOne(User, { id: userId });
      if (!reminder || !user) return;
      await services.mailer.send(
        paymentMail(localeOf(user), user.email, 'renewal_reminder', {
          name: user.name,
          tier: reminder.tier,
          date: reminder.renewsAt.toISOString().slice(0, 10),
          link: `${services.baseUrl}/billing`,
        }),
      );
    },
    beta_renewal: (tx, { userId, dueAt }) => payments.beta.renew(tx, userId, dueAt),
  };
  return startDueActionSweep(() => payments.dueActions.sweep(services.orm, handlers, services.logger), services.config.PAYMENTS_SWEEP_MS, services.logger);
}
