import type { Config } from '../config.ts';
import type { ProjectService } from '../projects/service.ts';
import { registerEditRoutes } from './routes.ts';
import { EditService } from './service.ts';
import type { AppRouter } from '../accounts/guards.ts';

/** Edits: the service built from config and the projects, and its routes. */
export function registerEdits(router: AppRouter, services: { config: Config }, projects: ProjectService): void {
  registerEditRoutes(router, new EditService({ projects, maxInsertMs: services.config.MAX_VIDEO_DURATION_MS }));
}
