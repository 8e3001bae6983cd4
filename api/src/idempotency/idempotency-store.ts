import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { query, statement, type Database } from '../db/statements.ts';
import type { Clock } from '../shared/clock.ts';

/** How long a key answers with its first response (Stripe's 24 hours). */
export const KEY_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * How long a request under a key counts as running. Longer than any idempotent handler
 * takes (their slowest step is a Stripe call, bounded by STRIPE_TIMEOUT_MS); past it the
 * request is taken for crashed and the next one with the key runs instead.
 */
export const LEASE_MS = 2 * 60 * 1000;

/** Who uses which key for which request: the hash covers method, route, path parameters, query and body. */
export interface KeyUse {
  userId: string;
  key: string;
  requestHash: string;
  method: string;
  route: string;
}

/** A response as it is kept and replayed. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  /** Null for an answer without a body. */
  body: string | null;
  /** The body was over the size cap and was not kept. */
  omitted: boolean;
}

/** The running request's hold on its key: only its holder completes or releases it. */
export interface Lease {
  userId: string;
  key: string;
  token: string;
}

export type Claim =
  | { kind: 'owned'; lease: Lease }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'running' }
  | { kind: 'mismatch'; method: string; route: string };

interface KeyRecord {
  request_hash: string;
  method: string;
  route: string;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  response_omitted: boolean;
}

// Takes the key when it is new, expired (older than the retention: a new use from scratch), or
// held by a lease that ran out on the same request (the replica running it died). One statement,
// so replicas racing on a key are ordered by its primary key.
const TAKE = statement<{ taken: number }>(
  'idempotency.take',
  `insert into idempotency_keys as held (user_id, key, request_hash, method, route, lease_token, lease_expires_at, created_at)
   values (?, ?, ?, ?, ?, ?, ?, ?)
   on conflict (user_id, key) do update set
     request_hash = excluded.request_hash, method = excluded.method, route = excluded.route,
     lease_token = excluded.lease_token, lease_expires_at = excluded.lease_expires_at,
     response_status = null, response_headers = null, response_body = null, response_omitted = false,
     created_at = case when held.created_at <= ? then excluded.created_at else held.created_at end
   where held.created_at <= ?
      or (held.response_status is null and held.lease_expires_at <= ? and held.request_hash = excluded.request_hash)
   returning 1 as taken`,
);

const READ = statement<KeyRecord>(
  'idempotency.read',
  `select request_hash, method, route, response_status, response_headers, response_body, response_omitted
   from idempotency_keys where user_id = ? and key = ?`,
);

const COMPLETE = statement<{ completed: number }>(
  'idempotency.complete',
  `update idempotency_keys set response_status = ?, response_headers = ?, response_body = ?, response_omitted = ?, lease_expires_at = ?
   where user_id = ? and key = ? and lease_token = ? and response_status is null
   returning 1 as completed`,
);

const RELEASE = statement<{ released: number }>(
  'idempotency.release',
  'delete from idempotency_keys where user_id = ? and key = ? and lease_token = ? and response_status is null returning 1 as released',
);

const SWEEP = statement<{ swept: string }>(
  'idempotency.sweep',
  `with gone as (
     delete from idempotency_keys where (user_id, key) in (select user_id, key from idempotency_keys where created_at <= ? limit ?)
     returning 1
   ) select count(*) as swept from gone`,
);

/** A key released between our attempt to take it and our read of it is taken again, a few times at most. */
const CLAIM_ATTEMPTS = 3;

/**
 * Idempotency-Key records in PostgreSQL, the one source of truth for every api replica:
 * a request claims its key (or learns it is running, done, or used for another request),
 * then completes it with its response or releases it.
 */
export class IdempotencyStore {
  readonly #database: Database;

  constructor(database: Database) {
    this.#database = database;
  }

  async claim(use: KeyUse, now: Date): Promise<Claim> {
    const expiredBefore = new Date(now.getTime() - KEY_RETENTION_MS);
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const token = randomUUID();
      const leaseEnd = new Date(now.getTime() + LEASE_MS);
      const taken = await query(this.#database, TAKE, [use.userId, use.key, use.requestHash, use.method, use.route, token, leaseEnd, now, expiredBefore, expiredBefore, now]);
      if (taken.length > 0) return { kind: 'owned', lease: { userId: use.userId, key: use.key, token } };
      const [record] = await query(this.#database, READ, [use.userId, use.key]);
      if (!record) continue;
      if (record.request_hash !== use.requestHash) return { kind: 'mismatch', method: record.method, route: record.route };
      if (record.response_status !== null) {
        return {
          kind: 'replay',
          response: { status: record.response_status, headers: record.response_headers ?? {}, body: record.response_body, omitted: record.response_omitted },
        };
      }
      return { kind: 'running' };
    }
    return { kind: 'running' };
  }

  /** Keeps the response for replays; false when the lease was lost (another request took the key over). */
  async complete(lease: Lease, response: StoredResponse, now: Date): Promise<boolean> {
    const done = await query(this.#database, COMPLETE, [
      response.status,
      JSON.stringify(response.headers),
      response.body,
      response.omitted,
      now,
      lease.userId,
      lease.key,
      lease.token,
    ]);
    return done.length > 0;
  }

  /** Frees the key: the request was not carried out (5xx, rate-limited), so a retry with it runs afresh. */
  async release(lease: Lease): Promise<void> {
    await query(this.#database, RELEASE, [lease.userId, lease.key, lease.token]);
  }

  /** Deletes keys past their retention, at most `limit` per call; returns how many. */
  async sweep(now: Date, limit = 5000): Promise<number> {
    const [row] = await query(this.#database, SWEEP, [new Date(now.getTime() - KEY_RETENTION_MS), limit]);
    return Number(row?.swept ?? 0);
  }
}

/** How often keys past their 24 hours are deleted (a key past them already counts as new before). */
const SWEEP_INTERVAL_MS = 15 * 60 * 1000;

/** Deletes expired keys every SWEEP_INTERVAL_MS; returns its stop. */
export function scheduleIdempotencySweep(deps: { clock: Clock; logger: Logger }, store: IdempotencyStore): () => void {
  const sweep = () =>
    store.sweep(deps.clock.now()).then(
      (swept) => {
        if (swept) deps.logger.info({ swept }, 'expired idempotency keys swept');
      },
      (error: unknown) => deps.logger.warn({ err: error }, 'the idempotency key sweep failed'),
    );
  // Not awaited: sweep() logs its own failure (the rejection handler above).
  const timer = setInterval(() => void sweep(), SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
