import type { BillingService } from '../billing/billing-service.ts';
import type { Clock } from '../shared/clock.ts';
import type { Config } from '../config.ts';
import type { JobService } from '../jobs/service.ts';
import type { Logger } from 'pino';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ObjectStorage } from '../storage/storage.ts';
import type { ProjectService } from '../projects/service.ts';
import { registerExportRoutes } from './routes.ts';
import { ExportService, sweepExpiredExports } from './service.ts';
import type { AppRouter } from '../accounts/guards.ts';

/** The export service over the projects feature and the job system. */
export function createExports(services: { config: Config; jobs: JobService; billing: BillingService; storage: ObjectStorage; clock: Clock }, projects: ProjectService): ExportService {
  const { config } = services;
  return new ExportService({
    projects,
    jobs: services.jobs,
    billing: services.billing,
    storage: services.storage,
    clock: services.clock,
    maxActivePerUser: config.EXPORT_MAX_ACTIVE_PER_USER,
    renderLimits: {
      maxOutputSeconds: config.EXPORT_MAX_OUTPUT_SECONDS,
      maxSegments: config.EXPORT_MAX_SEGMENTS,
      timeoutBaseSeconds: config.RENDER_TIMEOUT_BASE_SECONDS,
      timeoutPerOutputSecond: config.RENDER_TIMEOUT_PER_OUTPUT_SECOND,
      maxTimeoutSeconds: config.JOB_TIMEOUT_SECONDS,
    },
  });
}

export function registerExports(router: AppRouter, exports: ExportService): void {
  registerExportRoutes(router, exports);
}

/** The expired-output sweep, every EXPORT_SWEEP_INTERVAL_SECONDS on every api instance (rows are claimed, so instances never collide). */
export function scheduleExportSweep(services: { config: Config; orm: MikroORM; logger: Logger; storage: ObjectStorage; clock: Clock }): () => void {
  const sweep = () =>
    sweepExpiredExports(services.orm.em.fork(), services.storage, services.clock.now()).then(
      ({ expired, failedDeletes }) => {
        if (expired) services.logger.info({ expired }, 'expired exports swept');
        if (failedDeletes.length) services.logger.warn({ keys: failedDeletes }, 'expired export outputs could not be deleted');
      },
      (error: unknown) => services.logger.warn({ err: error }, 'the expired export sweep failed'),
    );
  // Not awaited: sweep() logs its own failure (the rejection handler above).
  const timer = setInterval(() => void sweep(), services.config.EXPORT_SWEEP_INTERVAL_SECONDS * 1000);
  timer.unref();
  return () => clearInterval(timer);
}
