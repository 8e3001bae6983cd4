import { z } from 'zod';
import { requireAuth } from '../accounts/guards.ts';
import type { ApiRouter } from '../http/router.ts';
import type { ProjectService } from '../projects/service.ts';
import { ProjectUuidParams } from '../projects/schemas.ts';
import { canvasTypes, type CanvasMediaRow, type CanvasRow } from './entities.ts';
import { canvasesOf, canvasOf, mediaOf, spineOf } from './spine.ts';
import { canvasMediaRoles } from './entities.ts';
import { mediaFileStatuses, proxyStatuses } from '../media/entities.ts';

const CanvasRead = z
  .object({
    uuid: z.uuid(),
    project_id: z.uuid(),
    type: z.enum(canvasTypes),
    sequence_position: z.number().int(),
    params: z.record(z.string(), z.unknown()),
    crop: z.record(z.string(), z.unknown()).nullable(),
    aspect: z.string().nullable(),
    letterbox: z.record(z.string(), z.unknown()).nullable(),
    flags: z.record(z.string(), z.boolean()),
    media: z.array(z.object({ media_item_id: z.uuid(), role: z.enum(canvasMediaRoles) })),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'CanvasRead' });

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
export function itemStatus(status: (typeof mediaFileStatuses)[number]): z.infer<typeof SpineItem>['status'] {
  return status === 'MULTIPART_INITIATED' ? 'pending' : (status.toLowerCase() as z.infer<typeof SpineItem>['status']);
}

function canvasRead(canvas: CanvasRow, media: CanvasMediaRow[]): z.infer<typeof CanvasRead> {
  return {
    uuid: canvas.id,
    project_id: canvas.project.id,
    type: canvas.type,
    sequence_position: canvas.sequencePosition,
    params: canvas.params,
    crop: canvas.crop ?? null,
    aspect: canvas.aspect ?? null,
    letterbox: canvas.letterbox ?? null,
    flags: canvas.flags,
    media: media.map((row) => ({ media_item_id: row.item.id, role: row.role })),
    created_at: canvas.createdAt.toISOString(),
    updated_at: canvas.updatedAt.toISOString(),
  };
}

/** Read routes of the project's canvases and its media spine. */
export function registerCanvasRoutes(router: ApiRouter, projects: ProjectService): void {
  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/spine',
    summary: 'The media spine: SINGLE canvases with their CANVAS_FILL media and its static file metadata, in sequence order.',
    tags: ['canvases'],
    access: 'session',
    params: ProjectUuidParams,
    responses: { 200: { description: 'Spine items', schema: z.array(SpineItem) } },
    handler: async (ctx, { params }) => {
      const project = await projects.owned(ctx.state.em, requireAuth(ctx).user.id, params.project_uuid);
      ctx.body = (await spineOf(ctx.state.em, project.id)).map(({ canvas, fill }) => {
        const file = fill.item.file;
        return {
          canvas_uuid: canvas.id,
          sequence_position: canvas.sequencePosition,
          media_item_id: fill.item.id,
          media_file_id: file.id,
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
      });
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/canvases',
    summary: "The project's canvases in sequence order.",
    tags: ['canvases'],
    access: 'session',
    params: ProjectUuidParams,
    responses: { 200: { description: 'Canvases', schema: z.array(CanvasRead) } },
    handler: async (ctx, { params }) => {
      const project = await projects.owned(ctx.state.em, requireAuth(ctx).user.id, params.project_uuid);
      const canvases = await canvasesOf(ctx.state.em, project.id);
      const media = await mediaOf(ctx.state.em, canvases);
      ctx.body = canvases.map((canvas) => canvasRead(canvas, media.get(canvas.id) ?? []));
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/canvases/{canvas_uuid}',
    summary: 'One canvas of the project.',
    tags: ['canvases'],
    access: 'session',
    params: ProjectUuidParams.extend({ canvas_uuid: z.uuid() }),
    responses: { 200: { description: 'The canvas', schema: CanvasRead }, 404: { description: 'No such canvas in a project of the caller' } },
    handler: async (ctx, { params }) => {
      const project = await projects.owned(ctx.state.em, requireAuth(ctx).user.id, params.project_uuid);
      const canvas = await canvasOf(ctx.state.em, project.id, params.canvas_uuid);
      ctx.body = canvasRead(canvas, (await mediaOf(ctx.state.em, [canvas])).get(canvas.id) ?? []);
    },
  });
}
