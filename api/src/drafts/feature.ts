import type { ApiRouter } from '../http/router.ts';
import type { ProjectService } from '../projects/service.ts';
import { registerDraftRoutes } from './routes.ts';
import { DraftService } from './service.ts';

/** Drafts: the service over the projects feature, and its routes. */
export function registerDrafts(router: ApiRouter, projects: ProjectService): void {
  registerDraftRoutes(router, new DraftService({ projects }));
}
