import type { ApiRouter } from '../http/router.ts';
import type { Services } from '../services.ts';
import { registerInterchangeRoutes } from './routes.ts';
import { Interchange } from './service.ts';

/** The edit leaves Cutroom: timelines for editors, captions, transcript and chapters in output time. */
export function registerInterchange(router: ApiRouter, services: Pick<Services, 'storage' | 'features'>): void {
  registerInterchangeRoutes(router, new Interchange({ projects: services.features.projects, storage: services.storage }));
}
