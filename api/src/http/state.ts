import type { ParameterizedContext } from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Locale } from '../i18n/index.ts';
import type { Auth } from '../accounts/guards.ts';

/** What the middleware chain puts on `ctx.state` for handlers. */
export interface AppState {
  requestId: string;
  locale: Locale;
  /** The request's own forked EntityManager. */
  em: EntityManager;
  /** Set by the session guard (accounts feature) for routes that need a session; read it with requireAuth(ctx). */
  auth?: Auth;
  /** The matched route template, for metrics and logs. */
  routeTemplate?: string;
}

export type AppContext = ParameterizedContext<AppState>;
