import type { Redis } from 'ioredis';
import type { RateLimiterRedis } from 'rate-limiter-flexible';
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

type Flexible = typeof import('rate-limiter-flexible');
let flexible: Promise<Flexible> | undefined;

/**
 * One policy kept in Redis, so every api replica shares it (rate-limiter-flexible, loaded
 * with the first request that needs it, not at start-up). Knows nothing of HTTP: it answers
 * the header fields, and a refusal is a 429 carrying them with Retry-After.
 */
export class RateLimiter {
  readonly policy: RateLimitPolicy;
  readonly #redis: Redis;
  #limiter: Promise<{ limiter: RateLimiterRedis; Rejection: Flexible['RateLimiterRes'] }> | undefined;

  constructor(redis: Redis, policy: RateLimitPolicy) {
    this.#redis = redis;
    this.policy = policy;
  }

  /** Takes one request from `caller`'s allowance; 429 with Retry-After and the RateLimit fields when none is left. */
  async take(caller: string): Promise<RateLimitFields> {
    this.#limiter ??= this.#build();
    const { limiter, Rejection } = await this.#limiter;
    try {
      const taken = await limiter.consume(caller);
      return this.#fields(taken.remainingPoints, taken.msBeforeNext);
    } catch (rejection) {
      if (!(rejection instanceof Rejection)) throw rejection;
      throw RateLimited(rejection.msBeforeNext / 1000, 'http.429', { headers: { ...this.#fields(0, rejection.msBeforeNext) } });
    }
  }

  #fields(remaining: number, msBeforeNext: number): RateLimitFields {
    const { name, points, seconds } = this.policy;
    return {
      'RateLimit-Policy': serializeItem(name, new Map([['q', points], ['w', seconds]])),
      RateLimit: serializeItem(name, new Map([['r', Math.max(0, remaining)], ['t', Math.max(0, Math.ceil(msBeforeNext / 1000))]])),
    };
  }

  async #build() {
    flexible ??= import('rate-limiter-flexible');
    const { RateLimiterRedis, RateLimiterRes } = await flexible;
    const { name, points, seconds } = this.policy;
    return { limiter: new RateLimiterRedis({ storeClient: this.#redis, keyPrefix: `rate:${name}`, points, duration: seconds }), Rejection: RateLimiterRes };
  }
}
