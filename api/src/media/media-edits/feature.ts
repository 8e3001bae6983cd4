import type { Services } from '../../app.ts';
import type { ApiRouter } from '../../http/router.ts';
import type { ProjectService } from '../../projects/service.ts';
import { MediaImportService } from '../import/import-service.ts';
import { registerMediaImportRoutes } from '../import/routes.ts';
import { MuxVideoHost } from '../import/video-host.ts';
import { MediaEditService } from './edit-service.ts';
import { registerMediaEditRoutes } from './routes.ts';

/** Media edits and external video import, wired from the services. */
export function registerMediaEdits(router: ApiRouter, services: Pick<Services, 'config' | 'jobs' | 'billing'>, projects: ProjectService): void {
  const { config } = services;
  registerMediaEditRoutes(router, new MediaEditService({ jobs: services.jobs }));
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
