import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimited } from '../shared/errors.ts';

/** The spec's limits (table "Limits"), kept in Redis so every api replica shares them. */
export const RATE_LIMITS = {
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

export class RateLimits {
  readonly #limiters: Record<RateLimitName, RateLimiterRedis>;

  constructor(redis: Redis) {
    const limiter = (name: RateLimitName) =>
      new RateLimiterRedis({ storeClient: redis, keyPrefix: `rate:${name}`, points: RATE_LIMITS[name].points, duration: RATE_LIMITS[name].seconds });
    this.#limiters = {
      signup: limiter('signup'),
      'link-mail': limiter('link-mail'),
      'change-password': limiter('change-password'),
      'request-email-change': limiter('request-email-change'),
      'password-check': limiter('password-check'),
    };
  }

  /** Takes one request from the caller's allowance; 429 with Retry-After when none is left. */
  async consume(name: RateLimitName, caller: string): Promise<void> {
    try {
      await this.#limiters[name].consume(caller);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) throw RateLimited(rejection.msBeforeNext / 1000);
      throw rejection;
    }
  }
}
