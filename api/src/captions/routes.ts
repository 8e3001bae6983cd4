import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import { pageOf } from '../http/pagination.ts';
import { translate } from '../i18n/index.ts';
import { ProjectUuidParams } from '../projects/schemas.ts';
import { CaptionLineRead, CaptionLinePage, CaptionLineParams, CaptionLinePatch, CaptionListQuery, captionLineRead, GenerateQuery, GenerateResult } from './schemas.ts';
import type { CaptionLines } from './service.ts';

/** Caption lines of the project's active analysis run: generate, list, edit a line's text. */
export function registerCaptionRoutes(router: AppRouter, captions: CaptionLines): void {
  const tags = ['captions'];
  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/caption-lines/generate',
    summary: "Makes the active run's caption lines from its transcript words: at most max_words words a line, broken at sentence ends, punctuation and pauses, never across a cut; words inside active cuts are not captioned. Without force, existing lines are kept.",
    tags,
    access: 'session',
    scope: 'write',
    params: ProjectUuidParams,
    query: GenerateQuery,
    responses: {
      200: { description: 'What was done (lines_created is 0 when existing lines were kept)', schema: GenerateResult },
      404: { description: 'No such project of the caller' },
      409: { description: 'The project has no completed analysis run' },
      422: { description: 'max_words outside 2–20, or force not true/false' },
    },
    handler: async (ctx, { params, query, caller, em }) => {
      const result = await captions.generate(em, caller.user.id, params.project_uuid, { maxWords: query.max_words, force: query.force });
      ctx.body = {
        project_uuid: params.project_uuid,
        lines_created: result.created,
        message: translate(ctx.state.locale, result.kept ? 'caption.kept' : 'caption.generated', { count: result.total }),
      };
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/caption-lines',
    summary: "The active run's caption lines, ordered by sequence.",
    tags,
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams,
    query: CaptionListQuery,
    responses: { 200: { description: 'A page of lines', schema: CaptionLinePage }, 404: { description: 'No such project of the caller' } },
    handler: async (ctx, { params, query, caller, em }) => {
      const { rows, total } = await captions.list(em, caller.user.id, params.project_uuid, query);
      ctx.body = pageOf(rows.map(captionLineRead), total, query);
    },
  });

  router.add({
    method: 'patch',
    path: '/api/v1/caption-lines/{caption_line_uuid}',
    summary: "Replaces a caption line's text (1–500 characters, trimmed); original_text is preserved.",
    tags,
    access: 'session',
    scope: 'write',
    params: CaptionLineParams,
    body: CaptionLinePatch,
    responses: { 200: { description: 'The line', schema: CaptionLineRead }, 404: { description: 'No such caption line of the caller' }, 422: { description: 'Empty, over 500 characters, or an unknown field' } },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = captionLineRead(await captions.editText(em, caller.user.id, params.caption_line_uuid, body.text));
    },
  });
}
