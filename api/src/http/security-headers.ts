import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Middleware } from 'koa';
import helmet, { type HelmetOptions } from 'helmet';
import type { AppState } from './state.ts';

/**
 * Browser hardening headers on every response (helmet): nosniff, DENY framing, no
 * referrer, HSTS, and a CSP for JSON that lets nothing load or run. The reference page
 * sets its own CSP (openapi.ts). Cross-Origin-Resource-Policy is same-site, not helmet's
 * same-origin, so a player on the product's own site may follow playback URLs.
 */
const OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] },
  },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  crossOriginResourcePolicy: { policy: 'same-site' },
};

/** One header helmet sets (a value) or removes (none). */
type HeaderChange = readonly [name: string, value: string | undefined];

/**
 * What helmet does to a response with these options. Nothing in it depends on the
 * request, so it is worked out once, by running helmet against a response that records,
 * and replayed on every response: helmet stays the one source of the headers without
 * running its dozen middlewares per request.
 */
export function helmetChanges(options: HelmetOptions): HeaderChange[] {
  const csp = options.contentSecurityPolicy;
  const directives = typeof csp === 'object' ? Object.values(csp.directives ?? {}) : [];
  // helmet calls such a directive (a nonce) for every response: one value replayed to all would defeat it.
  if (directives.some((value) => typeof value === 'function' || (Array.isArray(value) && value.some((item) => typeof item === 'function')))) {
    throw new Error('a CSP directive computed per response cannot be replayed: run helmet per request for it');
  }
  const changes: HeaderChange[] = [];
  const recorder = {
    setHeader: (name: string, value: unknown) => void changes.push([name, String(value)]),
    removeHeader: (name: string) => void changes.push([name, undefined]),
  };
  let finished = false;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
    finished = true;
  });
  if (!finished) throw new Error('helmet did not answer at once: its headers would depend on the request');
  return changes;
}

/** The headers, worked out when the module loads: a wrong option stops start-up. */
const CHANGES = helmetChanges(OPTIONS);

/** Puts the security headers on a response, over whatever a handler set in their place. */
export function applySecurityHeaders(res: ServerResponse): void {
  for (const [name, value] of CHANGES) {
    if (value === undefined) res.removeHeader(name);
    else res.setHeader(name, value);
  }
}

export function securityHeaders(): Middleware<AppState> {
  return (ctx, next) => {
    applySecurityHeaders(ctx.res);
    return next();
  };
}
