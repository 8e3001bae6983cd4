import type { Logger } from 'pino';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { Config } from './config.ts';
import type { ObjectStorage } from './storage/storage.ts';
import type { JobMetrics } from './ops/metrics.ts';
import type { Clock } from './shared/clock.ts';
import type { EventBus } from './events/bus.ts';
import type { WebhookEvents } from './webhooks/events.ts';
import type { ChannelSubscriber } from './events/stream-subscriber.ts';
import type { JobCompletion } from './jobs/completion.ts';
import type { JobDispatcher } from './jobs/dispatcher.ts';
import type { JobService } from './jobs/service.ts';
import type { Mailer } from './accounts/mailer.ts';
import type { AccountsService } from './accounts/accounts-service.ts';
import type { BillingService } from './billing/billing-service.ts';
import type { ProjectService } from './projects/service.ts';
import type { UploadService } from './media/uploads/service.ts';
import type { MediaLibrary } from './media/library/library-service.ts';
import type { MediaGroups } from './media-groups/groups-service.ts';
import type { ExportService } from './exports/service.ts';
import type { Payments } from './payments/payments.ts';
import type { IdempotencyStore } from './idempotency/idempotency-store.ts';
import type { WebhookEndpoints } from './webhooks/endpoints.ts';
import type { WebhookDeliveryWorker } from './webhooks/delivery.ts';

/** Everything the features depend on, built once from config by the composition root (app.ts) and handed down explicitly. */
export interface Services {
  config: Config;
  logger: Logger;
  clock: Clock;
  orm: MikroORM;
  redis: Redis;
  storage: ObjectStorage;
  metrics: Registry;
  jobMetrics: JobMetrics;
  bus: EventBus;
  /** Records events for users' webhook endpoints inside the transaction of the change. */
  webhooks: WebhookEvents;
  /** One Redis subscriber connection per process, shared by every event stream. */
  subscriber: ChannelSubscriber;
  completion: JobCompletion;
  dispatcher: JobDispatcher;
  jobs: JobService;
  /** SMTP (SMTP_URL) or, without it, the log. */
  mailer: Mailer;
  /** Users, sessions, authentication; the root hands it each feature's account-deletion step. */
  accounts: AccountsService;
  /** Plans, the trial and the AI-minute ledger (reserveCredits, deductCredits, releaseCredits, statusFor…). */
  billing: BillingService;
  /** The feature services more than one feature, a hook or a sweep uses: each built once. */
  features: SharedFeatures;
  baseUrl: string;
  close(): Promise<void>;
}

/** Feature services that other features, the cross-feature hooks or the sweeps use. */
export interface SharedFeatures {
  projects: ProjectService;
  uploads: UploadService;
  library: MediaLibrary;
  groups: MediaGroups;
  exports: ExportService;
  payments: Payments;
  /** Idempotency-Key records, shared by every route marked idempotent. */
  idempotency: IdempotencyStore;
  webhooks: WebhookEndpoints;
  /** Sends recorded webhook deliveries (started with the services, stopped by close()). */
  webhookDelivery: WebhookDeliveryWorker;
}
