// The job domain's one host: the api and the operator both build it here, so a job is
// dispatched, relayed and settled the same way whichever process holds it. The operator
// imports from the api only this module, the Kubernetes dispatcher, config.ts and
// ops/metrics.ts (hack/import-directions.ts enforces it); nothing here loads the Kubernetes
// client, which the api loads only when it is the configured backend.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { EntitySchema } from '@mikro-orm/core';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { DomainConfig } from './config.ts';
import { openOrm } from './orm.ts';
import { createRedis } from './redis.ts';
import { objectStorageFrom, type ObjectStorage } from './storage/storage.ts';
import { BillingService } from './billing/billing-service.ts';
import { Announcer } from './events/announcer.ts';
import { EventBus } from './events/bus.ts';
import { progressSnapshot } from './events/catalog.ts';
import { ProgressRelay } from './events/progress-relay.ts';
import { renderCompletion } from './exports/completion.ts';
import { renderProgress } from './exports/progress.ts';
import { JobCompletion, type CompletionHandlers } from './jobs/completion.ts';
import type { JobDispatcher } from './jobs/dispatcher.ts';
import { JobOutbox } from './jobs/outbox.ts';
import { JobService } from './jobs/service.ts';
import { artifactCompletion } from './media/artifact-completion.ts';
import { producedMediaCompletion } from './media/media-edits/produced-media-completion.ts';
import { proxyCompletion } from './media/proxy-completion.ts';
import { analysisCompletion, analysisProgress } from './analysis/completion.ts';
import type { JobMetrics } from './ops/metrics.ts';
import { systemClock, type Clock } from './shared/clock.ts';
import { WebhookEvents } from './webhooks/events.ts';
import { DeletedAccount, User, UserIdentity } from './accounts/entities.ts';
import { AnalysisRun } from './analysis/entities.ts';
import { CreditEntry, Subscription } from './billing/entities.ts';
import { Canvas, CanvasMedia } from './canvases/entities.ts';
import { Edit } from './edits/entities.ts';
import { Export } from './exports/entities.ts';
import { Job } from './jobs/entities.ts';
import { MediaFile, MediaItem } from './media/entities.ts';
import { Project } from './projects/entities.ts';

/**
 * The entities the job domain reads and writes (jobs, the media, analyses and exports they
 * finish, the edits and canvases those make, credits, and the users they belong to): the ORM of
 * a process that only runs jobs (the operator) knows these, not every feature's. No entity has a
 * relation, so a subset is whole; one used but missing fails at its first query.
 */
export const JOB_ENTITIES: EntitySchema[] = [User, UserIdentity, DeletedAccount, AnalysisRun, CreditEntry, Subscription, Canvas, CanvasMedia, Edit, Export, Job, MediaFile, MediaItem, Project];

// What the operator's reconcilers need of the job domain besides the host itself.
export type { JobCompletion, JobFailed, JobOutcome } from './jobs/completion.ts';
export { imposedFailures, readJobOutcome } from './jobs/outcome.ts';
export type { ObjectStorage } from './storage/storage.ts';

/** What a backend's runner is given: the local runner settles the jobs it runs itself. */
export interface DispatcherDeps {
  storage: ObjectStorage;
  completion: JobCompletion;
  logger: Logger;
  /** A local slot freed: the outbox hands over the next job. */
  onSlotFree: () => void;
}

export interface JobHostOptions {
  logger: Logger;
  /** The system clock unless a test passes its own. */
  clock?: Clock;
  /** The backend that runs the jobs: the api's configured one, or the operator's Kubernetes dispatcher. */
  dispatcher: (deps: DispatcherDeps) => JobDispatcher | Promise<JobDispatcher>;
  /** Local backend at api start: the jobs a previous process left running run again. */
  recoverOnStart?: boolean;
  /** The outbox's queue depth by kind (the api's; the operator counts its own). */
  jobMetrics?: JobMetrics;
  /** The entities the ORM knows: every entity of the service in the api (entities.ts), JOB_ENTITIES by default. */
  entities?: EntitySchema[];
}

/** The job domain and the connections it runs on, built once per process. */
export interface JobHost {
  orm: MikroORM;
  redis: Redis;
  storage: ObjectStorage;
  billing: BillingService;
  bus: EventBus;
  /** Records events for webhook delivery (job outcomes and billing changes are recorded through it here). */
  webhooks: WebhookEvents;
  completion: JobCompletion;
  dispatcher: JobDispatcher;
  outbox: JobOutbox;
  jobs: JobService;
  /** Starts dispatching (the outbox's LISTEN and poll). */
  start(): Promise<void>;
  /** Stops the outbox and the backend, then closes the connections. */
  close(): Promise<void>;
}

/**
 * Builds the job domain: the completion with every program's handler (the registry is
 * total, so a program without one does not compile), the progress relay with each
 * feature's rules, the outbox and the service features submit jobs through.
 */
export async function createJobHost(config: DomainConfig, options: JobHostOptions): Promise<JobHost> {
  const { logger } = options;
  const clock = options.clock ?? systemClock;
  const orm = await openOrm(config, options.entities ?? JOB_ENTITIES);
  const redis = createRedis(config);
  redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));
  const storage = objectStorageFrom(config);
  const billing = new BillingService({ clock });
  // Plan and ledger changes, and every settled job's events, are owed to the user's webhooks in their own transactions.
  const webhooks = new WebhookEvents({ clock, logger });
  billing.useChangeListener(webhooks.billingChanged);
  const bus = new EventBus(redis, config.REDIS_KEY_PREFIX, progressSnapshot);
  const outboxChannel = `${config.REDIS_KEY_PREFIX}jobs`;
  const media = { orm, logger, storage, billing, stillDurationMs: config.IMAGE_STILL_DURATION_MS };
  const handlers: CompletionHandlers = {
    artifact: artifactCompletion(media),
    'media-edit': producedMediaCompletion(media),
    'media-import': producedMediaCompletion(media),
    proxy: proxyCompletion(media),
    analyze: analysisCompletion({ storage, logger }),
    render: renderCompletion({ storage, logger, announcer: new Announcer(bus, webhooks) }),
  };
  const exportOwnerLocale = async (exportId: string) => {
    const [row] = await orm.em.getConnection().execute<{ locale: string }[]>(`select u.locale from exports e join users u on u.id = e.user_id where e.id = ?`, [exportId]);
    return row?.locale ?? null;
  };
  // Progress of both backends reaches the project stream here; each feature names its event.
  const progressRelay = new ProgressRelay({
    redis,
    bus,
    policies: {
      analyze: analysisProgress,
      render: renderProgress(exportOwnerLocale),
    },
  });
  const completion = new JobCompletion({ orm, logger, billing, handlers, defaultTimeoutSeconds: config.JOB_TIMEOUT_SECONDS, outboxChannel, progressRelay, publisher: bus, webhooks });
  const dispatcher = await options.dispatcher({ storage, completion, logger, onSlotFree: () => outbox.kick() });
  const outbox = new JobOutbox({
    orm, dispatcher, completion, storage, logger,
    databaseUrl: config.DATABASE_URL,
    channel: outboxChannel,
    pollMs: config.JOB_DISPATCH_POLL_MS,
    recoverOnStart: options.recoverOnStart ?? false,
    ...(options.jobMetrics ? { metrics: options.jobMetrics } : {}),
  });
  const jobs = new JobService({ dispatcher, completion, outbox, billing, defaultTimeoutSeconds: config.JOB_TIMEOUT_SECONDS });
  return {
    orm, redis, storage, billing, bus, webhooks, completion, dispatcher, outbox, jobs,
    start: () => outbox.start(),
    async close() {
      await outbox.close();
      await dispatcher.close();
      storage.close();
      redis.disconnect();
      await orm.close();
    },
  };
}
