import { requireAuth, type AppRouter } from '../../accounts/guards.ts';
import { reorderSpine } from '../../canvases/spine.ts';
import type { ProjectService } from '../../projects/service.ts';
import {
  CompleteRequest,
  MediaFileIdBody,
  MediaFileIdParams,
  MediaFileIdQuery,
  MediaFileRead,
  mediaFileRead,
  MediaItemIdParams,
  MultipartInitiateResponse,
  PartUrlsQuery,
  PartUrlsResponse,
  PresignResponse,
  ReorderRequest,
  UploadedParts,
  UploadRequest,
} from './schemas.ts';
import type { UploadService } from './service.ts';

const tags = ['media'];

/** Upload routes (single PUT and multipart), deleting an item, and reordering a project's spine. */
export function registerUploadRoutes(router: AppRouter, uploads: UploadService, projects: ProjectService): void {
  router.add({
    method: 'post',
    path: '/api/v1/media/presign',
    summary: 'Starts a single-PUT upload (declared size under MULTIPART_CUTOFF_BYTES): the item, its file (PENDING) and a presigned PUT URL.',
    tags,
    access: 'session',
    scope: 'write',
    body: UploadRequest,
    responses: {
      201: { description: 'Where to PUT the file', schema: PresignResponse },
      404: { description: 'scope_project_id is not a project of the caller' },
      409: { description: 'Already MAX_UNFINISHED_UPLOADS (10) uploads started and not finished, or the project already holds its 200 canvases (TooManyCanvases)' },
      422: { description: 'Over the per-file maximum, content type not allowed, declared size beyond the room the quota leaves (stored bytes plus the declared bytes of unfinished uploads), or multipart-sized' },
    },
    handler: async (ctx, { body, caller, em }) => {
      ctx.status = 201;
      ctx.body = await uploads.presign(em, caller.user.id, body);
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/media/{media_file_id}/confirm',
    summary: "Charges the stored object's real size against the quota, sets PROCESSING and queues the artifact job. Idempotent.",
    tags,
    access: 'session',
    scope: 'write',
    params: MediaFileIdParams,
    responses: {
      200: { description: 'The file', schema: MediaFileRead },
      400: { description: 'Nothing uploaded yet, or over quota (object deleted, file FAILED); code ValidationError' },
      409: { description: 'A multipart upload (use complete) or a FAILED file' },
    },
    handler: async (ctx, { params, caller, em }) => {
      ctx.body = mediaFileRead(await uploads.confirm(em, caller.user.id, params.media_file_id));
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/media/multipart/initiate',
    summary: 'Starts a multipart upload (declared size from MULTIPART_CUTOFF_BYTES): the item, its file (MULTIPART_INITIATED) and the first 50 part URLs.',
    tags,
    access: 'session',
    scope: 'write',
    body: UploadRequest,
    responses: {
      201: { description: 'The upload and its first part URLs', schema: MultipartInitiateResponse },
      404: { description: 'scope_project_id is not a project of the caller' },
      409: { description: 'Already MAX_UNFINISHED_UPLOADS (10) uploads started and not finished, or the project already holds its 200 canvases (TooManyCanvases)' },
      422: { description: 'Size outside [cutoff, per-file maximum], over 10,000 parts, content type not allowed, or declared size beyond the room the quota leaves (stored bytes plus the declared bytes of unfinished uploads)' },
    },
    handler: async (ctx, { body, caller, em }) => {
      ctx.status = 201;
      ctx.body = await uploads.initiate(em, caller.user.id, body);
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/media/multipart/parts',
    summary: 'Every part uploaded so far (the full list across the store’s pages).',
    tags,
    access: 'session',
    scope: 'read',
    query: MediaFileIdQuery,
    responses: {
      200: { description: 'Uploaded parts', schema: UploadedParts },
      404: { description: 'media_file_id is no upload of the caller' },
      409: { description: 'Not a multipart upload in progress' },
    },
    handler: async (ctx, { query, caller, em }) => {
      ctx.body = { uploaded_parts: await uploads.uploadedParts(em, caller.user.id, query.media_file_id) };
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/media/multipart/parts/urls',
    summary: 'Fresh part URLs for parts from_part..to_part, any range within 1..parts_count.',
    tags,
    access: 'session',
    scope: 'read',
    query: PartUrlsQuery,
    responses: {
      200: { description: 'Part URLs', schema: PartUrlsResponse },
      400: { description: 'from_part < 1, to_part > parts_count or from_part > to_part; code ValidationError' },
      404: { description: 'media_file_id is no upload of the caller' },
    },
    handler: async (ctx, { query, caller, em }) => {
      ctx.body = await uploads.freshPartUrls(em, caller.user.id, query.media_file_id, query.from_part, query.to_part);
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/media/multipart/complete',
    summary: 'Assembles the parts (ETags byte-exact, quotes included), rechecks the quota on the real size, sets PROCESSING. Idempotent.',
    tags,
    access: 'session',
    scope: 'write',
    body: CompleteRequest,
    responses: {
      200: { description: 'The file', schema: MediaFileRead },
      400: { description: 'Unknown or repeated part number, or over quota after completion (object deleted, file FAILED); code ValidationError' },
      404: { description: 'media_file_id is no upload of the caller' },
      409: { description: 'The store rejected the parts (code MultipartCompleteError), or the upload is not in progress' },
    },
    handler: async (ctx, { body, caller, em }) => {
      ctx.body = mediaFileRead(await uploads.complete(em, caller.user.id, body.media_file_id, body.parts));
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/media/multipart/abort',
    summary: 'Deletes the upload’s rows (committed first), then aborts it at the store; 204 even if the store fails.',
    tags,
    access: 'session',
    scope: 'write',
    body: MediaFileIdBody,
    responses: { 204: { description: 'Aborted' }, 404: { description: 'media_file_id is no upload of the caller' }, 409: { description: 'Not a multipart upload in progress' } },
    handler: async (ctx, { body, caller, em }) => {
      await uploads.abort(em, caller.user.id, body.media_file_id);
      ctx.status = 204;
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/media/reorder',
    summary: "Re-tiles the project's SINGLE canvases in the order of media_item_ids (every spine item exactly once).",
    tags,
    access: 'session',
    scope: 'write',
    body: ReorderRequest,
    responses: {
      204: { description: 'Reordered' },
      404: { description: 'Not a project of the caller' },
      409: { description: 'The spine is composed (a canvas other than SINGLE); code SpineComposed' },
      422: { description: 'media_item_ids does not name each spine item exactly once; code ValidationError' },
    },
    handler: async (ctx, { body, caller, em }) => {
      const project = await projects.owned(em, caller.user.id, body.project_id);
      await em.transactional((tx) => reorderSpine(tx, project.id, body.media_item_ids));
      ctx.status = 204;
    },
  });

  router.add({
    method: 'delete',
    path: '/api/v1/media/{media_item_id}',
    summary: 'Deletes the item: refunds what it was charged, removes and re-tiles its canvas, and deletes the file and its objects with the last item.',
    tags,
    access: 'session',
    scope: 'write',
    params: MediaItemIdParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such item of the caller' } },
    handler: async (ctx, { params, caller, em }) => {
      await uploads.deleteItem(em, caller.user.id, params.media_item_id);
      ctx.status = 204;
    },
  });
}
