import type { JobService } from '../../jobs/service.ts';
import { MediaEditService } from './edit-service.ts';
import { registerMediaEditRoutes } from './routes.ts';
import type { AppRouter } from '../../accounts/guards.ts';

/** Media edits (POST /media/{id}/edit), wired from the services. */
export function registerMediaEdits(router: AppRouter, services: { jobs: JobService }): void {
  registerMediaEditRoutes(router, new MediaEditService({ jobs: services.jobs }));
}
