import { Forbidden, Unauthenticated } from '../shared/errors.ts';
import type { ApiRouter, Guards, KeyScope } from '../http/router.ts';
import type { AppContext } from '../http/state.ts';
import type { AccountsService } from './accounts-service.ts';
import type { UserRow } from './entities.ts';
import type { Session } from './sessions.ts';
import type { KeyHolder } from '../api-keys/service.ts';
import { takeRateLimit } from '../http/rate-limit-headers.ts';
import type { RateLimiter } from '../shared/rate-limiter.ts';

/** Who is calling, set on `ctx.state.auth` by the guards: a cookie session, or an API key. */
export type Auth = SessionAuth | KeyAuth;

export interface SessionAuth {
  user: UserRow;
  session: Session;
  apiKey?: undefined;
}

export interface KeyAuth {
  user: UserRow;
  apiKey: KeyHolder['key'];
  session?: undefined;
}

/** The api's router: its handlers are handed an Auth, or a SessionAuth on 'session-only' routes. */
export type AppRouter = ApiRouter<Auth, SessionAuth>;

export const SESSION_COOKIE = 'session';
export const CSRF_COOKIE = 'csrf_token';
const CSRF_HEADER = 'X-CSRF-Token';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The live session and its (still existing) user behind the request's cookie, or null. */
export async function authenticate(ctx: AppContext, accounts: AccountsService): Promise<SessionAuth | null> {
  const cookie = ctx.cookies.get(SESSION_COOKIE);
  if (!cookie) return null;
  const session = await accounts.sessions.find(cookie);
  if (!session) return null;
  const user = await accounts.sessionUser(session.userId);
  if (!user) {
    // The account was deleted: its sessions go with it.
    await accounts.sessions.end(session);
    return null;
  }
  return { user, session };
}

/** `Authorization: Bearer <key>`: the key as presented (possibly empty or malformed), or undefined for a request without one. */
function presentedKey(ctx: AppContext): string | undefined {
  const match = /^Bearer(?:[ \t]+(.*))?$/i.exec(ctx.get('Authorization'));
  return match ? (match[1] ?? '').trim() : undefined;
}

export interface GuardOptions {
  /** The per-key request limit (RATE_LIMIT_PER_API_KEY). */
  keyLimiter: RateLimiter;
}

/**
 * The guards the router applies by access level. A request with `Authorization: Bearer`
 * is a key's: 401 unless the key is live, 403 on a 'session-only' route or when the key
 * lacks the scope the route declares (named in the answer), and no CSRF token is asked
 * (no browser sends a key by itself). Any other request is a cookie session's: 401 without
 * a live one (or for a deleted user); a mutating request must also carry X-CSRF-Token
 * matching the store, else 403 "CSRF token not found". 'superuser': the same, then 403 for others.
 */
export function accountGuards(accounts: AccountsService, options: GuardOptions): Guards<Auth, SessionAuth> {
  const bySession = async (ctx: AppContext): Promise<SessionAuth> => {
    const auth = await authenticate(ctx, accounts);
    if (!auth) throw Unauthenticated();
    if (MUTATING.has(ctx.method) && !(await accounts.sessions.checkCsrfToken(auth.session, ctx.get(CSRF_HEADER) || undefined))) {
      throw Forbidden('auth.csrf_not_found');
    }
    return auth;
  };
  /** A key's caller; `scope` undefined where keys are not let in. */
  const byKey = async (ctx: AppContext, presented: string, scope: KeyScope | undefined): Promise<KeyAuth> => {
    const holder = await accounts.apiKeys.authenticate(presented);
    if (!holder) throw Unauthenticated('auth.api_key_invalid', { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
    await takeRateLimit(ctx, options.keyLimiter, holder.key.id);
    if (!scope) throw Forbidden('auth.api_key_not_allowed');
    if (!holder.key.scopes.includes(scope)) {
      throw Forbidden('auth.api_key_scope_missing', { params: { scope }, headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` } });
    }
    return { user: holder.user, apiKey: holder.key };
  };
  const caller = async (ctx: AppContext, scope: KeyScope): Promise<Auth> => {
    const presented = presentedKey(ctx);
    return presented === undefined ? bySession(ctx) : byKey(ctx, presented, scope);
  };
  return {
    caller,
    async sessionCaller(ctx) {
      const presented = presentedKey(ctx);
      if (presented !== undefined) await byKey(ctx, presented, undefined);
      return bySession(ctx);
    },
    async superuser(ctx, scope) {
      const auth = await caller(ctx, scope);
      if (!auth.user.isSuperuser) throw Forbidden();
      return auth;
    },
  };
}

/** The caller of the request, on routes with one (for what runs around handlers; a handler is handed its caller). */
export function requireAuth(ctx: AppContext): Auth {
  const auth = ctx.state.auth as Auth | undefined;
  if (!auth) throw Unauthenticated();
  return auth;
}

/** Sec-Fetch-Site values of a request a page of another origin did not make. */
const OWN_SITE_FETCHES = new Set(['same-origin', 'none']);

/**
 * Refuses a login that a browser sent from another site (login CSRF: a forged form
 * would sign the victim into the attacker's account). Browsers name the page's origin
 * (Origin, on every POST) or at least whether it is ours (Sec-Fetch-Site); a client
 * sending neither is no browser a third-party page drives (curl, scripts, apps) and passes.
 */
export function refuseCrossSiteLogin(ctx: AppContext, publicBaseUrl: string, allowedOrigins: readonly string[] = []): void {
  const origin = ctx.get('Origin');
  const site = ctx.get('Sec-Fetch-Site');
  // The api's own address counts as ours too (Koa 3's ctx.origin is the Origin header, hence protocol + host), and so do CORS_ALLOWED_ORIGINS.
  const ours = origin
    ? origin === new URL(publicBaseUrl).origin || origin === `${ctx.protocol}://${ctx.host}` || allowedOrigins.includes(origin)
    : !site || OWN_SITE_FETCHES.has(site);
  if (!ours) throw Forbidden('auth.cross_site_login');
}
