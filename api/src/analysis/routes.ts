import { z } from 'zod';
import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import { listOf, listSchema } from '../http/pagination.ts';
import { ProjectRead, projectRead, ProjectUuidParams } from '../projects/schemas.ts';
import { AnalysisRunSummary, AnalyzeBody, EstimatedCredits, ProjectRunParams, RunsQuery, runSummary } from './schemas.ts';
import type { AnalysisService } from './service.ts';

export interface AnalysisRouteDeps {
  analysis: AnalysisService;
}

/** Analyze, estimated credits, runs and their activation (the active run's edits: edits/routes.ts). */
export function registerAnalysisRoutes(router: AppRouter, { analysis }: AnalysisRouteDeps): void {
  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/analyze',
    summary: "Queues the project's analysis: transcript, silences, false starts and fillers. Returns at once with status analyzing; progress on the project stream.",
    tags: ['analysis'],
    access: 'session',
    scope: 'write',
    params: ProjectUuidParams,
    body: AnalyzeBody,
    responses: {
      200: { description: 'The project, analyzing', schema: ProjectRead },
      400: { description: 'The project has no media' },
      402: { description: 'Too few AI minutes (the message names the minutes needed and the balance)' },
      403: { description: 'director_notes sent on a tier without can_use_ai_director (AiDirectorNotIncluded)' },
      404: { description: 'No such project, or preset_id names no preset, of the caller' },
      409: { description: 'Already analyzing, a source is still processing, or a source failed (SourceFailed, naming it)' },
      422: { description: 'Every source is silent' },
    },
    handler: async (ctx, { params, body, caller, em }) => {
      const { project } = await analysis.analyze(em, caller.user.id, params.project_uuid, body);
      ctx.body = projectRead(project);
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/estimated-credits',
    summary: "AI minutes an analysis of the project's spine would take, the caller's available balance, and whether it covers them.",
    tags: ['analysis'],
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams,
    responses: { 200: { description: 'The estimate', schema: EstimatedCredits }, 404: { description: 'No such project of the caller' }, 409: { description: 'A source of the spine is still being processed, so its duration is not known yet' } },
    handler: async (ctx, { params, caller, em }) => {
      ctx.body = await analysis.estimate(em, caller.user.id, params.project_uuid);
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/analysis-runs',
    summary: "The project's analysis runs, newest first (lightweight fields).",
    tags: ['analysis'],
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams,
    query: RunsQuery,
    responses: { 200: { description: 'Runs', schema: listSchema(AnalysisRunSummary) }, 404: { description: 'No such project of the caller' } },
    handler: async (ctx, { params, query, caller, em }) => {
      ctx.body = listOf((await analysis.runs(em, caller.user.id, params.project_uuid, query.limit)).map(runSummary));
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/analysis-runs/{run_uuid}/cancel',
    summary:
      'Stops a queued or running analysis (beyond the spec). Answers at once with the run; the run ends failed (job.cancelled) and analysis_failed follows once the job has stopped, its reserved minutes released, never charged.',
    tags: ['analysis'],
    access: 'session',
    scope: 'write',
    params: ProjectRunParams,
    responses: {
      202: { description: 'Cancelling: the run as it is now (failed already when its job had not started)', schema: AnalysisRunSummary },
      404: { description: 'No such project of the caller, or no such run in it' },
      409: { description: 'The run has ended already (completed or failed)' },
    },
    handler: async (ctx, { params, caller, em }) => {
      ctx.status = 202;
      ctx.body = runSummary(await analysis.cancel(em, caller.user.id, params.project_uuid, params.run_uuid));
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/analysis-runs/{run_uuid}/activate',
    summary: 'Makes a completed run the active one and copies its transcript to the project; edit, caption and draft lists then follow it.',
    tags: ['analysis'],
    access: 'session',
    scope: 'write',
    params: ProjectRunParams,
    responses: {
      200: { description: 'The project', schema: ProjectRead },
      404: { description: 'No such project of the caller' },
      422: { description: 'The run is not completed or belongs to another project' },
    },
    handler: async (ctx, { params, caller, em }) => {
      ctx.body = projectRead(await analysis.activate(em, caller.user.id, params.project_uuid, params.run_uuid));
    },
  });
}
