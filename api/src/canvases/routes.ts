import { z } from 'zod';
import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import { editRead } from '../edits/schemas.ts';
import { listOf, listSchema } from '../http/pagination.ts';
import type { ProjectService } from '../projects/service.ts';
import { ProjectUuidParams } from '../projects/schemas.ts';
import { CanvasEditor, type ChangeOutcome } from './editor.ts';
import { canvasesOf, canvasOf, mediaOf, spineOf } from './spine.ts';
import { mediaFileStatuses, proxyStatuses } from '../media/entities.ts';
import {
  CanvasCreate,
  CanvasDeleteQuery,
  CanvasDeleteResult,
  CanvasLayout,
  CanvasMerge,
  CanvasMergeResult,
  CanvasPatch,
  CanvasRead,
  canvasRead,
  CanvasReorder,
  CanvasReorderResult,
  CanvasSplit,
  CanvasSplitResult,
  CanvasSwap,
  CanvasUuidParams,
  type CanvasMutationResult,
} from './schemas.ts';

const SpineItem = z
  .object({
    canvas_uuid: z.uuid(),
    sequence_position: z.number().int(),
    media_item_id: z.uuid(),
    media_file_id: z.uuid(),
    display_name: z.string().nullable(),
    status: z.enum(['pending', 'processing', 'uploaded', 'failed']),
    content_type: z.string(),
    kind: z.string().nullable(),
    duration_ms: z.number().int().nullable(),
    has_audio: z.boolean(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    proxy_status: z.enum(proxyStatuses),
  })
  .meta({ id: 'SpineItem' });

/** A file's state as item read models show it: MULTIPART_INITIATED is still pending. */
function itemStatus(status: (typeof mediaFileStatuses)[number]): z.infer<typeof SpineItem>['status'] {
  return status === 'MULTIPART_INITIATED' ? 'pending' : (status.toLowerCase() as z.infer<typeof SpineItem>['status']);
}

/** Routes of the project's canvases and its media spine: the reads, then the structural editor. */
export function registerCanvasRoutes(router: AppRouter, projects: ProjectService): void {
  registerSplitMergeRoutes(router, projects);
  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/spine',
    summary: 'The media spine: SINGLE canvases with their CANVAS_FILL media and its static file metadata, in sequence order.',
    tags: ['canvases'],
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams,
    responses: { 200: { description: 'Spine items', schema: listSchema(SpineItem) } },
    handler: async (ctx, { params, caller, em }) => {
      const project = await projects.owned(em, caller.user.id, params.project_uuid);
      ctx.body = listOf((await spineOf(em, project.id)).map(({ canvas, fill }) => {
        const file = fill.item.file;
        return {
          canvas_uuid: canvas.id,
          sequence_position: canvas.sequencePosition,
          media_item_id: fill.item.id,
          media_file_id: fill.item.uploadedFileId ?? file.id,
          display_name: fill.item.displayName ?? null,
          status: itemStatus(file.status),
          content_type: file.contentType,
          kind: file.kind ?? null,
          duration_ms: file.durationMs ?? null,
          has_audio: file.hasAudio,
          width: file.width ?? null,
          height: file.height ?? null,
          proxy_status: file.proxyStatus,
        };
      }));
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/canvases',
    summary: "The project's canvases in sequence order.",
    tags: ['canvases'],
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams,
    responses: { 200: { description: 'Canvases', schema: listSchema(CanvasRead) } },
    handler: async (ctx, { params, caller, em }) => {
      const project = await projects.owned(em, caller.user.id, params.project_uuid);
      const canvases = await canvasesOf(em, project.id);
      const media = await mediaOf(em, canvases);
      ctx.body = listOf(canvases.map((canvas) => canvasRead(canvas, media.get(canvas.id) ?? [])));
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/canvases/{canvas_uuid}',
    summary: 'One canvas of the project.',
    tags: ['canvases'],
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams.extend({ canvas_uuid: z.uuid() }),
    responses: { 200: { description: 'The canvas', schema: CanvasRead }, 404: { description: 'No such canvas in a project of the caller' } },
    handler: async (ctx, { params, caller, em }) => {
      const project = await projects.owned(em, caller.user.id, params.project_uuid);
      const canvas = await canvasOf(em, project.id, params.canvas_uuid);
      ctx.body = canvasRead(canvas, (await mediaOf(em, [canvas])).get(canvas.id) ?? []);
    },
  });

  registerCanvasEditorRoutes(router, projects);
}

const tags = ['canvases'];
const CanvasParams = ProjectUuidParams.extend(CanvasUuidParams.shape);
const notFound = { description: 'No such project (or canvas) of the caller' };

function mutationResult(outcome: ChangeOutcome): CanvasMutationResult {
  return {
    canvases: outcome.canvases.map((canvas) => canvasRead(canvas, outcome.media.get(canvas.id) ?? [])),
    removed_canvas_uuids: outcome.removed,
    edits: outcome.moved.map(editRead),
    stranded_edits: outcome.stranded.map(editRead),
  };
}

/** The canvas a create or PATCH produced, as CanvasRead. */
function subjectOf(outcome: ChangeOutcome): z.infer<typeof CanvasRead> {
  const canvas = outcome.subject!;
  return canvasRead(canvas, outcome.media.get(canvas.id) ?? []);
}

/** The structural editor's routes: layout, swap, reorder, delete, create, PATCH. */
function registerCanvasEditorRoutes(router: AppRouter, projects: ProjectService): void {
  const editor = new CanvasEditor(projects);

  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/canvases/layout',
    summary: 'Applies a SPLIT or TALKING_HEAD layout: always 422 LayoutNotRenderable, because these types cannot yet be rendered.',
    tags,
    access: 'session',
    scope: 'write',
    params: ProjectUuidParams,
    body: CanvasLayout,
    responses: { 404: notFound, 422: { description: 'LayoutNotRenderable (always), or ValidationError' } },
    handler: async (ctx, { params, body, caller, em }) => {
      await editor.layout(em, caller.user.id, params.project_uuid, body.canvas_type);
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/canvases/swap',
    summary: 'Swaps two adjacent non-INSERT canvases; edits lying on one of them move with it.',
    tags,
    access: 'session',
    scope: 'write',
    params: ProjectUuidParams,
    body: CanvasSwap,
    responses: { 200: { description: 'The moved canvases and edits', schema: CanvasReorderResult }, 404: notFound, 422: { description: 'The same canvas, an INSERT, or not adjacent' } },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = mutationResult(await editor.swap(em, caller.user.id, params.project_uuid, body.canvas_a_uuid, body.canvas_b_uuid));
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/canvases/{canvas_uuid}/reorder',
    summary: 'Moves an INSERT canvas to new_sequence_position (0..n-1); edits lying on a moved canvas move with it.',
    tags,
    access: 'session',
    scope: 'write',
    params: CanvasParams,
    body: CanvasReorder,
    responses: { 200: { description: 'The moved canvases and edits', schema: CanvasReorderResult }, 404: notFound, 422: { description: 'Not an INSERT canvas, or a position beyond n-1' } },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = mutationResult(await editor.reorder(em, caller.user.id, params.project_uuid, params.canvas_uuid, body.new_sequence_position));
    },
  });

  router.add({
    method: 'delete',
    path: '/api/v1/projects/{project_uuid}/canvases/{canvas_uuid}',
    summary: 'INSERT is dropped; SPLIT and TALKING_HEAD become SINGLE keeping the clip (keep=clip) or the co-star (keep=asset); TALKING_HEAD requires keep.',
    tags,
    access: 'session',
    scope: 'write',
    params: CanvasParams,
    query: CanvasDeleteQuery,
    responses: {
      200: { description: 'The changed canvases and edits', schema: CanvasDeleteResult },
      404: notFound,
      409: { description: 'CanvasNotDeletable: a SINGLE (remove its media item instead) or GRID canvas' },
      422: { description: 'TALKING_HEAD without keep' },
    },
    handler: async (ctx, { params, query, caller, em }) => {
      ctx.body = mutationResult(await editor.remove(em, caller.user.id, params.project_uuid, params.canvas_uuid, query.keep));
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/canvases',
    summary: 'Inserts an INSERT canvas playing a media item of the caller at sequence_position (default the end).',
    tags,
    access: 'session',
    scope: 'write',
    params: ProjectUuidParams,
    body: CanvasCreate,
    responses: {
      201: { description: 'The canvas', schema: CanvasRead },
      404: { description: 'No such project or media item of the caller' },
      409: { description: 'TooManyCanvases: the project already holds 200 canvases' },
      422: { description: 'ValidationError (duration_ms at most 600000)' },
    },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = subjectOf(await editor.create(em, caller.user.id, params.project_uuid, body));
      ctx.status = 201;
    },
  });

  router.add({
    method: 'patch',
    path: '/api/v1/projects/{project_uuid}/canvases/{canvas_uuid}',
    summary: 'Changes params (INSERT, or a SINGLE canvas playing an image: duration_ms), crop, aspect, letterbox or flags.',
    tags,
    access: 'session',
    scope: 'write',
    params: CanvasParams,
    body: CanvasPatch,
    responses: { 200: { description: 'The canvas', schema: CanvasRead }, 404: notFound, 422: { description: 'ValidationError' } },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = subjectOf(await editor.update(em, caller.user.id, params.project_uuid, params.canvas_uuid, body));
    },
  });
}

/**
 * Split and merge: they give SINGLE canvases a source range (params.source_start_ms and
 * source_end_ms), which the timeline, the analysis input and the kept segments read.
 */
function registerSplitMergeRoutes(router: AppRouter, projects: ProjectService): void {
  const editor = new CanvasEditor(projects);

  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/canvases/{canvas_uuid}/split',
    summary: 'Splits a SINGLE canvas at source time p into two contiguous canvases on the same source.',
    tags,
    access: 'session',
    scope: 'write',
    params: CanvasParams,
    body: CanvasSplit,
    responses: {
      200: { description: 'The two canvases and those renumbered', schema: CanvasSplitResult },
      404: notFound,
      409: { description: "SourceDurationUnknown: the source's duration is not known yet; TooManyCanvases: the project already holds 200 canvases" },
      422: { description: 'Not a SINGLE canvas, or p not strictly inside its source range' },
    },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = mutationResult(await editor.split(em, caller.user.id, params.project_uuid, params.canvas_uuid, body.p));
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/projects/{project_uuid}/canvases/{canvas_uuid}/merge',
    summary: 'Merges a SINGLE canvas with its SINGLE neighbour playing the contiguous stretch of the same source.',
    tags,
    access: 'session',
    scope: 'write',
    params: CanvasParams,
    body: CanvasMerge,
    responses: { 200: { description: 'The merged canvas and those renumbered', schema: CanvasMergeResult }, 404: notFound, 422: { description: 'No neighbour, not two SINGLE canvases, or not contiguous on one source' } },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = mutationResult(await editor.merge(em, caller.user.id, params.project_uuid, params.canvas_uuid, body.direction));
    },
  });
}
