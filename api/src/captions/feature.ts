import type { ApiRouter } from '../http/router.ts';
import type { ProjectService } from '../projects/service.ts';
import { registerCaptionRoutes } from './routes.ts';
import { CaptionLines } from './service.ts';

/** Captions: the caption-line service over the projects feature, and its routes. */
export function registerCaptions(router: ApiRouter, projects: ProjectService): void {
  registerCaptionRoutes(router, new CaptionLines({ projects }));
}
