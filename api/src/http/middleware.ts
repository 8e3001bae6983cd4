import { randomBytes, randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { Logger } from 'pino';
import { RequestContext } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { DomainError, NotFound } from '../shared/errors.ts';
import { errorOfStatus, statusOf } from './errors.ts';
import { negotiateLocale, translate, type Locale } from '../i18n/index.ts';
import type { AppState } from './state.ts';
import type { HttpMetrics } from '../ops/metrics.ts';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Every response carries a request id: the caller's X-Request-Id when sane, else a fresh one. */
export function requestId(): Middleware<AppState> {
  return async (ctx, next) => {
    const given = ctx.get('X-Request-Id');
    ctx.state.requestId = REQUEST_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}

export function locale(supported: readonly Locale[]): Middleware<AppState> {
  return async (ctx, next) => {
    ctx.state.locale = negotiateLocale(ctx.get('Accept-Language'), supported);
    await next();
  };
}

/** An 8-character id that ties a 5xx answer to its log line. */
export function newSupportId(): string {
  return randomBytes(6).toString('base64url').slice(0, 8);
}

/**
 * The one place errors become responses: `{ detail }` localized from the catalogs,
 * 5xx with a support_id that is also logged, one JSON log line per request.
 */
export function errorsAndAccessLog(logger: Logger, metrics: HttpMetrics): Middleware<AppState> {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
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
        body.detail = translate(ctx.state.locale, 'http.500', { support_id: supportId });
        body.support_id = supportId;
      } else if (mapped) {
        body.detail = translate(ctx.state.locale, mapped.key, mapped.params);
        if (mapped.code) body.code = mapped.code;
        Object.assign(body, mapped.extra);
        for (const [name, value] of Object.entries(mapped.headers)) ctx.set(name, value);
      }
      ctx.status = status;
      ctx.body = body;
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
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

/** Maps what libraries throw (koa-body, http-errors) onto the catalog; anything else is a 500. */
function toDomainError(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error;
  const status = (error as { status?: unknown; statusCode?: unknown })?.status ?? (error as { statusCode?: unknown })?.statusCode;
  // A body whose Content-Encoding does not match its bytes fails in zlib, without a status.
  if (typeof (error as { code?: unknown })?.code === 'string' && (error as { code: string }).code.startsWith('Z_')) return errorOfStatus(400, 'request.malformed_body');
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  const type = (error as { type?: unknown }).type;
  if (type === 'entity.parse.failed' || (error instanceof SyntaxError)) return errorOfStatus(400, 'request.malformed_json');
  if (status === 400) return errorOfStatus(400, 'request.malformed_body');
  return errorOfStatus(status) ?? errorOfStatus(400);
}

export function bodyParser(maxBytes: number): Middleware<AppState> {
  return koaBody({
    json: true,
    urlencoded: true,
    text: false,
    multipart: false,
    jsonLimit: maxBytes,
    formLimit: maxBytes,
    jsonStrict: true,
    includeUnparsed: true,
    // DELETE too: deleting the account carries the password in its body.
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
    onError: (error) => {
      throw error;
    },
  }) as unknown as Middleware<AppState>;
}

/** A forked EntityManager per request, so no request sees another's identity map. */
export function entityManagerPerRequest(orm: MikroORM): Middleware<AppState> {
  return async (ctx, next) => {
    const em = orm.em.fork();
    ctx.state.em = em;
    await RequestContext.create(em, next);
  };
}
