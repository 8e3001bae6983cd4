import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { InvalidInput, NotFound, Unavailable } from '../shared/errors.ts';
import type { ResponseSpec } from '../http/router.ts';
import type { AppContext } from '../http/state.ts';
import { translate, type Locale, type MessageKey } from '../i18n/index.ts';
import type { BillingService } from '../billing/billing-service.ts';
import { userView, type AccountsService, type StartedSession } from './accounts-service.ts';
import { writeCookie } from './cookies.ts';
import { authenticate, CSRF_COOKIE, refuseCrossSiteLogin, SESSION_COOKIE, type AppRouter } from './guards.ts';
import { OidcSignInError, PROVIDER_NAME, type OidcSignIn } from './oidc.ts';
import type { RateLimitName, RateLimits } from './rate-limits.ts';
import { takeRateLimit } from '../http/rate-limit-headers.ts';
import { CheckAuthResult, Detail, Email, LoginResult, Name, Password, Token, UserRead, Username } from './schemas.ts';
import type { Session } from './sessions.ts';

export interface AccountRouteDeps {
  accounts: AccountsService;
  billing: BillingService;
  /** For statement-only reads (check-auth's billing status): no EntityManager is forked for them. */
  orm: MikroORM;
  limits: RateLimits;
  /** Absent when OIDC_ISSUER is unset. */
  oidc: OidcSignIn | undefined;
  config: Pick<Config, 'SUPPORTED_LOCALES' | 'MAX_JSON_BODY_BYTES' | 'CORS_ALLOWED_ORIGINS'>;
  baseUrl: () => string;
}

const OAUTH_STATE_COOKIE = 'oauth_state';
const OAUTH_PATH = '/api/v1/auth/oauth';

const ok = (description: string): Record<number, ResponseSpec> => ({ 200: { description, schema: Detail } });
const tags = ['auth'];

/** Accounts, sessions and authentication: the spec's "Accounts and sessions" and the /users/me routes. */
export function registerAccountRoutes(router: AppRouter, deps: AccountRouteDeps): void {
  const { accounts, billing, orm, limits, oidc } = deps;
  const secure = () => deps.baseUrl().startsWith('https:');
  const detail = (ctx: AppContext, key: MessageKey) => ({ detail: translate(ctx.state.locale, key) });
  // One request of the caller's allowance, announced in the RateLimit fields; 429 with Retry-After past it.
  const limit = (ctx: AppContext, name: RateLimitName, caller: string) => takeRateLimit(ctx, limits.limiter(name), caller);

  // Both cookies live as long as the session; the server, not the cookie, decides when a CSRF token expires.
  const cookieMaxAge = (session: Session) => Math.round((session.expiresAt.getTime() - session.createdAt.getTime()) / 1000);
  const setCsrfCookie = (ctx: AppContext, session: Session, csrfToken: string) =>
    writeCookie(ctx, CSRF_COOKIE, csrfToken, { maxAge: cookieMaxAge(session), httpOnly: false, secure: secure() });
  const startSessionCookies = (ctx: AppContext, started: StartedSession) => {
    writeCookie(ctx, SESSION_COOKIE, started.cookie, { maxAge: cookieMaxAge(started.session), httpOnly: true, secure: secure() });
    setCsrfCookie(ctx, started.session, started.csrfToken);
  };
  const clearSessionCookies = (ctx: AppContext) => {
    writeCookie(ctx, SESSION_COOKIE, '', { maxAge: 0, httpOnly: true, secure: secure() });
    writeCookie(ctx, CSRF_COOKIE, '', { maxAge: 0, httpOnly: false, secure: secure() });
  };

  router.add({
    method: 'post',
    path: '/api/v1/users/',
    summary: 'Sign up; a verification e-mail follows. Never reveals whether the address is registered.',
    tags: ['users'],
    access: 'public',
    body: z.object({ name: Name, username: Username, email: Email, password: Password }),
    responses: {
      201: { description: 'The user (an address already registered gets the same answer and its owner a note)', schema: UserRead },
      409: { description: 'Username taken' },
      429: { description: 'More than 5 signups from this IP in 10 minutes' },
    },
    handler: async (ctx, { body, em }) => {
      await limit(ctx, 'signup', ctx.ip);
      ctx.status = 201;
      ctx.body = await accounts.signUp(em, { ...body, locale: ctx.state.locale });
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/auth/login',
    summary: 'Password login with the username or the e-mail address; sets the session and csrf_token cookies.',
    tags,
    access: 'public',
    bodyType: 'form',
    body: z.object({
      username: z.string().min(1).max(320).describe('Username or e-mail address.'),
      password: z.string().min(1).max(1024),
      remember_me: z.enum(['true', 'false', 'on', '1', '0']).optional().describe('true keeps the session for SESSION_REMEMBER_ME_DAYS.'),
    }),
    responses: {
      200: { description: 'Logged in', schema: LoginResult },
      401: { description: 'Wrong username or password' },
      403: { description: 'E-mail address not verified, or a browser sent the form from another site' },
      429: { description: 'Locked out, or too many attempts in flight; Retry-After in seconds' },
    },
    handler: async (ctx, { body, em }) => {
      refuseCrossSiteLogin(ctx, deps.baseUrl(), deps.config.CORS_ALLOWED_ORIGINS);
      const rememberMe = body.remember_me === 'true' || body.remember_me === 'on' || body.remember_me === '1';
      const { user, ...started } = await accounts.logIn(em, { identifier: body.username, password: body.password, rememberMe, ip: ctx.ip });
      startSessionCookies(ctx, started);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { csrf_token: started.csrfToken, user: userView(user), billing: await billing.statusFor(em, user) };
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/auth/logout',
    summary: 'Ends this session and clears its cookies.',
    tags,
    access: 'session-only',
    responses: ok('Logged out'),
    handler: async (ctx, { caller }) => {
      await accounts.sessions.end(caller.session);
      clearSessionCookies(ctx);
      ctx.body = detail(ctx, 'auth.logged_out');
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/auth/logout-all',
    summary: "Ends every one of the user's sessions, this one included. API keys are not sessions and stay valid: revoke them with DELETE /api/v1/users/me/api-keys/{api_key_id}.",
    tags,
    access: 'session-only',
    responses: { 200: { description: 'Sessions ended', schema: z.object({ terminated_count: z.int() }) } },
    handler: async (ctx, { caller }) => {
      const terminated = await accounts.sessions.endAll(caller.user.id);
      clearSessionCookies(ctx);
      ctx.body = { terminated_count: terminated };
    },
  });

  /** A public "mail me a link" route: one per-IP limit shared by all of them, and the same answer whatever the address. */
  const mailLinkRoute = (
    path: string,
    summary: string,
    send: (ctx: AppContext, email: string) => Promise<void>,
    answer: 'auth.verification_sent' | 'auth.reset_sent',
  ) =>
    router.add({
      method: 'post',
      path,
      summary,
      tags,
      access: 'public',
      body: z.object({ email: Email }),
      responses: { ...ok('Same answer whatever the address'), 429: { description: 'More than 3 verification and reset mails per IP in 5 minutes' } },
      handler: async (ctx, { body }) => {
        await limit(ctx, 'link-mail', ctx.ip);
        await send(ctx, body.email);
        ctx.body = detail(ctx, answer);
      },
    });

  mailLinkRoute(
    '/api/v1/auth/send-verification',
    'Mails a new verification link if the address awaits verification. Always 200.',
    (ctx, email) => accounts.resendVerification(ctx.state.em, email),
    'auth.verification_sent',
  );

  router.add({
    method: 'post',
    path: '/api/v1/auth/verify-email',
    summary: 'Verifies the address with the token from the e-mailed link; grants the trial; sends the welcome e-mail.',
    tags,
    access: 'public',
    body: z.object({ token: Token }),
    responses: { ...ok('Verified'), 400: { description: 'Invalid or expired token' } },
    handler: async (ctx, { body, em }) => {
      await accounts.verifyEmail(em, body.token);
      ctx.body = detail(ctx, 'auth.email_verified');
    },
  });

  mailLinkRoute(
    '/api/v1/auth/forgot-password',
    'Mails a password-reset link if the address has an account. Always 200.',
    (ctx, email) => accounts.forgotPassword(ctx.state.em, email),
    'auth.reset_sent',
  );

  router.add({
    method: 'post',
    path: '/api/v1/auth/reset-password',
    summary: 'Sets a new password with a reset token (1 hour, once); every session of the user ends.',
    tags,
    access: 'public',
    body: z.object({ token: Token, new_password: Password }),
    responses: { ...ok('Password changed'), 400: { description: 'Invalid, expired or used token' } },
    handler: async (ctx, { body, em }) => {
      await accounts.resetPassword(em, body.token, body.new_password);
      clearSessionCookies(ctx);
      ctx.body = detail(ctx, 'auth.password_reset');
    },
  });

  router.add({
    method: 'get',
    path: `${OAUTH_PATH}/${PROVIDER_NAME}`,
    summary: "The identity provider's authorization address (with state, nonce and PKCE) to send the browser to.",
    tags,
    access: 'public',
    responses: { 200: { description: 'Where to go', schema: z.object({ url: z.url() }) }, 404: { description: 'No identity provider configured' } },
    handler: async (ctx) => {
      if (!oidc) throw NotFound('auth.oauth_not_configured');
      const { url, state } = await withOidcErrors(() => oidc.start());
      writeCookie(ctx, OAUTH_STATE_COOKIE, state, { maxAge: 600, httpOnly: true, secure: secure(), path: OAUTH_PATH });
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { url };
    },
  });

  router.add({
    method: 'get',
    path: `${OAUTH_PATH}/callback/${PROVIDER_NAME}`,
    summary: "The provider's redirect: creates or links the user, starts a session and redirects to the front end.",
    tags,
    access: 'public',
    query: z.looseObject({ code: z.string().optional(), state: z.string().optional(), error: z.string().optional() }),
    responses: { 302: { description: 'Session started; redirect to the front end' }, 400: { description: 'State, nonce or PKCE check failed, or no verified e-mail' } },
    handler: async (ctx, { em }) => {
      if (!oidc) throw NotFound('auth.oauth_not_configured');
      const browserState = ctx.cookies.get(OAUTH_STATE_COOKIE);
      writeCookie(ctx, OAUTH_STATE_COOKIE, '', { maxAge: 0, httpOnly: true, secure: secure(), path: OAUTH_PATH });
      const identity = await withOidcErrors(() => oidc.finish(new URLSearchParams(ctx.querystring), browserState));
      const { user } = await accounts.signInWithIdentity(em, identity, ctx.state.locale);
      startSessionCookies(ctx, await accounts.startSession(user, false));
      ctx.set('Cache-Control', 'no-store');
      ctx.redirect(`${deps.baseUrl()}/`);
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/auth/check-auth',
    summary: 'Who is logged in, with a CSRF token (a fresh one if the cookie is not recognized) and billing status.',
    tags,
    access: 'public',
    responses: { 200: { description: 'Authenticated or not', schema: CheckAuthResult } },
    handler: async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      const oauthProviders = oidc ? [PROVIDER_NAME] : [];
      const auth = await authenticate(ctx, accounts);
      if (!auth) {
        ctx.body = { authenticated: false, message: translate(ctx.state.locale, 'auth.not_authenticated'), oauth_providers: oauthProviders };
        return;
      }
      let csrfToken = ctx.cookies.get(CSRF_COOKIE);
      if (!csrfToken || !(await accounts.sessions.checkCsrfToken(auth.session, csrfToken))) {
        csrfToken = await accounts.sessions.issueCsrfToken(auth.session);
        setCsrfCookie(ctx, auth.session, csrfToken);
      }
      ctx.body = {
        authenticated: true,
        user: userView(auth.user),
        session: {
          created_at: auth.session.createdAt.toISOString(),
          expires_at: auth.session.expiresAt.toISOString(),
          remember_me: auth.session.rememberMe,
        },
        oauth_providers: oauthProviders,
        csrf_token: csrfToken,
        billing: await billing.statusFor(orm, auth.user),
      };
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/auth/change-password',
    summary: 'Changes the password (current one required unless the account has none); every session ends.',
    tags,
    access: 'session-only',
    body: z.object({ current_password: z.string().max(1024).optional(), new_password: Password }),
    responses: { ...ok('Password changed'), 400: { description: 'Current password missing or wrong' }, 429: { description: 'More than 5 in 300 s' } },
    handler: async (ctx, { body, caller, em }) => {
      const { user } = caller;
      await limit(ctx, 'change-password', user.id);
      await accounts.changePassword(em, user, { currentPassword: body.current_password, newPassword: body.new_password });
      clearSessionCookies(ctx);
      ctx.body = detail(ctx, 'auth.password_changed');
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/auth/request-email-change',
    summary: 'Mails a confirmation link to the new address and a notice to the current one. Same answer whether the address is taken.',
    tags,
    access: 'session-only',
    body: z.object({ new_email: Email, password: z.string().max(1024) }),
    responses: { ...ok('Same answer whatever the address'), 400: { description: 'Wrong password' }, 429: { description: 'More than 3 in 300 s' } },
    handler: async (ctx, { body, caller }) => {
      const { user } = caller;
      await limit(ctx, 'request-email-change', user.id);
      await accounts.requestEmailChange(user, { newEmail: body.new_email, password: body.password });
      ctx.body = detail(ctx, 'auth.email_change_sent');
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/auth/confirm-email-change',
    summary: 'Switches to the new address named in the token (once).',
    tags,
    access: 'public',
    body: z.object({ token: Token }),
    responses: { ...ok('Address changed'), 400: { description: 'Invalid, expired or used token' }, 409: { description: 'Address taken since the request' } },
    handler: async (ctx, { body, em }) => {
      await accounts.confirmEmailChange(em, body.token);
      ctx.body = detail(ctx, 'auth.email_changed');
    },
  });

  router.add({
    method: 'post',
    path: '/api/v1/auth/verify-password',
    summary: "Checks the user's password; nothing else happens.",
    tags,
    access: 'session-only',
    body: z.object({ password: z.string().max(1024) }),
    responses: { ...ok('Correct'), 400: { description: 'Incorrect' }, 429: { description: 'More than 10 checks in 300 s' } },
    handler: async (ctx, { body, caller }) => {
      const { user } = caller;
      await limit(ctx, 'password-check', user.id);
      await accounts.verifyPassword(user, body.password);
      ctx.body = detail(ctx, 'auth.password_confirmed');
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/users/me',
    summary: 'The logged-in user.',
    tags: ['users'],
    access: 'session',
    scope: 'read',
    responses: { 200: { description: 'The user', schema: UserRead } },
    handler: (ctx, { caller }) => {
      ctx.body = userView(caller.user);
    },
  });

  const supportedLocales = deps.config.SUPPORTED_LOCALES as [Locale, ...Locale[]];
  router.add({
    method: 'patch',
    path: '/api/v1/users/me',
    summary: 'Changes the name or the locale (one of SUPPORTED_LOCALES).',
    tags: ['users'],
    access: 'session',
    scope: 'write',
    body: z.strictObject({ name: Name.optional(), locale: z.enum(supportedLocales).optional() }),
    responses: { 200: { description: 'The user', schema: UserRead } },
    handler: async (ctx, { body, caller, em }) => {
      ctx.body = userView(await accounts.updateProfile(em, caller.user, body));
    },
  });

  router.add({
    method: 'delete',
    path: '/api/v1/users/me',
    summary: 'Deletes the account and its data (password-confirmed; not needed for accounts without one); every session ends.',
    tags: ['users'],
    access: 'session-only',
    body: z.object({ password: z.string().max(1024).optional() }),
    responses: { 204: { description: 'Deleted' }, 400: { description: 'Password missing or wrong' } },
    handler: async (ctx, { body, caller, em }) => {
      const { user } = caller;
      await limit(ctx, 'password-check', user.id);
      await accounts.deleteAccount(em, user, body.password);
      clearSessionCookies(ctx);
      ctx.status = 204;
    },
  });
}

/** Provider trouble is the server's (503); a callback that does not verify is the caller's (400). */
async function withOidcErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof OidcSignInError)) throw error;
    if (error.reason === 'unavailable') throw Unavailable('http.503', { cause: error });
    throw InvalidInput('auth.oauth_failed', { cause: error });
  }
}
