import type { ProjectService } from '../projects/service.ts';
import { registerCaptionRoutes } from './routes.ts';
import { CaptionLines } from './service.ts';
import type { AppRouter } from '../accounts/guards.ts';

/** Captions: the caption-line service over the projects feature, and its routes. */
export function registerCaptions(router: AppRouter, projects: ProjectService): void {
  registerCaptionRoutes(router, new CaptionLines({ projects }));
}
