import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { query, statement } from '../db/statements.ts';
import { offsetOf, type PageOfRows, type PageRequest } from '../shared/page.ts';
import type { Clock } from '../shared/clock.ts';
import { Conflict, Invalid, NotFound } from '../shared/errors.ts';
import type { UserRow } from '../accounts/entities.ts';
import { USER_COLUMNS, userOfColumns, type UserColumns } from '../accounts/user-row.ts';
import { ApiKey, type ApiKeyRow } from './entities.ts';

/** What a key may do: read (GET, HEAD), write (every other method), billing (plans and payments). */
export const API_KEY_SCOPES = ['read', 'write', 'billing'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** Every key starts so: recognisable in logs, configs and secret scanners. */
export const API_KEY_PREFIX = 'crk_live_';
/** The prefix, then 32 random bytes in base64url. */
const KEY_SHAPE = /^crk_live_[A-Za-z0-9_-]{43}$/;
/** How much of a key a listing shows to tell keys apart: the prefix and 8 characters (48 bits). */
const VISIBLE_LENGTH = API_KEY_PREFIX.length + 8;
/** last_used_at is written at most this often per key, so a busy key costs no write per request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** A key as its owner sees it: never the key itself, past its creation. */
export interface ApiKeyView {
  id: string;
  name: string;
  /** The key's first characters, e.g. `crk_live_Ab3dE5g7`. */
  prefix: string;
  scopes: ApiKeyScope[];
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

/** The caller behind a live key. */
export interface KeyHolder {
  user: UserRow;
  key: { id: string; scopes: readonly ApiKeyScope[] };
}

export interface ApiKeysDeps {
  orm: MikroORM;
  clock: Clock;
  /** Live keys one user may hold (API_KEYS_MAX_PER_USER). */
  maxPerUser: number;
}

/** The stored form of a key: its SHA-256, hex. The key has 256 random bits, so a fast hash is enough. */
export function apiKeyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * Named API keys of users. A key is shown once, when made; only its hash is stored. Looking
 * a presented key up costs the same whatever it is (unknown, malformed, revoked, expired or
 * live): one hash and one indexed query, the verdict drawn afterwards.
 */
export class ApiKeys {
  readonly #deps: ApiKeysDeps;

  constructor(deps: ApiKeysDeps) {
    this.#deps = deps;
  }

  /** A new key: the secret (shown this once) and its view. 422 for an expiry not in the future, 409 past the live-key limit. */
  async create(em: EntityManager, userId: string, input: { name: string; scopes: ApiKeyScope[]; expiresAt?: Date | undefined }): Promise<{ key: string; view: ApiKeyView }> {
    const now = this.#deps.clock.now();
    if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) throw Invalid('api_keys.expiry_not_future');
    const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const row = await em.transactional(async (tx) => {
      // Concurrent creations of one user queue on the user's row, so the limit holds.
      await tx.execute('select id from users where id = ? for update', [userId]);
      const live = await tx.count(ApiKey, { user: userId, revokedAt: null, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] });
      if (live >= this.#deps.maxPerUser) throw Conflict('api_keys.limit_reached', { params: { limit: this.#deps.maxPerUser } });
      return tx.create(ApiKey, {
        id: randomUUID(),
        user: userId,
        name: input.name,
        prefix: key.slice(0, VISIBLE_LENGTH),
        keyHash: apiKeyHash(key),
        scopes: [...new Set(input.scopes)],
        createdAt: now,
        lastUsedAt: null,
        expiresAt: input.expiresAt ?? null,
        revokedAt: null,
      });
    });
    return { key, view: apiKeyView(row) };
  }

  /** The user's keys, newest first, revoked and expired ones included. */
  async list(em: EntityManager, userId: string, page: PageRequest): Promise<PageOfRows<ApiKeyView>> {
    const [rows, total] = await em.findAndCount(ApiKey, { user: userId }, { orderBy: { createdAt: 'desc', id: 'asc' }, limit: page.items_per_page, offset: offsetOf(page) });
    return { rows: rows.map(apiKeyView), total };
  }

  /** Revokes one of the user's keys (again is no error); another user's or an unknown one is 404. */
  async revoke(em: EntityManager, userId: string, keyId: string): Promise<void> {
    const row = await em.findOne(ApiKey, { id: keyId, user: userId });
    if (!row) throw NotFound('api_keys.not_found');
    row.revokedAt ??= this.#deps.clock.now();
    await em.flush();
  }

  /** Revokes every live key of the user (a password change or reset). */
  async revokeAll(userId: string): Promise<void> {
    await query(this.#deps.orm, REVOKE_ALL, [this.#deps.clock.now(), userId]);
  }

  /**
   * The caller behind a presented key, or null: one hash and one query whatever was
   * presented, so an unknown, malformed, revoked or expired key answers in the same time.
   * A live key's last_used_at moves at most once a minute.
   */
  async authenticate(presented: string): Promise<KeyHolder | null> {
    const [row] = await query(this.#deps.orm, KEY_HOLDER, [apiKeyHash(presented)]);
    const now = this.#deps.clock.now();
    if (!row || !KEY_SHAPE.test(presented) || !isLive(row, now)) return null;
    if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= LAST_USED_RESOLUTION_MS) {
      await query(this.#deps.orm, TOUCH_KEY, [now, row.key_id, new Date(now.getTime() - LAST_USED_RESOLUTION_MS)]);
    }
    return { user: userOfColumns(row), key: { id: row.key_id, scopes: row.scopes } };
  }

  /** Whether the key still works (an open event stream ends when it stops). */
  async isLive(keyId: string): Promise<boolean> {
    const [row] = await query(this.#deps.orm, KEY_STATE, [keyId]);
    return row !== undefined && isLive(row, this.#deps.clock.now());
  }
}

interface KeyState {
  expires_at: Date | null;
  revoked_at: Date | null;
}

function isLive(row: KeyState, now: Date): boolean {
  return row.revoked_at === null && (row.expires_at === null || row.expires_at.getTime() > now.getTime());
}

export function apiKeyView(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes as ApiKeyScope[],
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

interface KeyHolderRow extends UserColumns, KeyState {
  key_id: string;
  scopes: ApiKeyScope[];
  last_used_at: Date | null;
}

const KEY_HOLDER = statement<KeyHolderRow>(
  'api_keys.holder',
  `select k.id as key_id, k.scopes, k.expires_at, k.revoked_at, k.last_used_at, ${USER_COLUMNS.map((column) => `u.${column}`).join(', ')}
   from api_keys k join users u on u.id = k.user_id where k.key_hash = ?`,
);

const TOUCH_KEY = statement<never>('api_keys.touch', 'update api_keys set last_used_at = ? where id = ? and (last_used_at is null or last_used_at < ?)');

const KEY_STATE = statement<KeyState>('api_keys.state', 'select expires_at, revoked_at from api_keys where id = ?');

const REVOKE_ALL = statement<never>('api_keys.revoke_all', 'update api_keys set revoked_at = ? where user_id = ? and revoked_at is null');
