import { defineEntity, p } from '@mikro-orm/core';

/**
 * A person with an account. `email` is stored lower-cased so uniqueness is
 * case-insensitive; `username` keeps its spelling and is unique regardless of case.
 */
export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.uuid().primary(),
    name: p.string().length(100),
    username: p.string().length(40),
    email: p.string().length(320).unique(),
    /** Null for accounts that only ever signed in through the identity provider. */
    passwordHash: p.string().length(100).nullable(),
    emailVerified: p.boolean().default(false),
    locale: p.string().length(8).default('en'),
    isSuperuser: p.boolean().default(false),
    /** Changed only by atomic SQL increments (see storage-usage.ts), never read-modify-write. */
    storageUsedBytes: p.bigint('number').default(0),
    createdAt: p.datetime(),
  },
  indexes: [{ name: 'users_username_lower_unique', expression: 'create unique index "users_username_lower_unique" on "users" (lower("username"))' }],
});

export type UserRow = InstanceType<typeof User.class>;

/** An identity-provider account (issuer + subject) linked to a user. */
export const UserIdentity = defineEntity({
  name: 'UserIdentity',
  tableName: 'user_identities',
  properties: {
    id: p.uuid().primary(),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    issuer: p.string().length(255),
    subject: p.string().length(255),
    createdAt: p.datetime(),
  },
  uniques: [{ properties: ['issuer', 'subject'] }],
});

/**
 * What outlives a deleted account: a hash of its e-mail, so the trial cannot be
 * claimed twice by deleting and signing up again.
 */
export const DeletedAccount = defineEntity({
  name: 'DeletedAccount',
  tableName: 'deleted_accounts',
  properties: {
    emailHash: p.string().length(64).primary(),
    trialUsed: p.boolean().default(false),
    deletedAt: p.datetime(),
  },
});

