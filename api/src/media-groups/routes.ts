import { z } from 'zod';
import { requireAuth, type AppRouter } from '../accounts/guards.ts';
import { pageOf, pageQuery, pageSchema } from '../http/pagination.ts';
import type { GroupFields, MediaGroups } from './groups-service.ts';

const GroupSchema = z
  .object({
    uuid: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    default_instructions: z.string().nullable(),
    is_default: z.boolean(),
    is_pinned: z.boolean(),
    display_order: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'MediaGroup' });

const MembershipSchema = z.object({ media_group_id: z.uuid(), media_item_id: z.uuid(), created_at: z.string() }).meta({ id: 'MediaGroupMembership' });

const fields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable().optional(),
  default_instructions: z.string().max(4000).nullable().optional(),
  is_default: z.boolean().optional().describe('At most one group per user is the default: setting it clears the others.'),
  is_pinned: z.boolean().optional(),
  display_order: z.number().int().min(0).max(1_000_000).optional().describe('Ascending; a new group goes last unless given.'),
};
const GroupCreate = z.object(fields).strict();
const GroupPatch = z.object({ ...fields, name: fields.name.optional() }).strict();
const GroupParams = z.object({ group_id: z.uuid() });
const MembershipParams = z.object({ media_item_id: z.uuid(), group_id: z.uuid() });

function groupFields(body: z.infer<typeof GroupPatch>): GroupFields {
  return {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.default_instructions !== undefined ? { defaultInstructions: body.default_instructions } : {}),
    ...(body.is_default !== undefined ? { isDefault: body.is_default } : {}),
    ...(body.is_pinned !== undefined ? { isPinned: body.is_pinned } : {}),
    ...(body.display_order !== undefined ? { displayOrder: body.display_order } : {}),
  };
}

/** Media groups CRUD and memberships of media items. */
export function registerMediaGroupRoutes(router: AppRouter, groups: MediaGroups): void {
  const tags = ['media groups'];
  router.add({
    method: 'get',
    path: '/api/v1/media-groups',
    summary: "The caller's media groups: pinned first, then by display_order.",
    tags,
    access: 'session',
    scope: 'read',
    query: z.object(pageQuery),
    responses: { 200: { description: 'A page of groups', schema: pageSchema(GroupSchema) } },
    handler: async (ctx, { query, caller, em }) => {
      const { rows, total } = await groups.list(em, caller.user.id, query);
      ctx.body = pageOf(rows, total, query);
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/media-groups',
    summary: 'Creates a media group.',
    tags,
    access: 'session',
    scope: 'write',
    body: GroupCreate,
    responses: { 201: { description: 'The group', schema: GroupSchema } },
    handler: async (ctx, { body, caller, em }) => {
      ctx.status = 201;
      ctx.body = await groups.create(em, caller.user.id, { ...groupFields(body), name: body.name });
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/media-groups/{group_id}',
    summary: 'One media group of the caller.',
    tags,
    access: 'session',
    scope: 'read',
    params: GroupParams,
    responses: { 200: { description: 'The group', schema: GroupSchema }, 404: { description: 'No such group of yours' } },
    handler: async (ctx, { params, caller, em }) => {
      ctx.body = await groups.get(em, caller.user.id, params.group_id);
    },
  });

  router.add({
    method: 'patch',
    path: '/api/v1/media-groups/{group_id}',
    summary: "Changes a group's fields.",
    tags,
    access: 'session',
    scope: 'write',
    params: GroupParams,
    body: GroupPatch,
    responses: { 200: { description: 'The group', schema: GroupSchema }, 404: { description: 'No such group of yours' } },
    handler: async (ctx, { params, body, caller, em }) => {
      ctx.body = await groups.update(em, caller.user.id, params.group_id, groupFields(body));
    },
  });

  router.add({
    method: 'delete',
    path: '/api/v1/media-groups/{group_id}',
    summary: 'Deletes a group; its items stay, without the membership.',
    tags,
    access: 'session',
    scope: 'write',
    params: GroupParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such group of yours' } },
    handler: async (ctx, { params, caller, em }) => {
      await groups.delete(em, caller.user.id, params.group_id);
      ctx.status = 204;
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/media/{media_item_id}/groups/{group_id}',
    summary: 'Puts a media item in a group (201, also when it already was there: the membership exists either way).',
    tags,
    access: 'session',
    scope: 'write',
    params: MembershipParams,
    responses: {
      201: { description: 'The membership', schema: MembershipSchema },
      404: { description: 'No such item or group of yours' },
    },
    handler: async (ctx, { params, caller, em }) => {
      const { membership } = await groups.addItem(em, caller.user.id, params.media_item_id, params.group_id);
      ctx.status = 201;
      ctx.body = membership;
    },
  });

  router.add({
    method: 'delete',
    path: '/api/v1/media/{media_item_id}/groups/{group_id}',
    summary: 'Takes a media item out of a group (204 also when it was not in it).',
    tags,
    access: 'session',
    scope: 'write',
    params: MembershipParams,
    responses: { 204: { description: 'Removed, or was not a member' }, 404: { description: 'No such item or group of yours' } },
    handler: async (ctx, { params, caller, em }) => {
      await groups.removeItem(em, caller.user.id, params.media_item_id, params.group_id);
      ctx.status = 204;
    },
  });
}
