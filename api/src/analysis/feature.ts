import type { Services } from '../services.ts';
import type { ApiRouter } from '../http/router.ts';
import type { ProjectService } from '../projects/service.ts';
import { Announcer } from '../events/announcer.ts';
import { registerAnalysisRoutes } from './routes.ts';
import { AnalysisService } from './service.ts';

/** Analysis: its service built from the app's services, and its routes. */
export function registerAnalysis(router: ApiRouter, services: Pick<Services, 'jobs' | 'billing' | 'bus' | 'webhooks'>, projects: ProjectService): void {
  const announcer = new Announcer(services.bus, services.webhooks);
  registerAnalysisRoutes(router, { analysis: new AnalysisService({ jobs: services.jobs, billing: services.billing, projects, announcer }) });
}
