import { z } from 'zod';
import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import type { ResponseSpec } from '../http/router.ts';
import { listOf, listSchema } from '../http/pagination.ts';
import { PresetParams } from './schemas.ts';
import type { PresetRow, UserPresets } from './service.ts';

/** One kind of preset as HTTP: its path, its request and response schemas, and how a body becomes row properties. */
export interface PresetResource<Row extends PresetRow, Fields extends object> {
  /** `/api/v1/users/me/presets`; the item is `{path}/{preset_uuid}`. */
  path: string;
  /** In the product's words, for the summaries: `analysis preset`. */
  noun: string;
  presets: UserPresets<Row>;
  read: z.ZodType;
  /** POST: every field, some with defaults. */
  create: z.ZodType<Fields>;
  /** PATCH: any of the fields. */
  patch: z.ZodType<Partial<Fields>>;
  properties: (body: Partial<Fields>) => Partial<Row>;
  view: (row: Row) => unknown;
  /** What only some kinds answer (the analysis presets' limit). */
  createResponses?: Record<number, ResponseSpec>;
}

/** GET and POST on the collection, PATCH and DELETE on one preset: the same four routes for every kind. */
export function registerPresetRoutes<Row extends PresetRow, Fields extends object>(
  router: AppRouter,
  resource: PresetResource<Row, Fields>,
): void {
  const { path, noun, presets, view } = resource;
  const tags = ['presets'];
  const notFound = { 404: { description: `No such ${noun} of yours` } };
  const order = presets.hasDefault ? 'the default first, then oldest first' : 'oldest first';

  router.add({
    method: 'get',
    path,
    summary: `The caller's ${noun}s, ${order}.`,
    tags,
    access: 'session',
    scope: 'read',
    responses: { 200: { description: `Every ${noun} of the caller`, schema: listSchema(resource.read) } },
    handler: async (ctx, { caller, em }) => {
      ctx.body = listOf((await presets.list(em, caller.user.id)).map(view));
    },
  });

  router.add({
    method: 'post',
    path,
    summary: `Creates a ${noun}.`,
    tags,
    access: 'session',
    scope: 'write',
    body: resource.create,
    responses: { 201: { description: `The ${noun}`, schema: resource.read }, ...resource.createResponses },
    handler: async (ctx, { body, caller, em }) => {
      const preset = await presets.create(em, caller.user.id, resource.properties(body));
      ctx.status = 201;
      ctx.body = view(preset);
    },
  });

  router.add({
    method: 'patch',
    path: `${path}/{preset_uuid}`,
    summary: `Changes any fields of a ${noun}.`,
    tags,
    access: 'session',
    scope: 'write',
    params: PresetParams,
    body: resource.patch,
    responses: { 200: { description: `The ${noun}`, schema: resource.read }, ...notFound },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = view(await presets.update(em, caller.user.id, params.preset_uuid, resource.properties(body)));
    },
  });

  router.add({
    method: 'delete',
    path: `${path}/{preset_uuid}`,
    summary: `Deletes a ${noun}.`,
    tags,
    access: 'session',
    scope: 'write',
    params: PresetParams,
    responses: { 204: { description: 'Deleted' }, ...notFound },
    handler: async (ctx, { params, caller, em }) => {
      await presets.delete(em, caller.user.id, params.preset_uuid);
      ctx.status = 204;
    },
  });
}
