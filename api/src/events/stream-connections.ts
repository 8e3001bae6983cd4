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

  /** A lease for one more stream of the user, or null when the user is at the limit. */
  async admit(userId: string, limit: number, connectionId: string): Promise<StreamLease | null> {
    const key = `sse-connections:${userId}`;
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
