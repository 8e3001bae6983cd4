import type { Middleware } from 'koa';
import helmet from 'koa-helmet';
import type { AppState } from './state.ts';

/**
 * Browser hardening headers on every response (helmet): nosniff, DENY framing, no
 * referrer, HSTS, and a CSP for JSON that lets nothing load or run. The reference page
 * sets its own CSP (openapi.ts). Cross-Origin-Resource-Policy is same-site, not helmet's
 * same-origin, so a player on the product's own site may follow playback URLs.
 */
export function securityHeaders(): Middleware<AppState> {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    crossOriginResourcePolicy: { policy: 'same-site' },
  }) as Middleware<AppState>;
}
