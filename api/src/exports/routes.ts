import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import { pageOf } from '../http/pagination.ts';
import { failureText } from '../i18n/job-texts.ts';
import type { Locale } from '../i18n/index.ts';
import { ProjectUuidParams } from '../projects/schemas.ts';
import type { ExportRow } from './entities.ts';
import { ExportCreate, ExportDownload, ExportPage, ExportRead, exportRead, ExportsQuery, ExportUuidParams } from './schemas.ts';
import type { ExportService } from './service.ts';

const readIn = (locale: Locale) => (row: ExportRow) => exportRead(row, row.status === 'failed' ? failureText(locale, row.errorCode, row.errorParams, row.error ?? '') || null : null);

/** Exports of a project: render (progress on the project stream), list, read, download. */
export function registerExportRoutes(router: AppRouter, exports: ExportService): void {
  const tags = ['exports'];
  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/exports/',
    summary: 'Renders the project into a video; answers at once (status queued) and reports export_started, export_progress (5, 30, 85) and export_complete or export_failed on the project stream.',
    tags,
    access: 'session',
    scope: 'write',
    params: ProjectUuidParams,
    body: ExportCreate,
    responses: {
      202: { description: 'The export, queued', schema: ExportRead },
      400: { description: 'An inline edit_overrides start_ms or end_ms beyond the timeline duration (checked once every source duration is known), or no media in the project' },
      404: { description: 'No such project of the caller, or draft_id is not a draft of this project' },
      409: {
        description:
          'A source is still processing, the cuts leave nothing, captions asked of a project never analysed, EXPORT_MAX_ACTIVE_PER_USER exports already queued or rendering, an output longer than EXPORT_MAX_OUTPUT_SECONDS (exports.too_long) or joining more than EXPORT_MAX_SEGMENTS pieces (exports.too_many_segments); the message names the limit',
      },
      422: { description: 'An unknown key or a value out of range in export_settings, end_ms <= start_ms in an override, or draft_id together with inline edit_overrides' },
    },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.status = 202;
      ctx.body = readIn(ctx.state.locale)(await exports.create(em, caller.user.id, params.project_uuid, body));
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/exports/',
    summary: "The project's exports, newest first (poll it while one is queued or rendering).",
    tags,
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams,
    query: ExportsQuery,
    responses: { 200: { description: 'A page of exports', schema: ExportPage }, 404: { description: 'No such project of the caller' } },
    handler: async (ctx, { params, query, caller, em }) => {
      const { rows, total } = await exports.list(em, caller.user.id, params.project_uuid, query);
      ctx.body = pageOf(rows.map(readIn(ctx.state.locale)), total, query);
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/exports/{export_uuid}',
    summary: 'One export: its status, settings, expiry and, once failed, why.',
    tags,
    access: 'session',
    scope: 'read',
    params: ExportUuidParams,
    responses: { 200: { description: 'The export', schema: ExportRead }, 404: { description: 'No such export of the caller' } },
    handler: async (ctx, { params, caller, em }) => {
      ctx.body = readIn(ctx.state.locale)(await exports.get(em, caller.user.id, params.export_uuid));
    },
  });

  router.add({
    method: 'delete',
    path: '/api/v1/exports/{export_uuid}',
    summary: 'Deletes an export: a render still queued or running is stopped first (its job ends failed with job.cancelled, settled once), then the export and its file are gone.',
    tags,
    access: 'session',
    scope: 'write',
    params: ExportUuidParams,
    responses: { 204: { description: 'Stopped if it was rendering, and deleted' }, 404: { description: 'No such export of the caller' } },
    handler: async (ctx, { params, caller, em }) => {
      await exports.remove(em, caller.user.id, params.export_uuid);
      ctx.status = 204;
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/exports/{export_uuid}/download',
    summary: 'A presigned download URL of a completed export, valid 3600 s, saved under `filename`.',
    tags,
    access: 'session',
    scope: 'read',
    params: ExportUuidParams,
    responses: {
      200: { description: 'The download', schema: ExportDownload },
      404: { description: 'No such export of the caller' },
      409: { description: 'Not completed yet (queued or rendering) or failed' },
      410: { description: 'Expired: past expires_at, its file deleted' },
    },
    handler: async (ctx, { params, caller, em }) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await exports.download(em, caller.user.id, params.export_uuid);
    },
  });
}
