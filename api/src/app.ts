import Koa from 'koa';
import { pino, type DestinationStream } from 'pino';
import { publicBaseUrl, type Config } from './config.ts';
import { ApiRouter } from './http/router.ts';
import { bodyParser, errorsAndAccessLog, requestState } from './http/middleware.ts';
import { registerApiDocs } from './http/openapi.ts';
import { securityHeaders } from './http/security-headers.ts';
import { crossOrigin } from './http/cors.ts';
import { rateLimitPerAddress } from './http/rate-limit-headers.ts';
import { RateLimiter } from './shared/rate-limiter.ts';
import { registerOpsRoutes } from './ops/routes.ts';
import { createMetricsRegistry, HttpMetrics, JobMetrics } from './ops/metrics.ts';
import { asyncLog, countDroppedLines } from './ops/log-destination.ts';
import type { AppState } from './http/state.ts';
import { systemClock, type Clock } from './shared/clock.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { createJobHost, type DispatcherDeps } from './job-host.ts';
import { LocalJobRunner } from './jobs/local-runner.ts';
import type { JobDispatcher } from './jobs/dispatcher.ts';
import type { Services, SharedFeatures } from './services.ts';
import { createAccounts, registerAccounts } from './accounts/feature.ts';
import { accountGuards, requireAuth, type AppRouter } from './accounts/guards.ts';
import { registerApiKeyRoutes } from './api-keys/routes.ts';
import { createMailer } from './accounts/mailer.ts';
import { registerBillingRoutes } from './billing/routes.ts';
import { createPayments, registerPayments, schedulePaymentsSweep } from './payments/feature.ts';
import { webhookRawBody } from './payments/routes.ts';
import { ProjectService } from './projects/service.ts';
import { createUploads, scheduleUploadSweep } from './media/uploads/feature.ts';
import { registerUploadRoutes } from './media/uploads/routes.ts';
import { registerMediaLibrary } from './media/library/feature.ts';
import { MediaLibrary } from './media/library/library-service.ts';
import { registerPlayback } from './media/playback/feature.ts';
import { MediaGroups } from './media-groups/groups-service.ts';
import { registerMediaGroupRoutes } from './media-groups/routes.ts';
import { deletePresetsOf, registerPresets } from './presets/feature.ts';
import { ChannelSubscriber } from './events/stream-subscriber.ts';
import { registerMediaEdits } from './media/media-edits/feature.ts';
import { registerMediaImport } from './media/import/feature.ts';
import { registerAnalysis } from './analysis/feature.ts';
import { registerEdits } from './edits/feature.ts';
import { registerCaptions } from './captions/feature.ts';
import { registerDrafts } from './drafts/feature.ts';
import { createExports, registerExports, scheduleExportSweep } from './exports/feature.ts';
import { registerEventStreams } from './events/feature.ts';
import { registerProjectRoutes } from './projects/routes.ts';
import { registerCanvasRoutes } from './canvases/routes.ts';
import { registerInterchange } from './interchange/feature.ts';
import { IdempotencyStore, scheduleIdempotencySweep } from './idempotency/idempotency-store.ts';
import { createIdempotency } from './idempotency/feature.ts';
import { createWebhooks, registerWebhooks } from './webhooks/feature.ts';
import type { Resolver } from './webhooks/targets.ts';
import { studio } from './studio/routes.ts';
import { entities } from './entities.ts';

export type { Services } from './services.ts';

const API_VERSION = '0.1.0';

export interface ServiceOverrides {
  logDestination?: DestinationStream;
  clock?: Clock;
  /** The cluster the kubernetes job backend talks to (tests: the control plane of test/support/kube-cluster.ts). */
  kubeConfig?: KubeConfig;
  /** Local backend at process start: run again the jobs a previous process left running (api/src/main.ts). */
  recoverJobs?: boolean;
  /** How webhook target names resolve (tests: a fixed table, to act out DNS rebinding). */
  webhookResolver?: Resolver;
}

/**
 * The services, each built once: the job host (connections and the job domain), accounts,
 * the feature services shared across features, every cross-feature hook, and the sweeps.
 */
export async function createServices(config: Config, overrides: ServiceOverrides = {}): Promise<Services> {
  const stdout = overrides.logDestination ? undefined : asyncLog();
  const logger = pino({ level: config.LOG_LEVEL, base: { service: 'cutroom-api' } }, overrides.logDestination ?? stdout);
  const metrics = createMetricsRegistry();
  if (stdout) countDroppedLines(stdout, metrics);
  const clock = overrides.clock ?? systemClock;
  const jobMetrics = new JobMetrics(metrics);
  const host = await createJobHost(config, {
    logger,
    clock,
    jobMetrics,
    recoverOnStart: overrides.recoverJobs ?? false,
    dispatcher: (deps) => createDispatcher(config, overrides, { ...deps, jobMetrics }),
    entities,
  });
  const { orm, redis, storage, billing } = host;
  const mailer = createMailer(config, logger);
  const subscriber = new ChannelSubscriber(redis, logger);
  const accounts = createAccounts({ config, orm, redis, clock, logger, mailer, billing, baseUrl: () => services.baseUrl });
  // One object throughout: the features built from it read `baseUrl` as the harness or main.ts sets it later.
  const base: Omit<Services, 'features'> = {
    config,
    logger,
    clock,
    orm,
    redis,
    storage,
    metrics,
    jobMetrics,
    bus: host.bus,
    webhooks: host.webhooks,
    subscriber,
    completion: host.completion,
    dispatcher: host.dispatcher,
    jobs: host.jobs,
    mailer,
    accounts,
    billing,
    baseUrl: publicBaseUrl(config),
    close: async () => {
      stopUploadSweep();
      await stopPaymentsSweep();
      stopExportSweep();
      stopIdempotencySweep();
      await features.webhookDelivery.close();
      await accounts.idle();
      subscriber.close();
      mailer.close();
      await host.close();
    },
  };
  const services: Services = Object.assign(base, { features: createSharedFeatures(base, overrides) });
  const { features } = services;

  // Every cross-feature hook, here and nowhere else: billing counts the user's projects;
  // deleting an account stops its jobs, takes the exports (before the media step, which deletes the projects
  // and with them the export rows), the projects and media, the media groups and the
  // presets, then cancels a live subscription at Stripe.
  billing.useProjectCounter((em, userId) => features.projects.count(em, userId));
  accounts.onAccountDeletion((em, user) => host.jobs.cancelAccountJobs(em, user.id));
  accounts.onAccountDeletion((em, user) => features.exports.deleteAccountExports(em, user.id));
  accounts.onAccountDeletion((em, user) => features.uploads.deleteAccountMedia(em, user.id));
  accounts.onAccountDeletion((em, user) => features.groups.deleteAllOf(em, user.id));
  accounts.onAccountDeletion((em, user) => deletePresetsOf(em, user.id));
  accounts.onAccountDeletion((em, user) => features.webhooks.deleteAllOf(em, user.id));
  accounts.onAccountDeletion((em, user) => features.payments.plans.closeAccount(em, user.id));

  const stopUploadSweep = scheduleUploadSweep(services, features.uploads);
  const stopPaymentsSweep = schedulePaymentsSweep(services, features.payments);
  const stopExportSweep = scheduleExportSweep(services);
  const stopIdempotencySweep = scheduleIdempotencySweep(services, features.idempotency);
  features.webhookDelivery.start();
  await host.start();
  return services;
}

/** The feature services that more than one feature, a hook or a sweep uses. */
function createSharedFeatures(core: Omit<Services, 'features'>, overrides: ServiceOverrides): SharedFeatures {
  const projects = new ProjectService({ billing: core.billing });
  const { uploads } = createUploads(core, projects);
  const library = new MediaLibrary();
  const webhooks = createWebhooks(core, overrides.webhookResolver);
  return {
    webhooks: webhooks.endpoints,
    webhookDelivery: webhooks.worker,
    projects,
    uploads,
    library,
    groups: new MediaGroups(library),
    exports: createExports(core, projects),
    payments: createPayments(core),
    idempotency: new IdempotencyStore(core.orm),
  };
}

/** The configured backend; the Kubernetes client is loaded only when it is the one. */
async function createDispatcher(config: Config, overrides: ServiceOverrides, deps: DispatcherDeps & { jobMetrics: JobMetrics }): Promise<JobDispatcher> {
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
    shortRenderSeconds: config.JOB_LOCAL_SHORT_RENDER_SECONDS,
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
  extend?: (router: AppRouter) => void;
}

export interface BuiltApp {
  koa: Koa<AppState>;
  router: AppRouter;
}

/** Every feature registers its own routes, once, flat, with its explicit dependencies (the hooks are createServices'). */
export function buildApp(services: Services, options: AppOptions = {}): BuiltApp {
  const { config } = services;
  // Only the hops we trust may name the client: a client's own X-Forwarded-For entries are ignored.
  const app = new Koa<AppState>({ proxy: config.TRUST_PROXY, maxIpsCount: config.TRUSTED_PROXY_HOPS });
  app.silent = true; // errors are logged by the access-log middleware, with their support id

  const rateWindow = config.RATE_LIMIT_WINDOW_SECONDS;
  const guards = accountGuards(services.accounts, {
    keyLimiter: new RateLimiter(services.redis, { name: 'api-key', points: config.RATE_LIMIT_PER_API_KEY, seconds: rateWindow }),
  });
  const addressLimiter = config.RATE_LIMIT_PER_IP > 0 ? new RateLimiter(services.redis, { name: 'ip', points: config.RATE_LIMIT_PER_IP, seconds: rateWindow }) : undefined;
  const idempotency = createIdempotency({
    store: services.features.idempotency,
    clock: services.clock,
    logger: services.logger,
    callerOf: (ctx) => requireAuth(ctx).user.id,
  });
  const router = new ApiRouter(guards, idempotency.requests);
  const { projects, uploads, library, groups, exports, payments } = services.features;

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
  registerApiKeyRoutes(router, services.accounts.apiKeys);
  registerBillingRoutes(router, services.billing);
  registerPayments(router, payments);
  registerProjectRoutes(router, projects, services.orm);
  registerCanvasRoutes(router, projects);
  registerUploadRoutes(router, uploads, projects);
  registerMediaLibrary(router, library);
  registerPlayback(router, services, library);
  registerMediaGroupRoutes(router, groups);
  registerPresets(router);
  registerMediaEdits(router, services);
  registerMediaImport(router, services, projects);
  registerAnalysis(router, services, projects);
  registerEdits(router, services, projects);
  registerCaptions(router, projects);
  registerDrafts(router, projects);
  registerExports(router, exports);
  registerInterchange(router, services);
  registerEventStreams(router, services);
  registerWebhooks(router, services);
  registerApiDocs(router, API_VERSION);
  options.extend?.(router);

  app.use(securityHeaders());
  app.use(requestState(services.orm, config.SUPPORTED_LOCALES));
  // outside the error middleware: an idempotent request's response is kept as the client gets it, errors included
  app.use(idempotency.recorder);
  app.use(errorsAndAccessLog(services.logger, new HttpMetrics(services.metrics)));
  // Preflights are answered here, before any limit; an error answer keeps its CORS headers.
  app.use(crossOrigin(config.CORS_ALLOWED_ORIGINS));
  // The studio's pages and assets (/studio/), and the redirects to it of / and the e-mailed link paths.
  app.use(studio(config));
  app.use(rateLimitPerAddress(addressLimiter));
  // Stripe's webhook keeps its raw body for the signature; everything else is parsed.
  app.use(webhookRawBody(config.MAX_JSON_BODY_BYTES, bodyParser(config.MAX_JSON_BODY_BYTES)));
  app.use(router.routes());
  return { koa: app, router };
}
