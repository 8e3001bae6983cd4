import type { Redis } from 'ioredis';
import { serializeItem } from 'structured-headers';
import { RateLimited } from './errors.ts';

/** A limit: `points` requests per `seconds`, under the name clients see in RateLimit-Policy. */
export interface RateLimitPolicy {
  name: string;
  points: number;
  seconds: number;
}

/**
 * What one request learned of a policy, as the IETF RateLimit header fields
 * (draft-ietf-httpapi-ratelimit-headers, structured-field syntax): the policy
 * (`"name";q=quota;w=window`) and what is left of it (`"name";r=remaining;t=seconds to reset`).
 */
export interface RateLimitFields {
  'RateLimit-Policy': string;
  RateLimit: string;
}

/** The largest share of a window's allowance one replica claims at a time. */
const MAX_LEASE = 64;
/** A lease is at most this fraction of what is still unclaimed, so leases shrink to one request as the limit nears. */
const LEASE_DIVISOR = 16;

/**
 * Claims `ARGV[2]` points of the caller's window (created with a lifetime of `ARGV[1]` ms
 * when absent); answers the points claimed so far in the window and its milliseconds left.
 */
const CLAIM = `
redis.call('set', KEYS[1], 0, 'PX', ARGV[1], 'NX')
local claimed = redis.call('incrby', KEYS[1], ARGV[2])
local ttl = redis.call('pttl', KEYS[1])
if ttl < 0 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { claimed, ttl }`;

/** One caller's share of its current window, held by this process. */
interface Lease {
  /** Requests this process may still let through without asking Redis. */
  left: number;
  /** Points claimed in Redis over every replica, this lease included, when it was taken. */
  claimed: number;
  /** When the window ends (ms since the epoch): the lease dies with it. */
  resetAt: number;
}

interface ClaimingRedis extends Redis {
  rateLimitClaim(key: string, windowMs: number, points: number): Promise<[number, number]>;
}

/**
 * One policy, counted in Redis so every api replica shares it, over fixed windows. A
 * request takes from a lease this process claimed from the window's count beforehand
 * (INCRBY of up to 64 points at once, at most 1/16 of what is still unclaimed), so most
 * requests ask Redis nothing; a refused caller stays refused here until its window ends. The
 * replicas together never let more than `points` through in a window; a caller may be refused
 * up to the leases other replicas still hold before the last point is really used, and those
 * leases shrink to one request as the limit nears. Knows nothing of HTTP: it answers the
 * header fields, and a refusal is a 429 carrying them with Retry-After.
 */
export class RateLimiter {
  readonly policy: RateLimitPolicy;
  readonly #redis: ClaimingRedis;
  readonly #leases = new Map<string, Lease>();
  /** Claims under way, one per caller: concurrent requests of a caller wait on the same one. */
  readonly #claims = new Map<string, Promise<Lease>>();
  readonly #policyField: string;
  /** The policy's name as a structured-field string; `;r=…;t=…` (integers) follow it on each answer. */
  readonly #nameItem: string;
  #sweepAt = 0;

  constructor(redis: Redis, policy: RateLimitPolicy) {
    if (!('rateLimitClaim' in redis)) redis.defineCommand('rateLimitClaim', { numberOfKeys: 1, lua: CLAIM });
    this.#redis = redis as ClaimingRedis;
    this.policy = policy;
    this.#policyField = serializeItem(policy.name, new Map([['q', policy.points], ['w', policy.seconds]]));
    this.#nameItem = serializeItem(policy.name);
  }

  /**
   * Takes one request from a lease this process holds for `caller`, at once, without asking
   * Redis: the fields, or undefined when no live lease has a request left (then `take`).
   */
  takeHeld(caller: string): RateLimitFields | undefined {
    const lease = this.#live(caller);
    if (!lease || lease.left === 0) return undefined;
    lease.left -= 1;
    return this.#fields(this.policy.points - lease.claimed + lease.left, lease.resetAt);
  }

  /** Takes one request from `caller`'s allowance; 429 with Retry-After and the RateLimit fields when none is left. */
  async take(caller: string): Promise<RateLimitFields> {
    const held = this.takeHeld(caller);
    if (held) return held;
    let lease = this.#live(caller);
    while (!lease || lease.left === 0) {
      if (lease && lease.claimed >= this.policy.points) this.#refuse(lease);
      lease = await this.#claim(caller);
    }
    lease.left -= 1;
    return this.#fields(this.policy.points - lease.claimed + lease.left, lease.resetAt);
  }

  #live(caller: string): Lease | undefined {
    const lease = this.#leases.get(caller);
    return lease && lease.resetAt > Date.now() ? lease : undefined;
  }

  #claim(caller: string): Promise<Lease> {
    let claim = this.#claims.get(caller);
    if (!claim) {
      claim = this.#claimFromRedis(caller).finally(() => this.#claims.delete(caller));
      this.#claims.set(caller, claim);
    }
    return claim;
  }

  async #claimFromRedis(caller: string): Promise<Lease> {
    const { name, points, seconds } = this.policy;
    const known = this.#live(caller)?.claimed ?? 0;
    const size = Math.max(1, Math.min(MAX_LEASE, Math.floor((points - known) / LEASE_DIVISOR)));
    const [claimed, ttl] = await this.#redis.rateLimitClaim(`rate:${name}:${caller}`, seconds * 1000, size);
    const now = Date.now();
    // Of this claim, only what the window still had is ours: the rest went past the limit.
    const lease = { left: Math.max(0, Math.min(size, points - (claimed - size))), claimed: Math.min(claimed, points), resetAt: now + ttl };
    this.#sweep(now);
    this.#leases.set(caller, lease);
    return lease;
  }

  /** Forgets the leases of ended windows, at most once a window. */
  #sweep(now: number): void {
    if (now < this.#sweepAt) return;
    this.#sweepAt = now + this.policy.seconds * 1000;
    for (const [caller, lease] of this.#leases) if (lease.resetAt <= now) this.#leases.delete(caller);
  }

  #refuse(lease: Lease): never {
    const msBeforeNext = lease.resetAt - Date.now();
    throw RateLimited(msBeforeNext / 1000, 'http.429', { headers: { ...this.#fields(0, lease.resetAt) } });
  }

  #fields(remaining: number, resetAt: number): RateLimitFields {
    const seconds = Math.max(0, Math.ceil((resetAt - Date.now()) / 1000));
    return {
      'RateLimit-Policy': this.#policyField,
      RateLimit: `${this.#nameItem};r=${Math.max(0, remaining)};t=${seconds}`,
    };
  }
}
