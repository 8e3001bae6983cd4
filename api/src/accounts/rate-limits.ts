import type { Redis } from 'ioredis';
import type { RateLimiterRedis } from 'rate-limiter-flexible';
import { RateLimited } from '../shared/errors.ts';

/** The spec's limits (table "Limits"), kept in Redis so every api replica shares them. */
const RATE_LIMITS = {
  /** Per IP. */
  signup: { points: 5, seconds: 600 },
  /** Per IP, one allowance for send-verification and forgot-password together (the spec's one row). */
  'link-mail': { points: 3, seconds: 300 },
  /** Per user. */
  'change-password': { points: 5, seconds: 300 },
  /** Per user. */
  'request-email-change': { points: 3, seconds: 300 },
  /** Per user: verify-password and account deletion (not in the spec; ours). */
  'password-check': { points: 10, seconds: 300 },
} as const;

export type RateLimitName = keyof typeof RATE_LIMITS;

/** The limiters, built with the first request that needs one: rate-limiter-flexible is not loaded at start-up. */
export class RateLimits {
  readonly #redis: Redis;
  #limiters: Promise<{ limiters: Record<RateLimitName, RateLimiterRedis>; Rejection: new (...args: never[]) => { msBeforeNext: number } }> | undefined;

  constructor(redis: Redis) {
    this.#redis = redis;
  }

  /** Takes one request from the caller's allowance; 429 with Retry-After when none is left. */
  async consume(name: RateLimitName, caller: string): Promise<void> {
    this.#limiters ??= this.#build();
    const { limiters, Rejection } = await this.#limiters;
    try {
      await limiters[name].consume(caller);
    } catch (rejection) {
      if (rejection instanceof Rejection) throw RateLimited(rejection.msBeforeNext / 1000);
      throw rejection;
    }
  }

  async #build() {
    const { RateLimiterRedis, RateLimiterRes } = await import('rate-limiter-flexible');
    const limiter = (name: RateLimitName) =>
      new RateLimiterRedis({ storeClient: this.#redis, keyPrefix: `rate:${name}`, points: RATE_LIMITS[name].points, duration: RATE_LIMITS[name].seconds });
    const limiters: Record<RateLimitName, RateLimiterRedis> = {
      signup: limiter('signup'),
      'link-mail': limiter('link-mail'),
      'change-password': limiter('change-password'),
      'request-email-change': limiter('request-email-change'),
      'password-check': limiter('password-check'),
    };
    return { limiters, Rejection: RateLimiterRes };
  }
}
