import type { Middleware } from 'koa';
import type { RateLimiter, RateLimitFields } from '../shared/rate-limiter.ts';
import type { AppContext, AppState } from './state.ts';

/**
 * Adds one policy's RateLimit-Policy and RateLimit items to the response; a request under
 * several policies (its address, its key, a route's own limit) lists each, in the order taken.
 */
export function announceRateLimit(ctx: AppContext, fields: RateLimitFields): void {
  for (const [name, item] of Object.entries(fields)) {
    const earlier = ctx.response.get(name);
    ctx.set(name, earlier ? `${earlier}, ${item}` : item);
  }
}

/** Takes one request of `caller`'s allowance under `limiter` and announces what is left (429 with Retry-After when nothing is). */
export async function takeRateLimit(ctx: AppContext, limiter: RateLimiter, caller: string): Promise<void> {
  announceRateLimit(ctx, await limiter.take(caller));
}

/** The per-address limit of every /api/ request (RATE_LIMIT_PER_IP); none when `limiter` is undefined. */
export function rateLimitPerAddress(limiter: RateLimiter | undefined): Middleware<AppState> {
  return async (ctx, next) => {
    if (limiter && ctx.path.startsWith('/api/')) await takeRateLimit(ctx, limiter, ctx.ip);
    await next();
  };
}
