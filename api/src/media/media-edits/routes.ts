import { z } from 'zod';
import { requireAuth, type AppRouter } from '../../accounts/guards.ts';
import { EditAccepted, EditRequest, type MediaEditService } from './edit-service.ts';

const MediaItemParams = z.object({ media_item_id: z.uuid() });

/** POST /media/{media_item_id}/edit. */
export function registerMediaEditRoutes(router: AppRouter, edits: MediaEditService): void {
  router.add({
    method: 'post',
    path: '/api/v1/media/{media_item_id}/edit',
    summary: 'Trims, cuts or extracts the audio of a library item as a job; the edited item is pending, then uploaded (media_ready).',
    tags: ['media'],
    access: 'session',
    scope: 'write',
    params: MediaItemParams,
    body: EditRequest,
    responses: {
      202: { description: 'Queued: copy → the new item; replace → this item, which reads pending until the edit settles and is repointed when it is ready', schema: EditAccepted },
      404: { description: 'No such item of yours' },
      409: { description: 'The source file is not uploaded yet (pending, processing or failed), or (replace) an edit replacing this item is still pending' },
      422: { description: 'Project-scoped item, or bounds: start/end/cut end beyond duration_ms, end <= start, a cut end <= its start, cuts removing everything' },
    },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.status = 202;
      ctx.body = await edits.requestEdit(em, caller.user.id, params.media_item_id, body);
    },
  });
}
