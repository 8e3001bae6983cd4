import type { BillingService } from '../../billing/billing-service.ts';
import type { Config } from '../../config.ts';
import type { JobService } from '../../jobs/service.ts';
import type { ProjectService } from '../../projects/service.ts';
import { MediaImportService } from './import-service.ts';
import { registerMediaImportRoutes } from './routes.ts';
import { MuxVideoHost } from './video-host.ts';
import type { AppRouter } from '../../accounts/guards.ts';

/** External video import (POST /media/videohost) through the video host, wired from the services. */
export function registerMediaImport(router: AppRouter, services: { config: Config; jobs: JobService; billing: BillingService }, projects: ProjectService): void {
  const { config } = services;
  const host = new MuxVideoHost({ tokenId: config.MUX_TOKEN_ID, tokenSecret: config.MUX_TOKEN_SECRET, apiBase: config.MUX_API_BASE });
  registerMediaImportRoutes(
    router,
    new MediaImportService({
      host,
      jobs: services.jobs,
      projects,
      billing: services.billing,
      limits: { maxDurationSeconds: config.MAX_EXTERNAL_VIDEO_DURATION_SECONDS, maxBytes: config.STORAGE_MAX_UPLOAD_SIZE_MB * 1024 * 1024 },
    }),
  );
}
