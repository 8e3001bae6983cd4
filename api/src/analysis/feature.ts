import type { BillingService } from '../billing/billing-service.ts';
import type { EventBus } from '../events/bus.ts';
import type { JobService } from '../jobs/service.ts';
import type { WebhookEvents } from '../webhooks/events.ts';
import type { ProjectService } from '../projects/service.ts';
import { Announcer } from '../events/announcer.ts';
import { registerAnalysisRoutes } from './routes.ts';
import { AnalysisService } from './service.ts';
import type { AppRouter } from '../accounts/guards.ts';

/** Analysis: its service built from the app's services, and its routes. */
export function registerAnalysis(router: AppRouter, services: { jobs: JobService; billing: BillingService; bus: EventBus; webhooks: WebhookEvents }, projects: ProjectService): void {
  const announcer = new Announcer(services.bus, services.webhooks);
  registerAnalysisRoutes(router, { analysis: new AnalysisService({ jobs: services.jobs, billing: services.billing, projects, announcer }) });
}
