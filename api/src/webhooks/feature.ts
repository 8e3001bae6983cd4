import type { Logger } from 'pino';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Mailer } from '../accounts/mailer.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../shared/clock.ts';
import { WebhookDeliveryWorker } from './delivery.ts';
import { WebhookEndpoints } from './endpoints.ts';
import { registerWebhookRoutes } from './routes.ts';
import { systemResolver, type Resolver } from './targets.ts';
import type { AppRouter } from '../accounts/guards.ts';

export interface Webhooks {
  endpoints: WebhookEndpoints;
  worker: WebhookDeliveryWorker;
}

/** The endpoints service and the delivery worker, from the config (the worker starts with start()). */
export function createWebhooks(services: { config: Config; orm: MikroORM; clock: Clock; logger: Logger; mailer: Mailer }, resolver: Resolver = systemResolver): Webhooks {
  const { config } = services;
  const worker = new WebhookDeliveryWorker({
    orm: services.orm,
    clock: services.clock,
    logger: services.logger,
    mailer: services.mailer,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    resolver,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    concurrency: config.WEBHOOK_CONCURRENCY,
    pollMs: config.WEBHOOK_POLL_MS,
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER_DAYS * 86_400_000,
  });
  const endpoints = new WebhookEndpoints({
    clock: services.clock,
    maxPerUser: config.WEBHOOK_MAX_ENDPOINTS_PER_USER,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    resolver,
    wake: () => worker.kick(),
  });
  return { endpoints, worker };
}

export function registerWebhooks(router: AppRouter, services: { config: Config; features: { webhooks: WebhookEndpoints } }): void {
  registerWebhookRoutes(router, services.features.webhooks, services.config.WEBHOOK_MAX_ENDPOINTS_PER_USER);
}
