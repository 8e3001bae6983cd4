import { z } from 'zod';
import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import { listOf, listSchema } from '../http/pagination.ts';
import { ProjectUuidParams } from '../projects/schemas.ts';
import { DraftCreate, DraftPatch, DraftRead, draftRead, DraftsQuery, DraftUuidParams } from './schemas.ts';
import type { DraftService } from './service.ts';

const validation = {
  400: { description: 'An edit_overrides start_ms or end_ms beyond the timeline duration (each checked on its own, once every source duration is known), or no media in the project' },
  422: { description: 'end_ms <= start_ms in one override, an unknown key in export_settings or an override, a value out of range, or analysis_run_id sent (the server sets it)' },
};

/** Drafts of a project: save, list, read, change. */
export function registerDraftRoutes(router: AppRouter, drafts: DraftService): void {
  const tags = ['drafts'];
  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/drafts/',
    summary: "Saves a draft; analysis_run_id is the project's active run (null before the first analysis).",
    tags,
    access: 'session',
    scope: 'write',
    params: ProjectUuidParams,
    body: DraftCreate,
    responses: { 201: { description: 'The draft', schema: DraftRead }, ...validation, 404: { description: 'No such project of the caller' } },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.status = 201;
      ctx.body = draftRead(await drafts.create(em, caller.user.id, params.project_uuid, body));
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/drafts/',
    summary: "All the project's drafts, newest first, whichever run is active; with analysis_run_id, that run's drafts and those saved before any analysis.",
    tags,
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams,
    query: DraftsQuery,
    responses: { 200: { description: 'Drafts', schema: listSchema(DraftRead) }, 404: { description: 'No such project of the caller' } },
    handler: async (ctx, { params, query, caller, em }) => {
      ctx.body = listOf((await drafts.list(em, caller.user.id, params.project_uuid, query.analysis_run_id)).map(draftRead));
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/drafts/{draft_uuid}',
    summary: 'A draft with its overrides and export settings.',
    tags,
    access: 'session',
    scope: 'read',
    params: DraftUuidParams,
    responses: { 200: { description: 'The draft', schema: DraftRead }, 404: { description: 'No such draft of the caller' } },
    handler: async (ctx, { params, caller, em }) => {
      ctx.body = draftRead(await drafts.get(em, caller.user.id, params.draft_uuid));
    },
  });

  router.add({
    method: 'patch',
    path: '/api/v1/drafts/{draft_uuid}',
    summary: "Changes a draft: each field given replaces the draft's whole (edit_overrides and export_settings are not merged); analysis_run_id stays.",
    tags,
    access: 'session',
    scope: 'write',
    params: DraftUuidParams,
    body: DraftPatch,
    responses: { 200: { description: 'The draft', schema: DraftRead }, ...validation, 404: { description: 'No such draft of the caller' } },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = draftRead(await drafts.update(em, caller.user.id, params.draft_uuid, body));
    },
  });
}
