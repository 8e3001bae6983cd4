import type { ParameterizedContext } from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Locale } from '../i18n/index.ts';

/** What the middleware chain puts on `ctx.state` for handlers. */
export interface AppState {
  requestId: string;
  locale: Locale;
  /** The request's own forked EntityManager. */
  em: EntityManager;
  /** The caller, set by the session guard of the accounts feature; read it with its requireAuth(ctx) (http/ knows no feature). */
  auth?: unknown;
  /** The matched route template, for metrics and logs. */
  routeTemplate?: string;
}

export type AppContext = ParameterizedContext<AppState>;
