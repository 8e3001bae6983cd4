import { defineEntity, p } from '@mikro-orm/core';
import { User } from '../accounts/entities.ts';

/**
 * One Idempotency-Key of one user: the request it was first used for (a hash of its
 * canonical form), the lease of the request still running under it, then the response
 * it answered, replayed for 24 hours. The primary key resolves concurrent first uses
 * across api replicas: one insert wins, the others see its row.
 */
export const IdempotencyKey = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  properties: {
    user: () => p.manyToOne(User).primary().deleteRule('cascade').fieldName('user_id'),
    key: p.string().length(255).primary(),
    /** SHA-256 (hex) of the canonical method, route template, path parameters, query and body. */
    requestHash: p.string().length(64),
    method: p.string().length(8),
    route: p.string().length(255),
    /** The running request's own token: only it may complete or release the key. */
    leaseToken: p.uuid(),
    /** Until then the request counts as running; past it (a crashed replica) the next request with the same key takes over. */
    leaseExpiresAt: p.datetime(),
    /** Null while the request runs. */
    responseStatus: p.integer().nullable(),
    responseHeaders: p.json<Record<string, string>>().nullable(),
    /** The body as sent (JSON text); null for a body-less answer or one over the stored size cap. */
    responseBody: p.text().nullable(),
    /** The response was too large to keep: the key stays used, but a replay cannot repeat it. */
    responseOmitted: p.boolean().default(false),
    createdAt: p.datetime().index(),
  },
});

export type IdempotencyKeyRow = InstanceType<typeof IdempotencyKey.class>;
