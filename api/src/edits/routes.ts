import { z } from 'zod';
import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import { listOf, listSchema } from '../http/pagination.ts';
import { ProjectUuidParams } from '../projects/schemas.ts';
import { EditCreate, EditPatch, EditRead, editRead, EditsQuery, EditUuidParams } from './schemas.ts';
import type { EditService } from './service.ts';

const bounds = {
  400: { description: 'end_ms beyond the timeline duration (checked once every source duration is known), no media in the project, an insert longer than MAX_VIDEO_DURATION_MS, or asset_offset_ms not within the asset' },
  422: { description: 'end_ms <= start_ms, a value out of range, or asset fields on an edit that is not an asset edit' },
};

/** The active run's edits, and the user's manual and asset edits. */
export function registerEditRoutes(router: AppRouter, edits: EditService): void {
  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/edits/',
    summary: "The active run's edits in timeline order (active_only: only those that apply).",
    tags: ['edits'],
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams,
    query: EditsQuery,
    responses: { 200: { description: 'Edits', schema: listSchema(EditRead) }, 404: { description: 'No such project of the caller' } },
    handler: async (ctx, { params, query, caller, em }) => {
      ctx.body = listOf((await edits.list(em, caller.user.id, params.project_uuid, query.active_only)).map(editRead));
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/edits/',
    summary: "Adds a manual cut or an asset (overlay, replace, insert, audio) to the project's active run.",
    tags: ['edits'],
    access: 'session',
    scope: 'write',
    params: ProjectUuidParams,
    body: EditCreate,
    responses: {
      201: { description: 'The edit', schema: EditRead },
      ...bounds,
      404: { description: "No such project of the caller, or the asset's media item is not the caller's" },
      409: { description: 'TooManyEdits: the project already holds 500 manual and asset edits' },
    },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.status = 201;
      ctx.body = editRead(await edits.create(em, caller.user.id, params.project_uuid, body));
    },
  });

  router.add({
    method: 'patch',
    path: '/api/v1/edits/{edit_uuid}',
    summary: 'Changes an edit, judged as it would be after the change (turning an insert into an overlay or replace must also bring end_ms within the timeline).',
    tags: ['edits'],
    access: 'session',
    scope: 'write',
    params: EditUuidParams,
    body: EditPatch,
    responses: {
      200: { description: 'The edit', schema: EditRead },
      ...bounds,
      404: { description: "No such edit of the caller, or the new asset's media item is not the caller's" },
      409: { description: 'The new media_item_id is not uploaded yet (pending, processing or failed)' },
    },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = editRead(await edits.update(em, caller.user.id, params.edit_uuid, body));
    },
  });

  router.add({
    method: 'delete',
    path: '/api/v1/edits/{edit_uuid}',
    summary: 'Deletes a manual or asset edit (204). An edit found by the analysis is not deleted but toggled inactive, and answered (200).',
    tags: ['edits'],
    access: 'session',
    scope: 'write',
    params: EditUuidParams,
    responses: {
      200: { description: 'An edit found by the analysis, now inactive', schema: EditRead },
      204: { description: 'A manual or asset edit, deleted' },
      404: { description: 'No such edit of the caller' },
    },
    handler: async (ctx, { params, caller, em }) => {
      const outcome = await edits.remove(em, caller.user.id, params.edit_uuid);
      if (outcome.deleted) ctx.status = 204;
      else ctx.body = editRead(outcome.edit);
    },
  });
}
