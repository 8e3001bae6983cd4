import { z } from 'zod';
import { pageSchema } from '../http/pagination.ts';
import { API_KEY_PREFIX, API_KEY_SCOPES } from './service.ts';

const Scope = z.enum(API_KEY_SCOPES).describe('read: GET and HEAD; write: every other method; billing: plans and payments (/payments/…, /users/me/billing, /users/me/activate-trial).');

export const ApiKeyCreate = z.strictObject({
  name: z.string().trim().min(1).max(100).describe('What the key is for, e.g. "CMS import".'),
  scopes: z.array(Scope).min(1).max(API_KEY_SCOPES.length),
  expires_at: z.iso.datetime({ offset: true }).optional().describe('When the key stops working (ISO 8601, in the future); none: it works until revoked.'),
});

export const ApiKeyIdParams = z.object({ api_key_id: z.uuid() });

export const ApiKeyRead = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().describe(`The key's first characters (${API_KEY_PREFIX} and 8 more), to tell keys apart.`),
    scopes: z.array(Scope),
    created_at: z.string(),
    last_used_at: z.string().nullable().describe('Within a minute.'),
    expires_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  })
  .meta({ id: 'ApiKey' });

export const ApiKeyCreated = ApiKeyRead.extend({
  key: z.string().nullable().describe(`The key itself (${API_KEY_PREFIX}…): shown this once, stored only as its hash. Send it as \`Authorization: Bearer <key>\`. null only in a replay of an Idempotency-Key request (the key is never kept for replays).`),
}).meta({ id: 'ApiKeyCreated' });

export const ApiKeyPage = pageSchema(ApiKeyRead, 'ApiKeyPage');
