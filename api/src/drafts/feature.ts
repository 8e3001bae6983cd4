import type { ProjectService } from '../projects/service.ts';
import { registerDraftRoutes } from './routes.ts';
import { DraftService } from './service.ts';
import type { AppRouter } from '../accounts/guards.ts';

/** Drafts: the service over the projects feature, and its routes. */
export function registerDrafts(router: AppRouter, projects: ProjectService): void {
  registerDraftRoutes(router, new DraftService({ projects }));
}
