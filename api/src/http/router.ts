import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { OpenAPIRegistry, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { Invalid, InvalidInput } from '../shared/errors.ts';
import { localizedIssueMessage, zodErrorMap, type MessageKey } from '../i18n/index.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppContext, AppState } from './state.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type AnyObject = z.ZodObject<z.ZodRawShape>;

/** What an API key must hold for a route that keys may call; a cookie session holds every scope. */
export const KEY_SCOPES = ['read', 'write', 'billing'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/**
 * Who may call a route; the guards that check it are handed to the router by the composition root.
 * 'session': a cookie session, or an API key holding the route's `scope`;
 * 'session-only': a cookie session, never a key (key management, password, account deletion);
 * 'superuser': either, as for 'session', for superusers only.
 */
type Access = 'public' | 'session' | 'session-only' | 'superuser';

/** Routes keys may call declare the scope a key needs (read, write or billing); the others declare none. */
type ScopeOf<A extends Access> = A extends 'session' | 'superuser' ? { scope: KeyScope } : { scope?: never };

/** The caller a route's handler is handed: none on a public route, a cookie session's on a 'session-only' one. */
type CallerOf<A extends Access, C, S> = A extends 'public' ? undefined : A extends 'session-only' ? S : C;

/** What the handler is handed: the validated input, the caller its access admits, and the request's EntityManager. */
export interface HandlerInput<P, Q, B, Caller> {
  params: P;
  query: Q;
  body: B;
  caller: Caller;
  /** The request's own EntityManager (ctx.state.em), forked when first read. */
  readonly em: EntityManager;
}

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
}

interface RouteDeclaration<P extends AnyObject, Q extends AnyObject, B extends z.ZodType, A extends Access, C, S> {
  method: Method;
  /** OpenAPI-style template: `/api/v1/media/{media_item_id}`. */
  path: string;
  summary: string;
  tags: string[];
  access: A;
  /**
   * The operation's name in the OpenAPI document, which generated clients turn into
   * method names; derived from the method and path when absent (see operationIdOf).
   */
  operationId?: string;
  params?: P;
  query?: Q;
  body?: B;
  /** How the body arrives: JSON (default) or an HTML form. */
  bodyType?: 'json' | 'form';
  responses: Record<number, ResponseSpec>;
  /**
   * Every POST with a caller (access other than 'public') takes an `Idempotency-Key`: a request
   * carrying one runs at most once per caller and key, and a retry with the same key and request
   * gets the first response (docs/api-idempotency.md); any other request carrying the header is
   * refused (400). `{ withheld: [...] }` names top-level response fields that are secrets shown
   * once (an API key, a signing secret): they are never stored, and a replay answers them as null.
   */
  idempotent?: IdempotentOptions;
  handler: (ctx: AppContext, input: HandlerInput<z.infer<P>, z.infer<Q>, z.infer<B>, CallerOf<A, C, S>>) => Promise<void> | void;
}

/** A route: its declaration, and the key scope it needs where keys may call it (a compile error when missing). */
export type RouteSpec<P extends AnyObject, Q extends AnyObject, B extends z.ZodType, A extends Access = Access, C = unknown, S = C> = RouteDeclaration<P, Q, B, A, C, S> & ScopeOf<A>;

/**
 * The checks behind each access level, answering the caller they admit or throwing (401, 403,
 * 429). `C` is the caller of a cookie session or API key, `S` that of a cookie session alone.
 */
export interface Guards<C = unknown, S extends C = C> {
  /** A cookie session, or an API key holding `scope`. */
  caller(ctx: AppContext, scope: KeyScope): Promise<C>;
  /** A cookie session; a request with an API key is refused. */
  sessionCaller(ctx: AppContext): Promise<S>;
  /** As `caller`, then refused unless the caller is a superuser. */
  superuser(ctx: AppContext, scope: KeyScope): Promise<C>;
}

export interface IdempotentOptions {
  /** Top-level fields of the JSON response kept out of the stored copy (secrets shown once); a replay has them null. */
  withheld?: readonly string[];
}

/** Runs an idempotent route's handler under the request's Idempotency-Key (api/src/idempotency/feature.ts). */
export interface IdempotentRequests {
  /** The request's Idempotency-Key, checked (400 when malformed); undefined without the header. */
  keyOf(ctx: AppContext): string | undefined;
  /** Runs `handle` at most once for the caller and key, or answers as the key's record says (replay, 409, 422). */
  run(ctx: AppContext, key: string, options: IdempotentOptions, handle: () => Promise<void>): Promise<void>;
}

/** The request header naming an idempotency key, and the response header marking a replayed answer. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

const empty = z.object({});

/** A route as @koa/router holds it (its method list and its path with `:name` parameters). */
export type RouteLayer = Router<AppState>['stack'][number];

/**
 * How many leading path segments pick a route's group: `/api/v1/projects/…` is matched only
 * against the patterns of the routes under `/api/v1/projects`, not against all of them.
 */
const GROUP_SEGMENTS = 3;

/**
 * The group of a path: its first GROUP_SEGMENTS segments (`/api/v1/projects`), or undefined
 * when it has fewer or one of them is empty. For a route's path, also undefined when one of
 * them is a parameter: such a route is in no group.
 */
function groupOf(path: string): string | undefined {
  let end = 0;
  for (let segment = 0; segment < GROUP_SEGMENTS; segment++) {
    const next = path.indexOf('/', end + 1);
    const segmentEnd = next === -1 ? path.length : next;
    if (path.charCodeAt(end) !== 47 /* / */ || segmentEnd === end + 1) return undefined;
    end = segmentEnd;
  }
  return path.slice(0, end);
}

/** A parameter, or what path-to-regexp reads as a wildcard, an optional part or a pattern. */
const PATTERN = /[:*{}()\\]/;
/** What can match across a `/`, which no route of the api does. */
const CROSSES_SEGMENTS = /[*{}()\\]/;

/**
 * Registers a route once for both Koa and the OpenAPI document, validating params,
 * query and body with the same zod schemas that describe them.
 *
 * Routes are held by @koa/router, one router per group of paths sharing their first three
 * segments (`/api/v1/projects`) and one for the rest; a request goes to its group's router
 * alone (a Map lookup), so it is matched against that group's patterns rather than all of the
 * api's. Every path a route matches lies in the route's group (its first three segments are
 * literal; a route with a parameter among them is refused when added), so a request is
 * matched, refused with 405 or answered 404 exactly as by one router holding every route.
 */
export class ApiRouter<C = unknown, S extends C = C> {
  readonly #registry = new OpenAPIRegistry();
  /**
   * OpenAPI descriptions still to be made (each route's, and what `describe` was given): they
   * are made when the registry is first read (the document is built on its first request),
   * not while the api starts.
   */
  readonly #undescribed: ((registry: OpenAPIRegistry) => void)[] = [];
  /** Every route, in the order added (the OpenAPI check and the body tests walk it). */
  readonly stack: RouteLayer[] = [];
  readonly #groups = new Map<string, Router<AppState>>();
  /** The routes in no group (`/healthz`, `/metrics`, …). */
  readonly #ungrouped = newRouter();
  readonly #guards: Guards<C, S>;
  readonly #idempotency: IdempotentRequests | undefined;

  constructor(guards: Guards<C, S>, idempotency?: IdempotentRequests) {
    this.#guards = guards;
    this.#idempotency = idempotency;
  }

  add<P extends AnyObject = typeof empty, Q extends AnyObject = typeof empty, B extends z.ZodType = z.ZodUndefined, A extends Access = Access>(
    spec: RouteSpec<P, Q, B, A, C, S>,
  ): void {
    const idempotency = takesIdempotencyKey(spec) ? this.#idempotency : undefined;
    const idempotentOptions = spec.idempotent ?? {};
    if (spec.idempotent && !takesIdempotencyKey(spec)) {
      throw new Error(`${spec.method.toUpperCase()} ${spec.path} withholds fields of idempotent replays: only a POST with a caller takes an Idempotency-Key`);
    }
    const koaPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
    const template = spec.path;
    const admit = this.#admission(spec);
    const serve = async (ctx: AppContext, caller: unknown): Promise<void> => {
      // a malformed key is refused before anything else, as is a key where none is taken (never silently ignored);
      // a body failing validation is refused before the key is used (nothing was carried out)
      if (!idempotency && ctx.get(IDEMPOTENCY_KEY_HEADER) !== '') throw InvalidInput('idempotency.not_taken', { code: 'IdempotencyKeyNotTaken' });
      const key = idempotency?.keyOf(ctx);
      const locale = ctx.state.locale;
      // a route without path parameters has none to check; a query string is checked even where none is taken
      const params = spec.params ? parseInput(spec.params, ctx.params, 'path', locale) : {};
      const query = spec.query || ctx.querystring ? parseInput(spec.query ?? empty, ctx.query, 'query', locale) : {};
      const raw = (ctx.request as { body?: unknown }).body;
      const body = spec.body ? parseInput(spec.body, raw ?? {}, 'body', locale) : undefined;
      const input = { params, query, body, caller, get em() { return ctx.state.em; } };
      const handle = async () => spec.handler(ctx, input as never);
      if (idempotency && key !== undefined) await idempotency.run(ctx, key, idempotentOptions, handle);
      else await handle();
    };
    // One middleware per route (the template for metrics and logs; the guard; the handler): fewer steps per request.
    const route: Middleware<AppState> = async (ctx) => {
      ctx.state.routeTemplate = template;
      const caller = admit && (await admit(ctx));
      // on ctx.state too, for what runs around the handler (idempotency keys are per caller)
      ctx.state.auth = caller;
      await serve(ctx, caller);
    };
    const router = this.#routerOf(koaPath);
    router[spec.method](koaPath, route);
    this.stack.push(router.stack.at(-1)!);
    this.#undescribed.push((registry) => registry.registerPath(toOpenApi(spec)));
  }

  /** Describes more of the document (webhooks, components) when the registry is first read, in the order given. */
  describe(register: (registry: OpenAPIRegistry) => void): void {
    this.#undescribed.push(register);
  }

  /** The guard of a route's access level, answering its caller; none for a public route. */
  #admission(spec: { access: Access; scope?: KeyScope }): ((ctx: AppContext) => Promise<C>) | undefined {
    const guards = this.#guards;
    const { access, scope } = spec;
    if (access === 'public') return undefined;
    if (access === 'session-only') return (ctx) => guards.sessionCaller(ctx);
    if (!scope) throw new Error(`${access} route without the key scope it needs`);
    return access === 'superuser' ? (ctx) => guards.superuser(ctx, scope) : (ctx) => guards.caller(ctx, scope);
  }

  /** The OpenAPI registry, every route added so far described in it, in the order added. */
  get registry(): OpenAPIRegistry {
    for (const describe of this.#undescribed.splice(0)) describe(this.#registry);
    return this.#registry;
  }

  /**
   * The middleware serving the routes: the request's group's router, then its 405 and 501
   * answers and OPTIONS (@koa/router's allowedMethods, throwing so the error middleware
   * answers them); a path of no route is left to the rest of the chain (404).
   */
  routes(): Middleware<AppState> {
    const serve = (router: Router<AppState>): Middleware<AppState> => {
      const routes = router.routes() as Middleware<AppState>;
      const allowedMethods = router.allowedMethods({ throw: true }) as Middleware<AppState>;
      return (ctx, next) => routes(ctx, () => allowedMethods(ctx, next));
    };
    // made per router when first needed, so a group added after this call is served too
    const served = new Map<Router<AppState>, Middleware<AppState>>();
    return (ctx, next) => {
      const group = groupOf(ctx.path);
      const router = (group !== undefined && this.#groups.get(group)) || this.#ungrouped;
      let middleware = served.get(router);
      if (!middleware) served.set(router, (middleware = serve(router)));
      return middleware(ctx, next);
    };
  }

  #routerOf(koaPath: string): Router<AppState> {
    // Each route must match only paths of its own group (or, in none, only paths in none).
    if (CROSSES_SEGMENTS.test(koaPath)) throw new Error(`${koaPath}: a route's path has literal segments and :parameters only`);
    const group = groupOf(koaPath);
    if (group !== undefined && PATTERN.test(group)) throw new Error(`${koaPath}: a parameter among a path's first ${GROUP_SEGMENTS} segments would match paths of every group`);
    if (group === undefined) return this.#ungrouped;
    let router = this.#groups.get(group);
    if (!router) this.#groups.set(group, (router = newRouter()));
    return router;
  }
}

// Paths are matched in their exact letter case: every middleware that looks at ctx.path (the
// per-address limit on /api/, the Stripe webhook's raw body) then sees the path the route has.
function newRouter(): Router<AppState> {
  return new Router<AppState>({ sensitive: true });
}

function parseInput<T extends z.ZodType>(schema: T, value: unknown, where: string, locale: AppState['locale']): z.infer<T> {
  // PostgreSQL text cannot hold NUL nor a lone surrogate: refuse them here as bad input rather than fail at the database.
  const unstorable = findUnstorableText(value, where);
  if (unstorable) throw Invalid(unstorable.key, { code: 'ValidationError', params: { field: unstorable.field } });
  const result = schema.safeParse(value, { error: zodErrorMap(locale) });
  if (result.success) return result.data;
  const errors = result.error.issues.map((issue) => ({
    field: [where, ...issue.path.map(String)].join('.'),
    message: localizedIssueMessage(locale, issue as { message: string; params?: Record<string, unknown> }),
  }));
  const first = errors[0] ?? { field: where, message: '' };
  throw Invalid('request.validation', {
    code: 'ValidationError',
    params: { field: first.field, message: first.message },
    extra: { errors },
  });
}

interface Visit {
  value: unknown;
  key: string;
  parent: Visit | undefined;
}

/** The dotted field name of a visit: `body.behavior_defaults.title`. */
function fieldOf(visit: Visit): string {
  const names: string[] = [];
  for (let at: Visit | undefined = visit; at; at = at.parent) names.push(at.key);
  return names.reverse().join('.');
}

/** Why a string cannot be stored as PostgreSQL text (UTF-8): a NUL, or a UTF-16 surrogate without its pair. */
function unstorableReason(text: string): MessageKey | null {
  if (text.includes('\u0000')) return 'request.nul_character';
  if (!text.isWellFormed()) return 'request.lone_surrogate';
  return null;
}

/**
 * A string or key anywhere in the input that PostgreSQL cannot store, with its dotted
 * field name. Walks with a stack of its own, so input depth never becomes call depth, and
 * allocates only for containers: a 1 MiB array of numbers is one loop.
 */
function findUnstorableText(input: unknown, where: string): { field: string; key: MessageKey } | null {
  if (typeof input === 'string') {
    const key = unstorableReason(input);
    return key ? { field: where, key } : null;
  }
  const pending: Visit[] = [{ value: input, key: where, parent: undefined }];
  for (let visit = pending.pop(); visit; visit = pending.pop()) {
    const container = visit.value;
    if (container === null || typeof container !== 'object') continue;
    const names = Array.isArray(container) ? undefined : Object.keys(container);
    const size = names ? names.length : (container as unknown[]).length;
    for (let index = 0; index < size; index++) {
      const name = names ? names[index]! : index;
      const inner = (container as Record<string | number, unknown>)[name];
      const key = (typeof name === 'string' && unstorableReason(name)) || (typeof inner === 'string' && unstorableReason(inner));
      if (key) return { field: `${fieldOf(visit)}.${name}`, key };
      if (inner !== null && typeof inner === 'object') pending.push({ value: inner, key: String(name), parent: visit });
    }
  }
  return null;
}

const MUTATING_METHODS = new Set<Method>(['post', 'put', 'patch', 'delete']);
const COMBINED_STATUSES = new Set([400, 403, 422]);

/**
 * A stable operationId from the method and the path below /api/v1: each static segment
 * in PascalCase, each parameter as `By` + its name, so `get /api/v1/projects/{project_uuid}/edits`
 * is `getProjectsByProjectUuidEdits`. Method and path identify a route, so the names are
 * unique, and they change only when the route does.
 */
export function operationIdOf(method: Method, path: string): string {
  const pascal = (words: string) =>
    words
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((word) => word[0]!.toUpperCase() + word.slice(1))
      .join('');
  const segments = path
    .replace(/^\/api\/v1(?=\/|$)/, '')
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const parameter = /^\{(\w+)\}$/.exec(segment);
      return parameter ? `By${pascal(parameter[1]!)}` : pascal(segment);
    });
  return method + (segments.join('') || 'Root');
}

/**
 * What the router itself answers for a route, whatever its handler does: 401 and (on a
 * mutation, for the CSRF header) 403 from the guards, 403 for a non-superuser, 422 from
 * validation (a query string is checked on every route), 404 for path parameters naming
 * nothing of the caller's, 400 and 413 for a body that cannot be read.
 */
function impliedResponses(spec: { method: Method; path: string; access: Access; scope?: KeyScope; params?: unknown; body?: unknown }): Record<number, string> {
  const implied: Record<number, string> = {};
  if (spec.body) {
    implied[400] = 'The body is not well-formed JSON (or form data)';
    implied[413] = 'The body is larger than MAX_JSON_BODY_BYTES';
  }
  if (spec.access !== 'public') implied[401] = 'No live session, or the Bearer API key is unknown, revoked, expired or malformed';
  const csrf = spec.access !== 'public' && MUTATING_METHODS.has(spec.method) ? 'The X-CSRF-Token header is missing or does not match the session' : undefined;
  const keyRefusal =
    spec.access === 'session-only'
      ? 'Called with an API key: this is done from a signed-in session only'
      : spec.access !== 'public'
        ? `The API key lacks the ${spec.scope} scope this route needs (named in the answer)`
        : undefined;
  const forbidden = [spec.access === 'superuser' ? 'The caller is not a superuser' : undefined, csrf, keyRefusal].filter((cause): cause is string => cause !== undefined);
  if (forbidden.length > 0) implied[403] = forbidden.join('; or: ');
  if (spec.params) implied[404] = 'Nothing of the caller\'s at this address';
  implied[422] = 'The path, query or body failed validation (code ValidationError, with `errors`)';
  if (!takesIdempotencyKey(spec)) implied[400] = [implied[400], 'An Idempotency-Key header, which only a POST with a caller takes (code IdempotencyKeyNotTaken)'].filter(Boolean).join('; or: ');
  if (spec.path.startsWith('/api/')) implied[429] = 'Too many requests from this address or API key (RATE_LIMIT_PER_IP, RATE_LIMIT_PER_API_KEY) or of this kind; Retry-After says when to try again';
  return implied;
}

/**
 * The security requirement of a route: none when public; else the session cookie (on a
 * mutation with the CSRF header as well), or a Bearer API key holding the route's scope
 * where keys are let in (OpenAPI 3.1 lets a non-OAuth scheme name the roles it needs).
 */
function securityOf(spec: { method: Method; access: Access; scope?: KeyScope }): RouteConfig['security'] {
  if (spec.access === 'public') return [];
  const session: Record<string, string[]> = MUTATING_METHODS.has(spec.method) ? { session: [], csrf: [] } : { session: [] };
  return spec.access === 'session-only' || !spec.scope ? [session] : [session, { apiKey: [spec.scope] }];
}

/** Whether a route takes an Idempotency-Key: every POST with a caller (keys are per user). */
function takesIdempotencyKey(spec: { method: Method; access: Access }): boolean {
  return spec.method === 'post' && spec.access !== 'public';
}

function toOpenApi<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(
  spec: Omit<RouteDeclaration<P, Q, B, Access, unknown, unknown>, 'handler'> & { scope?: KeyScope },
): RouteConfig {
  const request: NonNullable<RouteConfig['request']> = {};
  if (spec.params) request.params = spec.params;
  if (spec.query) request.query = spec.query;
  if (spec.body) {
    const type = spec.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
    request.body = { content: { [type]: { schema: spec.body } }, required: true };
  }
  const listed: Record<number, ResponseSpec> = { ...spec.responses };
  for (const [status, description] of Object.entries(impliedResponses(spec))) {
    const own = listed[Number(status)];
    // 401 and 404 mean the same whoever answers them; a route's own 400, 403 or 422 is one cause more beside the router's.
    if (!own) listed[Number(status)] = { description };
    else if (COMBINED_STATUSES.has(Number(status))) listed[Number(status)] = { ...own, description: `${own.description}; or: ${description}` };
  }
  const responses: RouteConfig['responses'] = {};
  const idempotent = takesIdempotencyKey(spec);
  const declared = idempotent ? withIdempotencyAnswers(listed) : listed;
  for (const [status, response] of Object.entries(declared)) {
    // An error answer without a body of its own is the error middleware's `{ detail, ... }`; a media type without a schema (an event stream) is still declared.
    const schema = response.schema ?? (Number(status) >= 400 ? ErrorBody : response.contentType ? z.string() : undefined);
    const headers = headersOf(Number(status), spec.path.startsWith('/api/'), idempotent);
    const withHeaders = headers ? { headers } : {};
    responses[status] = schema
      ? { description: response.description, ...withHeaders, content: { [response.contentType ?? 'application/json']: { schema } } }
      : { description: response.description, ...withHeaders };
  }
  if (idempotent) request.headers = IdempotencyKeyParameter;
  responses.default = { description: 'An unexpected failure (5xx, with support_id)', content: { 'application/json': { schema: ErrorBody } } };
  return {
    method: spec.method,
    path: spec.path,
    operationId: spec.operationId ?? operationIdOf(spec.method, spec.path),
    summary: spec.summary,
    tags: spec.tags,
    security: securityOf(spec),
    request,
    responses,
  };
}

/** What the error middleware (middleware.ts, errorsAndAccessLog) sends for every failure. */
export const ErrorBody = z
  .object({
    detail: z.string().describe("What went wrong, in the request's language (Accept-Language)."),
    code: z.string().optional().describe('Named error type, e.g. ValidationError or MultipartCompleteError.'),
    errors: z
      .array(z.object({ field: z.string().describe('Where: `body.name`, `query.limit`, `path.project_uuid`.'), message: z.string() }))
      .optional()
      .describe('On validation failures (code ValidationError): every field found wrong.'),
    support_id: z.string().length(8).optional().describe('On 5xx only; also in the log line of the request.'),
  })
  .meta({ id: 'Error' });

const IdempotencyKeyParameter = z.object({
  [IDEMPOTENCY_KEY_HEADER]: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x20-\x7e]+$/)
    .optional()
    .meta({
      description:
        'Makes a retry safe: the first request with this key (per user) is carried out, and for 24 hours the same key with the same request ' +
        'answers its response again (marked Idempotent-Replayed: true) without repeating the work. 1 to 255 printable ASCII characters, ' +
        'e.g. a UUID. The same key with another request is 422; while the first is still running, 409 with Retry-After. ' +
        'Responses of 5xx and 429 are not kept (retry with the same key). See docs/api-idempotency.md.',
    }),
});

/** The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers) an answer of a limited route carries. */
const RateLimitFields = {
  'RateLimit-Policy': z.string().optional().meta({ description: 'The quota policies this request counted against, e.g. `"ip";q=1200;w=60, "api-key";q=600;w=60`.' }),
  RateLimit: z.string().optional().meta({ description: 'What is left of each policy: `"ip";r=1195;t=47` (remaining requests and seconds to the window\'s reset).' }),
};

/** A 429's headers: when to try again, and the policies counted (where a quota refused). */
const RateLimitedHeaders = z.object({ 'Retry-After': z.string().meta({ description: 'Seconds until a retry may succeed.' }), ...RateLimitFields });

/** The headers an answer declares: a 429's Retry-After; the RateLimit fields on a limited route's answers; an idempotent route's replay marker. */
function headersOf(status: number, limited: boolean, idempotent: boolean): z.ZodObject | undefined {
  if (status === 429) return RateLimitedHeaders;
  if (status >= 500) return undefined;
  const fields = { ...(limited ? RateLimitFields : {}), ...(idempotent ? ReplayedField : {}) };
  return Object.keys(fields).length > 0 ? z.object(fields) : undefined;
}

const ReplayedField = {
  [IDEMPOTENT_REPLAYED_HEADER]: z
    .literal('true')
    .optional()
    .meta({ description: 'Present on a response replayed for a repeated Idempotency-Key: the work was not done again.' }),
};

/** An idempotent route's own answers plus the two the key adds (merged into a description the route already has for that status). */
function withIdempotencyAnswers(declared: Record<number, ResponseSpec>): Record<number, ResponseSpec> {
  const added: Record<number, string> = {
    400: 'The Idempotency-Key header is malformed (not 1 to 255 printable ASCII characters)',
    409: 'A request with the same Idempotency-Key is still running (Retry-After); retry to get its response',
    422: 'The Idempotency-Key was already used for a different request (method, path, query or body) (code IdempotencyKeyReused)',
  };
  const merged = { ...declared };
  for (const [status, description] of Object.entries(added)) {
    const own = merged[Number(status)];
    merged[Number(status)] = own ? { ...own, description: `${own.description}; or: ${description}` } : { description };
  }
  return merged;
}
