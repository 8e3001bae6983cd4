import type { Redis } from 'ioredis';

/** Removes expired leases, then adds this one if fewer than the limit remain. */
const ADMIT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

type AdmitCommand = (key: string, now: number, expiresAt: number, limit: number, id: string, ttlMs: number) => Promise<number>;

/** A lease outlives three missed keepalives (plus slack), so a vanished replica's streams stop counting soon after. */
export function streamLeaseMs(keepaliveSeconds: number): number {
  return 3 * keepaliveSeconds * 1000 + 5000;
}

export type StreamKind = 'user' | 'project';

/**
 * The open streams of this process, kept below the connection cap: a stream past
 * the budget is refused (503), so ordinary requests always find a connection.
 */
export class StreamBudget {
  readonly limit: number;
  #open = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** A place for one more stream (its release, called once), or null when the budget is spent. */
  take(): (() => void) | null {
    if (this.#open >= this.limit) return null;
    this.#open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open--;
    };
  }
}

/** Streams one process takes: HTTP_MAX_CONNECTIONS × SSE_STREAM_SHARE_PERCENT, at least one. */
export function streamBudgetOf(maxConnections: number, sharePercent: number): number {
  return Math.max(1, Math.floor((maxConnections * sharePercent) / 100));
}

export interface StreamLease {
  /** Extends the lease (called on every keepalive). */
  renew(): Promise<void>;
  release(): Promise<void>;
}

/**
 * Open streams per user, counted in Redis across every replica. Each stream holds a
 * lease that its keepalive renews, so streams of a crashed replica stop counting
 * once their leases run out.
 */
export class StreamConnections {
  readonly #redis: Redis;
  readonly #leaseMs: number;

  constructor(redis: Redis, leaseMs: number) {
    this.#redis = redis;
    this.#leaseMs = leaseMs;
    if (!('admitStream' in redis)) redis.defineCommand('admitStream', { numberOfKeys: 1, lua: ADMIT });
  }

  /** A lease for one more stream of the user of this kind, or null when the user is at the limit for the kind. */
  async admit(userId: string, kind: StreamKind, limit: number, connectionId: string): Promise<StreamLease | null> {
    // One set per kind: two tabs, each with a user stream and a project stream, are not a crowd.
    const key = `sse-connections:${kind}:${userId}`;
    // Real time, not the service clock: leases are renewed by real timers.
    const now = Date.now();
    const admit = (this.#redis as unknown as { admitStream: AdmitCommand }).admitStream.bind(this.#redis);
    if ((await admit(key, now, now + this.#leaseMs, limit, connectionId, this.#leaseMs)) !== 1) return null;
    return {
      // Both sent at once (one round trip): every open stream renews at each keepalive.
      renew: async () => {
        await Promise.all([this.#redis.zadd(key, 'XX', Date.now() + this.#leaseMs, connectionId), this.#redis.pexpire(key, this.#leaseMs)]);
      },
      release: async () => {
        await this.#redis.zrem(key, connectionId);
      },
    };
  }
}
