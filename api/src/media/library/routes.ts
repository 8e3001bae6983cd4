import { z } from 'zod';
import { requireAuth, type AppRouter } from '../../accounts/guards.ts';
import { mediaScopes } from '../entities.ts';
import type { MediaLibrary } from './library-service.ts';
import { pageOf, pageQuery, pageSchema } from '../../http/pagination.ts';
import { MediaItemSchema } from './read-model.ts';
import { issueKey } from '../../i18n/index.ts';

const MAX_TAGS = 50;
const MAX_TAG_LENGTH = 64;
const MAX_BEHAVIOR_DEFAULTS_BYTES = 16 * 1024;

const flag = z.stringbool().optional().describe('true applies the filter; false or absent does not.');

const ListQuery = z.object({
  scope: z.enum([...mediaScopes]).optional(),
  scope_project_id: z.uuid().optional(),
  group_id: z.uuid().optional().describe('Only items that are members of this group (404 for a group that is not yours).'),
  ungrouped: flag.describe('true: only items in no group.'),
  behavior_when: z.string().min(1).max(64).optional().describe('Only items whose behavior_defaults.when equals this value.'),
  unconfigured: flag.describe('true: only items whose behavior_defaults is empty ({}).'),
  ...pageQuery,
});

export const MediaItemParams = z.object({ media_item_id: z.uuid() });

const MediaItemPatch = z
  .object({
    display_name: z.string().trim().min(1).max(255).nullable().optional(),
    tags: z.array(z.string().trim().min(1).max(MAX_TAG_LENGTH)).max(MAX_TAGS).optional(),
    behavior_defaults: z
      .record(z.string(), z.unknown())
      .refine((value) => JSON.stringify(value).length <= MAX_BEHAVIOR_DEFAULTS_BYTES, {
        error: issueKey('validation.json_at_most_bytes'),
        params: { max_bytes: MAX_BEHAVIOR_DEFAULTS_BYTES },
      })
      .optional(),
  })
  .strict();

/** GET /media (filtered, paginated), GET and PATCH /media/{media_item_id}. */
export function registerLibraryRoutes(router: AppRouter, library: MediaLibrary): void {
  router.add({
    method: 'get',
    path: '/api/v1/media',
    summary: "The caller's media items joined with file metadata, newest first.",
    tags: ['media'],
    access: 'session',
    scope: 'read',
    query: ListQuery,
    responses: {
      200: { description: 'A page of media items', schema: pageSchema(MediaItemSchema) },
      404: { description: 'group_id names no group of the caller' },
    },
    handler: async (ctx, { query, caller, em }) => {
      const { user } = caller;
      const { rows, total } = await library.list(
        em,
        user.id,
        {
          ...(query.scope ? { scope: query.scope } : {}),
          ...(query.scope_project_id ? { scopeProjectId: query.scope_project_id } : {}),
          ...(query.group_id ? { groupId: query.group_id } : {}),
          ...(query.ungrouped ? { ungrouped: true } : {}),
          ...(query.behavior_when !== undefined ? { behaviorWhen: query.behavior_when } : {}),
          ...(query.unconfigured ? { unconfigured: true } : {}),
        },
        query,
        ctx.state.locale,
      );
      ctx.body = pageOf(rows, total, query);
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/media/{media_item_id}',
    summary: 'One media item of the caller.',
    tags: ['media'],
    access: 'session',
    scope: 'read',
    params: MediaItemParams,
    responses: { 200: { description: 'The media item', schema: MediaItemSchema }, 404: { description: 'No such item of yours' } },
    handler: async (ctx, { params, caller, em }) => {
      ctx.body = await library.get(em, caller.user.id, params.media_item_id, ctx.state.locale);
    },
  });

  router.add({
    method: 'patch',
    path: '/api/v1/media/{media_item_id}',
    summary: "Changes an item's display_name, tags or behavior_defaults (each replaced whole).",
    tags: ['media'],
    access: 'session',
    scope: 'write',
    params: MediaItemParams,
    body: MediaItemPatch,
    responses: { 200: { description: 'The updated media item', schema: MediaItemSchema }, 404: { description: 'No such item of yours' } },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = await library.update(em, caller.user.id, params.media_item_id, {
        ...(body.display_name !== undefined ? { displayName: body.display_name } : {}),
        ...(body.tags !== undefined ? { tags: [...new Set(body.tags)] } : {}),
        ...(body.behavior_defaults !== undefined ? { behaviorDefaults: body.behavior_defaults } : {}),
      }, ctx.state.locale);
    },
  });
}
