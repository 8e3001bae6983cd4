import type { Config } from '../config.ts';
import type { ApiRouter } from '../http/router.ts';
import type { ProjectService } from '../projects/service.ts';
import { registerEditRoutes } from './routes.ts';
import { EditService } from './service.ts';

/** Edits: the service built from config and the projects, and its routes. */
export function registerEdits(router: ApiRouter, services: { config: Config }, projects: ProjectService): void {
  registerEditRoutes(router, new EditService({ projects, maxInsertMs: services.config.MAX_VIDEO_DURATION_MS }));
}
