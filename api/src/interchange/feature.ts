import type { ApiRouter } from '../http/router.ts';
import type { ProjectService } from '../projects/service.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import { registerInterchangeRoutes } from './routes.ts';
import { Interchange } from './service.ts';

/** The edit leaves Cutroom: timelines for editors, captions, transcript and chapters in output time. */
export function registerInterchange(router: ApiRouter, services: { storage: ObjectStorage; features: { projects: ProjectService } }): void {
  registerInterchangeRoutes(router, new Interchange({ projects: services.features.projects, storage: services.storage }));
}
