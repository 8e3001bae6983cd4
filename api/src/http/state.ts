import type { ParameterizedContext } from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Locale } from '../i18n/index.ts';

/** What the middleware chain puts on `ctx.state` for handlers. */
export interface AppState {
  readonly requestId: string;
  readonly locale: Locale;
  /** The request's own EntityManager, forked on first use. */
  readonly em: EntityManager;
  /** Lets the request's EntityManager go for good (a long-lived stream holds its ctx for hours); reading `em` afterwards throws. */
  releaseEntityManager(): void;
  /** The caller the route's guard admitted (the router sets it; a handler is handed it, what runs around handlers reads it with the accounts' requireAuth(ctx)). */
  auth?: unknown;
  /** The matched route template, for metrics and logs. */
  routeTemplate?: string;
}

export type AppContext = ParameterizedContext<AppState>;
