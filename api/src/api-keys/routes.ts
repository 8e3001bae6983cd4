import { z } from 'zod';
import type { AppRouter } from '../accounts/guards.ts';
import { pageOf, pageQuery } from '../http/pagination.ts';
import type { ApiKeys } from './service.ts';
import { ApiKeyCreate, ApiKeyCreated, ApiKeyIdParams, ApiKeyPage } from './schemas.ts';

const PATH = '/api/v1/users/me/api-keys';
const tags = ['api-keys'];

/** The user's API keys: made, listed and revoked from a cookie session only (a key cannot mint or revoke keys). */
export function registerApiKeyRoutes(router: AppRouter, keys: ApiKeys): void {
  router.add({
    method: 'post',
    path: PATH,
    summary: 'Makes a named API key with the given scopes and optional expiry; the answer shows the key, once.',
    tags,
    access: 'session-only',
    idempotent: { withheld: ['key'] },
    body: ApiKeyCreate,
    responses: {
      201: { description: 'The key (in `key`, never shown again) and its record', schema: ApiKeyCreated },
      403: { description: 'Called with an API key: keys are managed from a signed-in session' },
      409: { description: 'The user holds API_KEYS_MAX_PER_USER live keys already' },
      422: { description: 'Invalid name or scopes, or expires_at not in the future' },
    },
    handler: async (ctx, { body, caller, em }) => {
      const { user } = caller;
      const expiresAt = body.expires_at === undefined ? undefined : new Date(body.expires_at);
      const { key, view } = await keys.create(em, user.id, { name: body.name, scopes: body.scopes, expiresAt });
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 201;
      ctx.body = { ...view, key };
    },
  });

  router.add({
    method: 'get',
    path: PATH,
    summary: "The user's API keys, newest first, revoked and expired ones included (never the keys themselves).",
    tags,
    access: 'session-only',
    query: z.object(pageQuery),
    responses: { 200: { description: 'A page of keys', schema: ApiKeyPage } },
    handler: async (ctx, { query, caller, em }) => {
      const { rows, total } = await keys.list(em, caller.user.id, query);
      ctx.body = pageOf(rows, total, query);
    },
  });

  router.add({
    method: 'delete',
    path: `${PATH}/{api_key_id}`,
    summary: 'Revokes the key: from now on it is refused (401). Revoking it again changes nothing.',
    tags,
    access: 'session-only',
    params: ApiKeyIdParams,
    responses: { 204: { description: 'Revoked' }, 404: { description: "No such key of the user's" } },
    handler: async (ctx, { params, caller, em }) => {
      await keys.revoke(em, caller.user.id, params.api_key_id);
      ctx.status = 204;
    },
  });
}
