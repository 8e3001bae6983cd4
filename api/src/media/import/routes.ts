import { requireAuth, type AppRouter } from '../../accounts/guards.ts';
import { ImportAccepted, ImportRequest, type MediaImportService } from './import-service.ts';

/** POST /media/videohost (superusers). */
export function registerMediaImportRoutes(router: AppRouter, imports: MediaImportService): void {
  router.add({
    method: 'post',
    path: '/api/v1/media/videohost',
    summary: 'Imports an external (Mux) video: metadata now, the download and processing as a job; reuses a file with the same external id.',
    tags: ['media'],
    access: 'superuser',
    scope: 'write',
    body: ImportRequest,
    responses: {
      202: { description: 'Queued, or deduplicated onto the existing file (no new download)', schema: ImportAccepted },
      403: { description: 'Not a superuser' },
      404: { description: 'scope_project_id is not a project of the caller' },
      422: { description: 'Unsupported URL, metadata unavailable, or longer than MAX_EXTERNAL_VIDEO_DURATION_SECONDS' },
    },
    handler: async (ctx, { body, caller, em }) => {
      ctx.status = 202;
      ctx.body = await imports.importVideo(em, caller.user.id, body);
    },
  });
}
