import type { Services } from '../services.ts';
import type { ApiRouter } from '../http/router.ts';
import type { ProjectService } from '../projects/service.ts';
import type { AnalysisEvent } from './completion.ts';
import { registerAnalysisRoutes } from './routes.ts';
import { AnalysisService } from './service.ts';

/** Analysis: its service built from the app's services, and its routes. */
export function registerAnalysis(router: ApiRouter, services: Pick<Services, 'jobs' | 'billing' | 'bus' | 'webhooks'>, projects: ProjectService): void {
  const analysis = new AnalysisService({ jobs: services.jobs, billing: services.billing, projects, webhooks: services.webhooks });
  registerAnalysisRoutes(router, {
    analysis,
    announceStarted: (projectId, runId) =>
      services.bus.publishToProject(projectId, { type: 'analysis_started', data: { project_uuid: projectId, analysis_run_id: runId } } satisfies AnalysisEvent),
  });
}
