import { defineEntity, p } from '@mikro-orm/core';
import { User } from '../accounts/entities.ts';

/**
 * A named API key of a user. Only the SHA-256 of the key is kept (`keyHash`): the key is
 * 256 random bits, so no guessing can walk back from the hash and no slow hash is needed.
 * `prefix` is the part shown in listings to tell keys apart. Revoked keys stay (listed with
 * `revokedAt`); every key goes with its user.
 */
export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.uuid().primary(),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    name: p.string().length(100),
    prefix: p.string().length(32),
    keyHash: p.string().length(64).unique(),
    scopes: p.array(),
    createdAt: p.datetime(),
    lastUsedAt: p.datetime().nullable(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});

export type ApiKeyRow = InstanceType<typeof ApiKey.class>;
