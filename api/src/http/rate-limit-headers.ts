import type { Middleware } from 'koa';
import type { RateLimiter, RateLimitFields } from '../shared/rate-limiter.ts';
import type { AppContext, AppState } from './state.ts';

/**
 * Adds one policy's RateLimit-Policy and RateLimit items to the response; a request under
 * several policies (its address, its key, a route's own limit) lists each, in the order taken.
 */
export function announceRateLimit(ctx: AppContext, fields: RateLimitFields): void {
  addItem(ctx, 'RateLimit-Policy', fields['RateLimit-Policy']);
  addItem(ctx, 'RateLimit', fields.RateLimit);
}

function addItem(ctx: AppContext, name: keyof RateLimitFields, item: string): void {
  const earlier = ctx.response.get(name);
  ctx.set(name, earlier ? `${earlier}, ${item}` : item);
}

/**
 * Takes one request of `caller`'s allowance under `limiter` and announces what is left (429
 * with Retry-After when nothing is). Taken from a lease the process holds, it is done at once
 * (no promise): most requests of a busy caller never wait on Redis, nor on the event loop.
 */
export function takeRateLimit(ctx: AppContext, limiter: RateLimiter, caller: string): Promise<void> | undefined {
  const held = limiter.takeHeld(caller);
  if (held) {
    announceRateLimit(ctx, held);
    return undefined;
  }
  return limiter.take(caller).then((fields) => announceRateLimit(ctx, fields));
}

/** The per-address limit of every /api/ request (RATE_LIMIT_PER_IP); none when `limiter` is undefined. */
export function rateLimitPerAddress(limiter: RateLimiter | undefined): Middleware<AppState> {
  return (ctx, next) => {
    if (!limiter || !ctx.path.startsWith('/api/')) return next();
    const claim = takeRateLimit(ctx, limiter, ctx.ip);
    return claim ? claim.then(next) : next();
  };
}
