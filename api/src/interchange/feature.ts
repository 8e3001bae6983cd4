import type { ProjectService } from '../projects/service.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import { registerInterchangeRoutes } from './routes.ts';
import { Interchange } from './service.ts';
import type { AppRouter } from '../accounts/guards.ts';

/** The edit leaves Cutroom: timelines for editors, captions, transcript and chapters in output time. */
export function registerInterchange(router: AppRouter, services: { storage: ObjectStorage; features: { projects: ProjectService } }): void {
  registerInterchangeRoutes(router, new Interchange({ projects: services.features.projects, storage: services.storage }));
}
