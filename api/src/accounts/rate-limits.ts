import type { Redis } from 'ioredis';
import { RateLimiter } from '../shared/rate-limiter.ts';

/** The spec's limits (table "Limits"), kept in Redis so every api replica shares them; each name is its RateLimit-Policy name. */
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

/** The limiters of the accounts routes, one per policy. */
export class RateLimits {
  readonly #limiters = new Map<RateLimitName, RateLimiter>();

  constructor(redis: Redis) {
    for (const [name, limit] of Object.entries(RATE_LIMITS) as [RateLimitName, (typeof RATE_LIMITS)[RateLimitName]][]) {
      this.#limiters.set(name, new RateLimiter(redis, { name, ...limit }));
    }
  }

  limiter(name: RateLimitName): RateLimiter {
    return this.#limiters.get(name)!;
  }
}
