import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { OpenAPIRegistry, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { Invalid } from '../shared/errors.ts';
import { zodErrorMap } from '../i18n/index.ts';
import type { AppContext, AppState } from './state.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type AnyObject = z.ZodObject<z.ZodRawShape>;

/** Who may call a route; the guard for each is handed to the router by the composition root. */
export type Access = 'public' | 'session' | 'superuser';

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

export interface RouteSpec<P extends AnyObject, Q extends AnyObject, B extends z.ZodType> {
  method: Method;
  /** OpenAPI-style template: `/api/v1/media/{media_item_id}`. */
  path: string;
  summary: string;
  tags: string[];
  access: Access;
  params?: P;
  query?: Q;
  body?: B;
  /** How the body arrives: JSON (default) or an HTML form. */
  bodyType?: 'json' | 'form';
  responses: Record<number, ResponseSpec>;
  handler: (
    ctx: AppContext,
    input: { params: z.infer<P>; query: z.infer<Q>; body: z.infer<B> },
  ) => Promise<void> | void;
}

export type Guards = Record<Exclude<Access, 'public'>, Middleware<AppState>>;

const empty = z.object({});

/**
 * Registers a route once for both Koa and the OpenAPI document, validating params,
 * query and body with the same zod schemas that describe them.
 */
export class ApiRouter {
  readonly koa = new Router<AppState>();
  readonly registry = new OpenAPIRegistry();
  readonly #guards: Guards;

  constructor(guards: Guards) {
    this.#guards = guards;
  }

  add<P extends AnyObject = typeof empty, Q extends AnyObject = typeof empty, B extends z.ZodType = z.ZodUndefined>(
    spec: RouteSpec<P, Q, B>,
  ): void {
    const koaPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
    const template = spec.path;
    const middleware: Middleware<AppState>[] = [
      async (ctx, next) => {
        ctx.state.routeTemplate = template;
        await next();
      },
    ];
    if (spec.access !== 'public') middleware.push(this.#guards[spec.access]);
    middleware.push(async (ctx) => {
      const locale = ctx.state.locale;
      const params = parseInput(spec.params ?? empty, ctx.params, 'path', locale);
      const query = parseInput(spec.query ?? empty, ctx.query, 'query', locale);
      const raw = (ctx.request as { body?: unknown }).body;
      const body = spec.body ? parseInput(spec.body, raw ?? {}, 'body', locale) : undefined;
      await spec.handler(ctx, { params, query, body } as never);
    });
    this.koa[spec.method](koaPath, ...middleware);
    this.registry.registerPath(toOpenApi(spec));
  }
}

function parseInput<T extends z.ZodType>(schema: T, value: unknown, where: string, locale: AppState['locale']): z.infer<T> {
  // PostgreSQL text cannot hold NUL: refuse it here as bad input rather than fail at the database.
  const nulAt = pathToNul(value, [where]);
  if (nulAt) throw Invalid('request.nul_character', { code: 'ValidationError', params: { field: nulAt } });
  const result = schema.safeParse(value, { error: zodErrorMap(locale) });
  if (result.success) return result.data;
  const errors = result.error.issues.map((issue) => ({
    field: [where, ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  const first = errors[0] ?? { field: where, message: '' };
  throw Invalid('request.validation', {
    code: 'ValidationError',
    params: { field: first.field, message: first.message },
    extra: { errors },
  });
}

function pathToNul(value: unknown, path: string[]): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path.join('.') : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, inner] of Object.entries(value)) {
    const found = key.includes('\u0000') ? [...path, key].join('.') : pathToNul(inner, [...path, key]);
    if (found) return found;
  }
  return null;
}

function toOpenApi<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(spec: RouteSpec<P, Q, B>): RouteConfig {
  const request: NonNullable<RouteConfig['request']> = {};
  if (spec.params) request.params = spec.params;
  if (spec.query) request.query = spec.query;
  if (spec.body) {
    const type = spec.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
    request.body = { content: { [type]: { schema: spec.body } }, required: true };
  }
  const responses: RouteConfig['responses'] = {};
  for (const [status, response] of Object.entries(spec.responses)) {
    responses[status] = response.schema
      ? { description: response.description, content: { [response.contentType ?? 'application/json']: { schema: response.schema } } }
      : { description: response.description };
  }
  responses.default = { description: 'Error', content: { 'application/json': { schema: ErrorBody } } };
  return {
    method: spec.method,
    path: spec.path,
    summary: spec.summary,
    tags: spec.tags,
    ...(spec.access === 'public' ? { security: [] } : {}),
    request,
    responses,
  };
}

export const ErrorBody = z
  .object({
    detail: z.string(),
    support_id: z.string().length(8).optional().describe('On 5xx only; also in the log line of the request.'),
    code: z.string().optional().describe('Named error type, e.g. ValidationError or MultipartCompleteError.'),
  })
  .meta({ id: 'Error' });
