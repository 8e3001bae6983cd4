import type { Services } from '../../services.ts';
import type { ApiRouter } from '../../http/router.ts';
import { MediaEditService } from './edit-service.ts';
import { registerMediaEditRoutes } from './routes.ts';

/** Media edits (POST /media/{id}/edit), wired from the services. */
export function registerMediaEdits(router: ApiRouter, services: Pick<Services, 'jobs'>): void {
  registerMediaEditRoutes(router, new MediaEditService({ jobs: services.jobs }));
}
