import type { Middleware } from 'koa';
import { Forbidden, Unauthenticated } from '../shared/errors.ts';
import type { Guards } from '../http/router.ts';
import type { AppContext, AppState } from '../http/state.ts';
import type { AccountsService } from './accounts-service.ts';
import type { UserRow } from './entities.ts';
import type { Session } from './sessions.ts';

/** Who is calling: set on `ctx.state.auth` by the session and superuser guards. */
export interface Auth {
  user: UserRow;
  session: Session;
}

export const SESSION_COOKIE = 'session';
export const CSRF_COOKIE = 'csrf_token';
const CSRF_HEADER = 'X-CSRF-Token';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The live session and its (still existing) user behind the request's cookie, or null. */
export async function authenticate(ctx: AppContext, accounts: AccountsService): Promise<Auth | null> {
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

/**
 * The guards the router applies by access level. 'session': 401 without a live session
 * (or for a deleted user); a mutating request must also carry X-CSRF-Token matching the
 * store, else 403 "CSRF token not found". 'superuser': the same, then 403 for others.
 */
export function accountGuards(accounts: AccountsService): Guards {
  const session: Middleware<AppState> = async (ctx, next) => {
    const auth = await authenticate(ctx, accounts);
    if (!auth) throw Unauthenticated();
    if (MUTATING.has(ctx.method) && !(await accounts.sessions.checkCsrfToken(auth.session, ctx.get(CSRF_HEADER) || undefined))) {
      throw Forbidden('auth.csrf_not_found');
    }
    ctx.state.auth = auth;
    await next();
  };
  const superuser: Middleware<AppState> = async (ctx, next) =>
    session(ctx, async () => {
      if (!requireAuth(ctx).user.isSuperuser) throw Forbidden();
      await next();
    });
  return { session, superuser };
}

/** The caller of a route guarded by 'session' or 'superuser'. */
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
export function refuseCrossSiteLogin(ctx: AppContext, publicBaseUrl: string): void {
  const origin = ctx.get('Origin');
  const site = ctx.get('Sec-Fetch-Site');
  // The api's own address counts as ours too (Koa 3's ctx.origin is the Origin header, hence protocol + host).
  const ours = origin
    ? origin === new URL(publicBaseUrl).origin || origin === `${ctx.protocol}://${ctx.host}`
    : !site || OWN_SITE_FETCHES.has(site);
  if (!ours) throw Forbidden('auth.cross_site_login');
}
