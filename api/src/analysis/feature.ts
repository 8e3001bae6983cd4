import type { Services } from '../app.ts';
import type { ApiRouter } from '../http/router.ts';
import type { ProjectService } from '../projects/service.ts';
import { registerAnalysisRoutes } from './routes.ts';
import { AnalysisService } from './service.ts';

/** Analysis: its service built from the app's services, and its routes. */
export function registerAnalysis(router: ApiRouter, services: Pick<Services, 'jobs' | 'billing' | 'bus' | 'redis'>, projects: ProjectService): void {
  const analysis = new AnalysisService({ jobs: services.jobs, billing: services.billing, projects });
  registerAnalysisRoutes(router, {
    analysis,
    announceStarted: async (projectId) => {
      await services.redis.publish(services.bus.projectChannel(projectId), JSON.stringify({ type: 'analysis_started', data: { project_uuid: projectId } }));
    },
  });
}
