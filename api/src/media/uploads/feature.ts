import type { BillingService } from '../../billing/billing-service.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Config } from '../../config.ts';
import type { JobService } from '../../jobs/service.ts';
import type { Logger } from 'pino';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ObjectStorage } from '../../storage/storage.ts';
import type { ProjectService } from '../../projects/service.ts';
import { MultipartStore } from './multipart-store.ts';
import { UploadService } from './service.ts';

type UploadServices = { config: Config; storage: ObjectStorage; billing: BillingService; jobs: JobService; clock: Clock; logger: Logger };

/** The upload service over the projects feature (its routes and hooks are wired in app.ts). */
export function createUploads(services: UploadServices, projects: ProjectService, options: { partsPageSize?: number } = {}): { uploads: UploadService; store: MultipartStore } {
  const { config } = services;
  const store = new MultipartStore(services.storage, options);
  const uploads = new UploadService({
    storage: services.storage,
    store,
    billing: services.billing,
    jobs: services.jobs,
    projects,
    clock: services.clock,
    logger: services.logger,
    limits: {
      maxUploadBytes: config.STORAGE_MAX_UPLOAD_SIZE_MB * 1024 * 1024,
      multipartCutoffBytes: config.MULTIPART_CUTOFF_BYTES,
      partSizeBytes: config.MULTIPART_PART_SIZE_BYTES,
      maxParts: config.MULTIPART_MAX_PARTS,
      staleHours: config.MULTIPART_STALE_HOURS,
    },
  });
  return { uploads, store };
}

/** Runs the sweep of stale uploads and orphaned staging objects every 15 minutes (a single PUT goes soon after its URL expired) on an unref'd timer; returns its stop. */
export function scheduleUploadSweep(services: { orm: MikroORM; logger: Logger }, uploads: UploadService, everyMs = 15 * 60_000): () => void {
  const timer = setInterval(() => {
    uploads.sweepStaleUploads(services.orm.em.fork()).then(
      (swept) => swept && services.logger.info({ swept }, 'stale uploads swept'),
      (error: unknown) => services.logger.warn({ err: error }, 'the stale upload sweep failed'),
    );
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
