import { randomBytes, randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { DomainError, InvalidInput, NotFound, Unavailable } from '../shared/errors.ts';
import { errorOfStatus, statusOf } from './errors.ts';
import { negotiateLocale, translate, type Locale } from '../i18n/index.ts';
import type { AppState } from './state.ts';
import type { HttpMetrics } from '../ops/metrics.ts';
import { isDependencyOutage } from '../ops/dependency-outage.ts';
import { parseJsonBody } from './json-body.ts';
import { applySecurityHeaders } from './security-headers.ts';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * What every request carries on `ctx.state`: the request id, the negotiated locale, and
 * the request's own EntityManager, forked on first use (one fork, never two) by a getter
 * on the prototype, so routes served by prepared statements alone never pay for one and
 * every state has the same shape (a property defined per request would not).
 */
class RequestState implements AppState {
  auth: unknown = undefined;
  routeTemplate: string | undefined = undefined;
  readonly requestId: string;
  readonly locale: Locale;
  readonly #orm: MikroORM;
  #em: EntityManager | undefined = undefined;

  constructor(orm: MikroORM, requestId: string, locale: Locale) {
    this.#orm = orm;
    this.requestId = requestId;
    this.locale = locale;
  }

  #released = false;

  get em(): EntityManager {
    // A request that let its EntityManager go (an open stream) would otherwise fork a new one and hold it for hours.
    if (this.#released) throw new Error('this request released its EntityManager');
    return (this.#em ??= this.#orm.em.fork());
  }

  releaseEntityManager(): void {
    this.#em = undefined;
    this.#released = true;
  }
}

/**
 * Sets up `ctx.state`: the caller's X-Request-Id when sane, else a fresh one, echoed on
 * every response; the locale from Accept-Language; the lazily forked EntityManager.
 */
export function requestState(orm: MikroORM, supported: readonly Locale[]): Middleware<AppState> {
  return (ctx, next) => {
    const given = ctx.get('X-Request-Id');
    const id = REQUEST_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', id);
    ctx.state = new RequestState(orm, id, negotiateLocale(ctx.get('Accept-Language'), supported));
    return next();
  };
}

/** An 8-character id that ties a 5xx answer to its log line. */
function newSupportId(): string {
  return randomBytes(6).toString('base64url').slice(0, 8);
}

/**
 * The one place errors become responses: `{ detail }` localized from the catalogs,
 * 5xx with a support_id that is also logged, one JSON log line per request.
 */
export function errorsAndAccessLog(logger: Logger, metrics: HttpMetrics): Middleware<AppState> {
  return async (ctx, next) => {
    const started = performance.now();
    let supportId: string | undefined;
    let failure: unknown;
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw NotFound('request.unknown_route', { params: { method: ctx.method, path: ctx.path } });
      }
    } catch (error) {
      const mapped = toDomainError(error);
      const status = mapped ? statusOf(mapped) : 500;
      const body: Record<string, unknown> = {};
      if (status >= 500) {
        supportId = newSupportId();
        failure = error;
        // A mapped 5xx (a dependency down) says so in its own words; anything else is the generic 500.
        body.detail = translate(ctx.state.locale, mapped?.key ?? 'http.500', { ...mapped?.params, support_id: supportId });
        body.support_id = supportId;
      } else if (mapped) {
        body.detail = translate(ctx.state.locale, mapped.key, mapped.params);
        if (mapped.code) body.code = mapped.code;
        Object.assign(body, mapped.extra);
      }
      // Nothing of what the handler chose for its own answer (a looser CSP, a cache lifetime, another request id) applies to the error.
      if (!ctx.headerSent) {
        applySecurityHeaders(ctx.res);
        ctx.set('X-Request-Id', ctx.state.requestId);
        ctx.set('Cache-Control', 'no-store');
      }
      for (const [name, value] of Object.entries(mapped?.headers ?? {})) {
        // A policy that refuses joins those already announced (the address's, then the key's).
        const earlier = LIST_FIELDS.has(name) ? ctx.response.get(name) : '';
        ctx.set(name, earlier ? `${earlier}, ${value}` : value);
      }
      ctx.status = status;
      ctx.body = body;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      // Only route templates label metrics: raw paths would make series without bound.
      const route = ctx.state.routeTemplate ?? 'unmatched';
      metrics.observe(ctx.method, route, ctx.status, seconds);
      const line = {
        request_id: ctx.state.requestId,
        method: ctx.method,
        path: ctx.path,
        route,
        status: ctx.status,
        duration_ms: Math.round(seconds * 1000),
        ...(supportId ? { support_id: supportId, err: failure } : {}),
      };
      if (supportId) logger.error(line, 'request failed');
      else logger.info(line, 'request');
    }
  };
}

/** Header fields that are lists of items, one per rate-limit policy: an error's item is added, not put in place of the others. */
const LIST_FIELDS = new Set(['RateLimit', 'RateLimit-Policy']);

/** Seconds a client is asked to wait when PostgreSQL, Redis or another dependency is unreachable. */
const OUTAGE_RETRY_AFTER_SECONDS = 5;

/**
 * Maps what libraries throw (koa-body, http-errors) onto the catalog, and a dependency's
 * connection failure onto 503; anything else is a 500.
 */
function toDomainError(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error;
  if (isDependencyOutage(error)) {
    return Unavailable('request.dependency_unavailable', { headers: { 'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS) } });
  }
  const status = (error as { status?: unknown; statusCode?: unknown })?.status ?? (error as { statusCode?: unknown })?.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  const type = (error as { type?: unknown }).type;
  if (type === 'entity.parse.failed' || (error instanceof SyntaxError)) return errorOfStatus(400, 'request.malformed_json');
  if (status === 400) return errorOfStatus(400, 'request.malformed_body');
  return errorOfStatus(status) ?? errorOfStatus(400);
}

/** The JSON media types koa-body recognises by default, kept as they were. */
const JSON_TYPES = ['application/json', 'application/json-patch+json', 'application/vnd.api+json', 'application/csp-report', 'application/reports+json'];

/** Methods whose bodies are read: DELETE too, since deleting the account carries the password in its body. */
const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Reads JSON and form bodies up to `maxBytes`. koa-body reads JSON as text and
 * parseJsonBody parses it, so nesting is bounded before JSON.parse (koa-body has no hook
 * between reading and parsing). koa-body is loaded with the first request that has a
 * body to read, not at start-up.
 */
export function bodyParser(maxBytes: number): Middleware<AppState> {
  let reader: Promise<Middleware<AppState>> | undefined;
  const load = async (): Promise<Middleware<AppState>> => {
    const { HttpMethodEnum, koaBody } = await import('koa-body');
    return koaBody({
      json: false,
      text: true,
      textTypes: JSON_TYPES,
      textLimit: maxBytes,
      urlencoded: true,
      formLimit: maxBytes,
      multipart: false,
      includeUnparsed: true,
      parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
      onError: (error) => {
        throw error;
      },
    }) as unknown as Middleware<AppState>;
  };
  const readBody: Middleware<AppState> = async (ctx, next) => {
    reader ??= load();
    const read = await reader;
    try {
      await read(ctx, async () => {});
    } catch (error) {
      throw unreadableBody(error);
    }
    const request = ctx.request as { body?: unknown };
    if (typeof request.body === 'string' && ctx.is(JSON_TYPES)) request.body = parseJsonBody(request.body);
    await next();
  };
  // a request without a body to read goes on at once (no promise of its own)
  return (ctx, next) => (PARSED_METHODS.has(ctx.method) ? readBody(ctx, next) : next());
}

/**
 * What failed while reading a body: a library error with an HTTP status (413, 415, an
 * aborted request) stays as it is; one without (zlib, brotli: bytes that do not match
 * their Content-Encoding) is the body's fault, so 400 rather than 500.
 */
function unreadableBody(error: unknown): unknown {
  const status = (error as { status?: unknown } | undefined)?.status;
  if (error instanceof DomainError || typeof status === 'number') return error;
  return InvalidInput('request.malformed_body', { cause: error });
}
