import cors from '@koa/cors';
import type { Middleware } from 'koa';
import type { AppState } from './state.ts';

/** Request headers the api reads that a page of another origin may send. */
export const CORS_REQUEST_HEADERS = ['Content-Type', 'Authorization', 'X-CSRF-Token', 'Idempotency-Key', 'Accept-Language', 'X-Request-Id'];
/** Response headers such a page may read beyond the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'ETag', 'Location', 'X-Request-Id', 'WWW-Authenticate'];
/** How long a browser may keep a preflight's answer, seconds. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * Cross-origin calls from the pages of `origins` (CORS_ALLOWED_ORIGINS), with cookies or an
 * API key (@koa/cors): preflights answered, credentials allowed, the rate-limit and other
 * headers clients need exposed, errors included. Any other origin gets no CORS header at all,
 * so its pages cannot read an answer. Every response varies on Origin.
 */
export function crossOrigin(origins: readonly string[]): Middleware<AppState> {
  const allowed = new Set(origins);
  return cors({
    origin: (ctx) => {
      const origin = ctx.get('Origin');
      return allowed.has(origin) ? origin : '';
    },
    credentials: true,
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowHeaders: CORS_REQUEST_HEADERS,
    exposeHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    keepHeadersOnError: true,
  }) as Middleware<AppState>;
}
