import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import canonicalize from 'canonicalize';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, type IdempotentOptions, type IdempotentRequests } from '../http/router.ts';
import type { AppContext, AppState } from '../http/state.ts';
import { Conflict, InvalidInput, Invalid } from '../shared/errors.ts';
import type { Clock } from '../shared/clock.ts';
import type { IdempotencyStore, Lease, StoredResponse } from './idempotency-store.ts';

/** 1 to 255 printable ASCII characters (Stripe's bound; a UUID fits). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The response headers replayed with the status and body; the rest (request id, security headers, cookies) are the replay's own. */
const KEPT_HEADERS = ['content-type', 'location', 'etag', 'last-modified', 'content-language'] as const;

/**
 * The largest body kept for replays. The idempotent routes answer a few KiB (a job, an
 * upload's first part URLs); a larger body keeps the key used but is not replayed (409).
 */
export const MAX_KEPT_BODY_BYTES = 256 * 1024;

export interface IdempotencyDeps {
  store: IdempotencyStore;
  clock: Clock;
  logger: Logger;
  /** The authenticated caller's user id (keys are scoped per user). */
  callerOf: (ctx: AppContext) => string;
}

export interface Idempotency {
  /** For the router: routes marked `idempotent` run through it. */
  requests: IdempotentRequests;
  /**
   * Keeps the first request's final response, after the error middleware has made one of
   * whatever the handler threw; mounted outside errorsAndAccessLog, so it sees every path.
   */
  recorder: Middleware<AppState>;
}

/** Stripe's semantics of Idempotency-Key on the routes marked idempotent (docs/api-idempotency.md). */
export function createIdempotency(deps: IdempotencyDeps): Idempotency {
  const { store } = deps;
  const leases = new WeakMap<AppContext, { lease: Lease; options: IdempotentOptions }>();

  const requests: IdempotentRequests = {
    keyOf(ctx) {
      const given = ctx.headers['idempotency-key'];
      if (given === undefined) return undefined;
      if (typeof given !== 'string' || !KEY_PATTERN.test(given)) {
        throw InvalidInput('idempotency.invalid_key', { code: 'ValidationError', extra: { errors: [{ field: `header.${IDEMPOTENCY_KEY_HEADER}`, message: 'must be 1 to 255 printable ASCII characters' }] } });
      }
      return given;
    },
    async run(ctx, key, options, handle) {
      const userId = deps.callerOf(ctx);
      const route = ctx.state.routeTemplate ?? ctx.path;
      const claim = await store.claim({ userId, key, requestHash: requestHash(ctx, route), method: ctx.method, route }, deps.clock.now());
      switch (claim.kind) {
        case 'owned':
          leases.set(ctx, { lease: claim.lease, options });
          return handle();
        case 'replay':
          return replay(ctx, claim.response);
        case 'running':
          throw Conflict('idempotency.in_progress', { code: 'IdempotencyKeyInUse', headers: { 'Retry-After': '1' } });
        case 'mismatch':
          throw Invalid('idempotency.key_reused', { code: 'IdempotencyKeyReused', params: { method: claim.method, route: claim.route } });
      }
    },
  };

  const recorder: Middleware<AppState> = async (ctx, next) => {
    try {
      await next();
    } finally {
      const held = leases.get(ctx);
      if (held) await settle(ctx, held.lease, held.options);
    }
  };

  /** Keeps the response, or frees the key when the request was not carried out; a failure here is logged, never the client's. */
  async function settle(ctx: AppContext, lease: Lease, options: IdempotentOptions): Promise<void> {
    try {
      const response = keptResponse(ctx, options.withheld ?? []);
      if (!response) {
        await store.release(lease);
        return;
      }
      if (!(await store.complete(lease, response, deps.clock.now()))) {
        deps.logger.warn({ request_id: ctx.state.requestId, route: ctx.state.routeTemplate }, 'idempotency key was taken over before its request finished');
      }
    } catch (error) {
      // The key stays leased: retries are 409 until the lease ends, then run afresh.
      deps.logger.error({ err: error, request_id: ctx.state.requestId, route: ctx.state.routeTemplate }, 'idempotency key could not be settled');
    }
  }

  return { requests, recorder };
}

/**
 * SHA-256 of the request in a canonical form (RFC 8785 JSON: key order and spacing do not
 * matter): method, route template, path parameters, query and parsed body.
 */
function requestHash(ctx: AppContext, route: string): string {
  const body = (ctx.request as { body?: unknown }).body;
  const canonical = canonicalize({ method: ctx.method, route, params: { ...ctx.params }, query: { ...ctx.query }, body: body ?? null });
  return createHash('sha256').update(canonical ?? '').digest('hex');
}

/**
 * The response to keep, or null when the request counts as not carried out: a 5xx (the
 * work failed or a dependency was down) or a 429, whose retry must run again (Stripe keeps
 * neither), or a streamed body, which cannot be read back.
 */
function keptResponse(ctx: AppContext, withheld: readonly string[]): StoredResponse | null {
  if (ctx.status >= 500 || ctx.status === 429) return null;
  const raw: unknown = ctx.body;
  let body: string | null;
  if (raw === undefined || raw === null) body = null;
  else if (typeof raw === 'string') body = raw;
  else if (Buffer.isBuffer(raw) || raw instanceof Readable || raw instanceof ReadableStream) return null;
  else body = JSON.stringify(withholding(raw, withheld));
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = ctx.response.get(name);
    if (value) headers[name] = value;
  }
  const omitted = body !== null && Buffer.byteLength(body) > MAX_KEPT_BODY_BYTES;
  return { status: ctx.status, headers, body: omitted ? null : body, omitted };
}

/** The body with the secrets shown once set to null (a copy: the client still gets them in the first answer). */
function withholding(body: unknown, withheld: readonly string[]): unknown {
  if (withheld.length === 0 || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const field of withheld) if (field in copy) copy[field] = null;
  return copy;
}

/** Answers the first response again, marked as replayed. */
function replay(ctx: AppContext, response: StoredResponse): void {
  if (response.omitted) {
    throw Conflict('idempotency.response_not_kept', { code: 'IdempotentResponseNotKept', params: { status: response.status, max_kib: MAX_KEPT_BODY_BYTES / 1024 } });
  }
  ctx.status = response.status;
  for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
  ctx.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
  if (response.body !== null) ctx.body = response.body;
}

