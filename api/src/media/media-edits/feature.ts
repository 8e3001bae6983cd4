import type { JobService } from '../../jobs/service.ts';
import type { ApiRouter } from '../../http/router.ts';
import { MediaEditService } from './edit-service.ts';
import { registerMediaEditRoutes } from './routes.ts';

/** Media edits (POST /media/{id}/edit), wired from the services. */
export function registerMediaEdits(router: ApiRouter, services: { jobs: JobService }): void {
  registerMediaEditRoutes(router, new MediaEditService({ jobs: services.jobs }));
}
