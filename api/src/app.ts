import Koa from 'koa';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { publicBaseUrl, type Config } from './config.ts';
import { openOrm } from './db/orm.ts';
import { createRedis } from './redis.ts';
import { objectStorageFrom, type ObjectStorage } from './storage/storage.ts';
import { ApiRouter, type Guards } from './http/router.ts';
import { bodyParser, errorsAndAccessLog, requestState } from './http/middleware.ts';
import { registerApiDocs } from './http/openapi.ts';
import { securityHeaders } from './http/security-headers.ts';
import { registerOpsRoutes } from './ops/routes.ts';
import { createMetricsRegistry, HttpMetrics, JobMetrics } from './ops/metrics.ts';
import { asyncLog, countDroppedLines } from './ops/log-destination.ts';
import type { AppState } from './http/state.ts';
import { systemClock, type Clock } from './shared/clock.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import type { EventBus } from './events/bus.ts';
import type { JobCompletion } from './jobs/completion.ts';
import { LocalJobRunner } from './jobs/local-runner.ts';
import type { JobDispatcher } from './jobs/dispatcher.ts';
import { JobOutbox } from './jobs/outbox.ts';
import { JobService } from './jobs/service.ts';
import { createDomain } from './domain.ts';
import type { AccountsService } from './accounts/accounts-service.ts';
import { createAccounts, registerAccounts } from './accounts/feature.ts';
import { accountGuards } from './accounts/guards.ts';
import { createMailer, type Mailer } from './accounts/mailer.ts';
import type { BillingService } from './billing/billing-service.ts';
import { registerBillingRoutes } from './billing/routes.ts';
import { registerPayments, schedulePaymentsSweep } from './payments/feature.ts';
import { webhookRawBody } from './payments/routes.ts';
import { createUploads, scheduleUploadSweep } from './media/uploads/feature.ts';
import { registerUploadRoutes } from './media/uploads/routes.ts';
import { registerMediaLibrary } from './media/library/feature.ts';
import { MediaLibrary } from './media/library/library-service.ts';
import { MediaGroups } from './media-groups/groups-service.ts';
import { registerMediaGroupRoutes } from './media-groups/routes.ts';
import { deletePresetsOf, registerPresets } from './presets/feature.ts';
import { ChannelSubscriber } from './events/stream-subscriber.ts';
import { registerMediaEdits } from './media/media-edits/feature.ts';
import { registerAnalysis } from './analysis/feature.ts';
import { registerEdits } from './edits/feature.ts';
import { registerCaptions } from './captions/feature.ts';
import { registerDrafts } from './drafts/feature.ts';
import { createExports, registerExports, scheduleExportSweep } from './exports/feature.ts';
import { registerEventStreams } from './events/feature.ts';
import { registerProjectRoutes } from './projects/routes.ts';
import { registerCanvasRoutes } from './canvases/routes.ts';

export const API_VERSION = '0.1.0';

/** Everything the features depend on, built once from config and handed down explicitly. */
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
  /** One Redis subscriber connection per process, shared by every event stream. */
  subscriber: ChannelSubscriber;
  completion: JobCompletion;
  dispatcher: JobDispatcher;
  jobs: JobService;
  /** SMTP (SMTP_URL) or, without it, the log. */
  mailer: Mailer;
  /** Users, sessions, authentication; buildApp hands it each feature's account-deletion step. */
  accounts: AccountsService;
  /** Plans, the trial and the AI-minute ledger (reserveCredits, deductCredits, releaseCredits, statusFor…). */
  billing: BillingService;
  baseUrl: string;
  close(): Promise<void>;
}

export interface ServiceOverrides {
  logDestination?: DestinationStream;
  clock?: Clock;
  /** The cluster the kubernetes job backend talks to (tests: the API simulator). */
  kubeConfig?: KubeConfig;
  /** Local backend at process start: run again the jobs a previous process left running (api/src/main.ts). */
  recoverJobs?: boolean;
}

export async function createServices(config: Config, overrides: ServiceOverrides = {}): Promise<Services> {
  const stdout = overrides.logDestination ? undefined : asyncLog();
  const logger = pino({ level: config.LOG_LEVEL, base: { service: 'cutroom-api' } }, overrides.logDestination ?? stdout);
  const orm = await openOrm(config);
  const redis = createRedis(config);
  redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));
  const storage = objectStorageFrom(config);
  const metrics = createMetricsRegistry();
  if (stdout) countDroppedLines(stdout, metrics);
  const clock = overrides.clock ?? systemClock;
  const mailer = createMailer(config, logger);
  const jobMetrics = new JobMetrics(metrics);
  const subscriber = new ChannelSubscriber(redis, logger);
  const { billing, bus, completion, outboxChannel } = createDomain({
    orm, redis, storage, logger, clock,
    redisKeyPrefix: config.REDIS_KEY_PREFIX,
    defaultJobTimeoutSeconds: config.JOB_TIMEOUT_SECONDS,
  });
  const dispatcher = await createDispatcher(config, overrides, { storage, completion, logger, jobMetrics, onSlotFree: () => outbox.kick() });
  const outbox = new JobOutbox({
    orm, dispatcher, completion, storage, logger,
    databaseUrl: config.DATABASE_URL,
    channel: outboxChannel,
    pollMs: config.JOB_DISPATCH_POLL_MS,
    recoverOnStart: overrides.recoverJobs ?? false,
    metrics: jobMetrics,
  });
  const services: Services = {
    config,
    logger,
    clock,
    orm,
    redis,
    storage,
    metrics,
    jobMetrics,
    bus,
    subscriber,
    completion,
    dispatcher,
    jobs: new JobService({ dispatcher, completion, outbox, billing, defaultTimeoutSeconds: config.JOB_TIMEOUT_SECONDS }),
    mailer,
    accounts: createAccounts({ config, orm, redis, clock, logger, mailer, billing, baseUrl: () => services.baseUrl }),
    billing,
    baseUrl: publicBaseUrl(config),
    close: async () => {
      stopUploadSweep();
      await stopPaymentsSweep();
      stopExportSweep();
      await outbox.close();
      await dispatcher.close();
      await services.accounts.idle();
      subscriber.close();
      mailer.close();
      storage.close();
      redis.disconnect();
      await orm.close();
    },
  };
  const stopUploadSweep = scheduleUploadSweep(services);
  const stopPaymentsSweep = schedulePaymentsSweep(services);
  const stopExportSweep = scheduleExportSweep(services);
  await outbox.start();
  return services;
}

/** The configured backend; the Kubernetes client is loaded only when it is the one. */
async function createDispatcher(
  config: Config,
  overrides: ServiceOverrides,
  deps: { storage: ObjectStorage; completion: JobCompletion; logger: Logger; jobMetrics: JobMetrics; onSlotFree: () => void },
): Promise<JobDispatcher> {
  if (config.JOB_BACKEND === 'kubernetes') {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const { KubernetesJobDispatcher } = await import('./jobs/kubernetes-dispatcher.ts');
    let kubeConfig = overrides.kubeConfig;
    if (!kubeConfig) {
      kubeConfig = new KubeConfig();
      kubeConfig.loadFromDefault();
    }
    return new KubernetesJobDispatcher(kubeConfig, config.KUBE_NAMESPACE, deps.jobMetrics);
  }
  return new LocalJobRunner({
    concurrency: config.JOB_LOCAL_CONCURRENCY,
    s3: deps.storage.settings,
    storage: deps.storage,
    completion: deps.completion,
    logger: deps.logger,
    metrics: deps.jobMetrics,
    onSlotFree: deps.onSlotFree,
    env: { WHISPER_BASE_URL: config.WHISPER_BASE_URL, WHISPER_MODEL: config.WHISPER_MODEL },
  });
}

/** The composition root: middleware, then each feature's routes with its dependencies. */
export interface AppOptions {
  /** Extra routes (tests use it to exercise the error model on purpose-built routes). */
  extend?: (router: ApiRouter) => void;
}

export interface BuiltApp {
  koa: Koa<AppState>;
  router: ApiRouter;
}

/** Every feature registered once, flat, with its explicit dependencies; the cross-feature hooks are wired here too. */
export function buildApp(services: Services, options: AppOptions = {}): BuiltApp {
  const { config } = services;
  // Only the hops we trust may name the client: a client's own X-Forwarded-For entries are ignored.
  const app = new Koa<AppState>({ proxy: config.TRUST_PROXY, maxIpsCount: config.TRUSTED_PROXY_HOPS });
  app.silent = true; // errors are logged by the access-log middleware, with their support id

  const guards: Guards = accountGuards(services.accounts);
  const router = new ApiRouter(guards);

  // The feature services more than one feature uses, built once.
  const { projects, uploads } = createUploads(services);
  const library = new MediaLibrary();
  const groups = new MediaGroups(library);

  // Every cross-feature hook, here and nowhere else: billing counts the user's projects;
  // deleting an account takes the user's projects and media, then their media groups.
  services.billing.useProjectCounter((em, userId) => projects.count(em, userId));
  const exports = createExports(services, projects);
  // before the media step, which deletes the projects (and with them the export rows)
  services.accounts.onAccountDeletion((em, user) => exports.deleteAccountExports(em, user.id));
  services.accounts.onAccountDeletion((em, user) => uploads.deleteAccountMedia(em, user.id));
  services.accounts.onAccountDeletion((em, user) => groups.deleteAllOf(em, user.id));
  services.accounts.onAccountDeletion((em, user) => deletePresetsOf(em, user.id));

  registerOpsRoutes(router, {
    metrics: services.metrics,
    metricsToken: config.METRICS_TOKEN,
    checks: {
      postgresql: () => services.orm.em.getConnection().execute('select 1'),
      redis: () => services.redis.ping(),
      s3: () => services.storage.ping(),
    },
  });
  registerAccounts(router, { ...services, baseUrl: () => services.baseUrl });
  registerBillingRoutes(router, services.billing);
  registerPayments(router, services);
  registerProjectRoutes(router, projects, services.orm);
  registerCanvasRoutes(router, projects);
  registerUploadRoutes(router, uploads, projects);
  registerMediaLibrary(router, services, library);
  registerMediaGroupRoutes(router, groups);
  registerPresets(router);
  registerMediaEdits(router, services, projects);
  registerAnalysis(router, services, projects);
  registerEdits(router, services, projects);
  registerCaptions(router, projects);
  registerDrafts(router, projects);
  registerExports(router, exports);
  registerEventStreams(router, services);
  registerApiDocs(router, API_VERSION);
  options.extend?.(router);

  app.use(securityHeaders());
  app.use(requestState(services.orm, config.SUPPORTED_LOCALES));
  app.use(errorsAndAccessLog(services.logger, new HttpMetrics(services.metrics)));
  // Stripe's webhook keeps its raw body for the signature; everything else is parsed.
  app.use(webhookRawBody(config.MAX_JSON_BODY_BYTES, bodyParser(config.MAX_JSON_BODY_BYTES)));
  app.use(router.koa.routes());
  app.use(router.koa.allowedMethods({ throw: true }));
  return { koa: app, router };
}
