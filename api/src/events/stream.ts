import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { SESSION_COOKIE, requireAuth, type AppRouter } from '../accounts/guards.ts';
import type { SessionStore } from '../accounts/sessions.ts';
import type { ApiKeys } from '../api-keys/service.ts';
import { ProjectUuidParams } from '../projects/schemas.ts';
import { RateLimited, Unavailable } from '../shared/errors.ts';
import type { ResponseSpec } from '../http/router.ts';
import type { AppContext } from '../http/state.ts';
import { openBody, type OpenBody } from '../http/detached-response.ts';
import type { EventBus } from './bus.ts';
import { eventCatalog, streamEventTypes, type Stream } from './catalog.ts';
import type { StreamMetrics } from '../ops/metrics.ts';
import type { StreamBudget, StreamConnections, StreamKind } from './stream-connections.ts';
import type { ChannelSubscriber } from './stream-subscriber.ts';

/** What every event stream needs: the channels, the per-user cap and the session check. */
export interface StreamDeps {
  bus: EventBus;
  subscriber: ChannelSubscriber;
  /** Per-user leases in Redis: each kind of stream counts against its own SSE_MAX_CONNECTIONS_PER_USER. */
  connections: StreamConnections;
  /** This process's streams, below HTTP_MAX_CONNECTIONS (SSE_STREAM_SHARE_PERCENT of it). */
  budget: StreamBudget;
  /** Re-checked on every keepalive: a stream ends with its session (logout, logout-all, expiry). */
  sessions: Pick<SessionStore, 'find'>;
  /** Likewise for a stream opened with an API key: it ends when the key is revoked or expires. */
  apiKeys: Pick<ApiKeys, 'isLive'>;
  logger: Logger;
  metrics: StreamMetrics;
  keepaliveSeconds: number;
  maxConnectionsPerUser: number;
}

export type UserStreamDeps = StreamDeps;

export interface ProjectStreamDeps extends StreamDeps {
  /** The spec's rule for the project stream: throws 404 for a missing project, 403 for another user's. */
  authorize(em: EntityManager, userId: string, projectId: string): Promise<void>;
}

/** One SSE frame: a lowercase event name and its JSON data. */
function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A stream's events as the document describes them, from the catalog: each frame's name, its data's fields, and when it is sent. */
function framesOf(stream: Stream): string {
  const frames = streamEventTypes(stream).map((type) => {
    const { data, about } = eventCatalog[type];
    return `\`${type}\` { ${Object.keys(data.shape).join(', ')} }: ${about}`;
  });
  return `An endless text/event-stream of frames \`event: <name>\` with JSON \`data\`, and keepalive comments. Events: ${frames.join('; ')}.`;
}

/** The names of a stream's events, in the catalog's order. */
const namesOf = (stream: Stream, last: string) => {
  const names = streamEventTypes(stream);
  return names.length > 1 ? `${names.slice(0, -1).join(', ')}${last}${names.at(-1)}` : names.join('');
};

const streamResponses = {
  401: { description: 'No active session, or an unknown, revoked or expired API key' },
  403: { description: 'The API key lacks the read scope' },
  429: { description: 'Too many open streams of this kind for this user (SSE_MAX_CONNECTIONS_PER_USER per kind)' },
  503: { description: "The events channel could not be subscribed in time (Redis unavailable), or this process's stream budget (SSE_STREAM_SHARE_PERCENT of HTTP_MAX_CONNECTIONS) is spent; with Retry-After" },
} satisfies Record<number, ResponseSpec>;

/** GET /api/v1/user-stream: the caller's media_ready and media_failed events over SSE. */
export function registerUserStream(router: AppRouter, deps: UserStreamDeps): void {
  router.add({
    method: 'get',
    path: '/api/v1/user-stream',
    summary: `Server-sent events of the caller's media: ${namesOf('user', ' and ')}, with a keepalive comment.`,
    tags: ['events'],
    access: 'session',
    scope: 'read',
    responses: { ...streamResponses, 200: { description: framesOf('user'), contentType: 'text/event-stream' } },
    handler: (ctx, { caller }) => openEventStream(ctx, deps, { kind: 'user', channel: deps.bus.userChannel(caller.user.id) }),
  });
}

/** GET /api/v1/projects/{project_uuid}/events: the project's analysis and export events over SSE. */
export function registerProjectStream(router: AppRouter, deps: ProjectStreamDeps): void {
  router.add({
    method: 'get',
    path: '/api/v1/projects/{project_uuid}/events',
    summary:
      `Server-sent events of one project: ${namesOf('project', ', ')}. ` +
      "Every export event carries export_uuid and every analysis event analysis_run_id (the run's id), so concurrent exports and successive analyses are told apart. A new stream first gets the project's latest analysis_progress (kept 1 hour while the analysis runs); a keepalive comment follows every SSE_KEEPALIVE_SECONDS.",
    tags: ['events'],
    access: 'session',
    scope: 'read',
    params: ProjectUuidParams,
    responses: {
      ...streamResponses,
      200: { description: framesOf('project'), contentType: 'text/event-stream' },
      401: { description: 'No active session (or the user was deleted), or an unknown, revoked or expired API key' },
      403: { description: "Another user's project, or the API key lacks the read scope" },
      404: { description: 'No such project' },
    },
    handler: async (ctx, { params, caller, em }) => {
      const projectId = params.project_uuid;
      await deps.authorize(em, caller.user.id, projectId);
      await openEventStream(ctx, deps, { kind: 'project', channel: deps.bus.projectChannel(projectId), opening: () => deps.bus.progressSnapshot(projectId) });
    },
  });
}

interface StreamSource {
  kind: StreamKind;
  channel: string;
  /** A message to send before any other (the progress snapshot), read once the channel is subscribed. */
  opening?: () => Promise<string | null>;
}

/** Who a stream serves, as plain values: nothing of the ORM. */
interface StreamCaller {
  userId: string;
  /** Whether the session or the key the stream was opened with still lives (asked at every keepalive). */
  alive: () => Promise<boolean>;
}

/**
 * Runs a function in the async context this module was loaded in, not the request's:
 * whatever a request keeps in async context (MikroORM's RequestContext holds its
 * EntityManager) would otherwise live as long as the timers and connections a stream starts.
 */
const outsideRequests = AsyncLocalStorage.snapshot();

/**
 * Takes the caller off the request once the opening checks are done, and drops the
 * request's EntityManager and ORM-loaded user: Koa keeps `ctx` until the response ends,
 * so whatever `ctx.state` holds would otherwise live as long as the stream.
 */
function releaseRequest(ctx: AppContext, deps: StreamDeps): StreamCaller {
  const auth = requireAuth(ctx);
  const caller = { userId: auth.user.id, alive: stillAlive(deps, auth.apiKey?.id, auth.session?.key, ctx.cookies.get(SESSION_COOKIE) ?? '') };
  ctx.state.auth = undefined;
  ctx.state.releaseEntityManager();
  return caller;
}

/** Its own scope, of plain values: the check a stream's keepalive makes keeps nothing of the request. */
function stillAlive(deps: StreamDeps, keyId: string | undefined, sessionKey: string | undefined, cookie: string): () => Promise<boolean> {
  if (keyId !== undefined) return () => deps.apiKeys.isLive(keyId);
  return async () => (await deps.sessions.find(cookie))?.key === sessionKey;
}

/**
 * Answers the request with an SSE stream of the channel's events, for as long as the
 * client stays and its session lives, holding one of the user's connection leases.
 * Call it after the opening checks: from here on the request's ORM state is gone.
 */
function openEventStream(ctx: AppContext, deps: StreamDeps, source: StreamSource): Promise<void> {
  const caller = releaseRequest(ctx, deps);
  return outsideRequests(() => serveEventStream(ctx, deps, source, caller));
}

/** The spec's response headers of an event stream. */
const STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

async function serveEventStream(ctx: AppContext, deps: StreamDeps, source: StreamSource, { userId, alive }: StreamCaller): Promise<void> {
  // HEAD (routed to every GET route): the stream's head and nothing more; no lease, no channel.
  if (ctx.method === 'HEAD') {
    ctx.status = 200;
    ctx.set(STREAM_HEADERS);
    return;
  }
  const place = deps.budget.take();
  if (!place) throw Unavailable('stream.busy', { headers: { 'Retry-After': String(deps.keepaliveSeconds) } });
  const limit = deps.maxConnectionsPerUser;
  const lease = await deps.connections.admit(userId, source.kind, limit, randomUUID()).catch((error: unknown) => {
    place();
    throw error;
  });
  if (!lease) {
    place();
    throw RateLimited(deps.keepaliveSeconds, 'stream.too_many_connections', { params: { limit } });
  }

  // Frames due before the body is open (the opening message, held messages, events while the head goes out) wait here, in order.
  let unsent: string[] = [];
  let body: OpenBody | undefined;
  let uncount: (() => void) | undefined;
  const write = (chunk: string) => (body ? body.write(chunk) : unsent.push(chunk));
  let stopListening: (() => Promise<void>) | undefined;
  let keepalive: NodeJS.Timeout | undefined;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(keepalive);
    place();
    void stopListening?.();
    lease.release().catch((error: unknown) => deps.logger.warn({ err: error }, 'releasing a stream lease failed'));
    body?.end();
    uncount?.();
  };
  ctx.res.once('close', close);

  const deliver = (message: string) => {
    const frame = frameOf(message);
    if (frame !== null && !closed) write(frame);
  };
  // Messages arriving while the opening message is read wait behind it.
  let held: string[] | undefined = source.opening ? [] : undefined;
  let lost: Error | undefined;
  try {
    stopListening = await deps.subscriber.listen(
      source.channel,
      (message) => (held ? held.push(message) : deliver(message)),
      // The channel is no longer subscribed: ending the stream makes the client reconnect and subscribe again.
      (error) => {
        lost = error;
        close();
      },
    );
    if (source.opening) {
      const opening = await source.opening();
      const waiting = held ?? [];
      held = undefined;
      // Published after the subscription, it is among the held messages, in its place.
      if (opening !== null && !waiting.includes(opening)) deliver(opening);
      for (const message of waiting) deliver(message);
    }
  } catch (error) {
    close();
    throw error;
  }
  // Lost while the opening message was read: the headers have not gone out, so say so.
  if (lost) throw Unavailable('http.503', { cause: lost });
  if (closed) return void stopListening();

  const tick = async () => {
    const live = await alive().catch((error: unknown) => {
      // A transient Redis (or PostgreSQL) failure should not drop every stream; the next tick checks again.
      deps.logger.warn({ err: error }, 'checking the session or key of a stream failed');
      return true;
    });
    if (closed) return;
    if (!live) return close();
    write(': keepalive\n\n');
    lease.renew().catch((error: unknown) => deps.logger.warn({ err: error }, 'renewing a stream lease failed'));
  };
  keepalive = setInterval(() => void tick(), deps.keepaliveSeconds * 1000);

  // The stream lives far longer than any request timeout.
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.req.socket.setKeepAlive(true);
  // Koa writes nothing more; the status stays on ctx for the access log.
  ctx.respond = false;
  ctx.status = 200;
  ctx.set(STREAM_HEADERS);
  // Headers and a first comment go out at once, so the client knows the stream is live.
  const first = [...unsent, ': connected\n\n'].join('');
  unsent = [];
  sendHead(ctx.res, first, (opened) => {
    if (!opened) return close();
    body = opened;
    body.onClose(close);
    if (closed) return body.end();
    uncount = deps.metrics.opened(source.kind, body.heldBy);
    for (const chunk of unsent) body.write(chunk);
    unsent = [];
  });
}

/**
 * Writes the head and the first frame, then hands over the open body once they are flushed
 * (null when the connection went first). Its own scope: the closures of a stream keep
 * nothing of the request or the response.
 */
function sendHead(res: ServerResponse, first: string, opened: (body: OpenBody | null) => void): void {
  res.writeHead(200);
  res.write(first, (error) => (error ? opened(null) : openBody(res, opened)));
}

/** The last message and its frame: a message reaches every stream of its channel in one loop, so it is parsed once. */
let lastMessage: string | undefined;
let lastFrame: string | null = null;

function frameOf(message: string): string | null {
  if (message !== lastMessage) {
    const event = parseEvent(message);
    lastFrame = event ? sseFrame(event.type, event.data) : null;
    lastMessage = message;
  }
  return lastFrame;
}

function parseEvent(message: string): { type: string; data: unknown } | null {
  try {
    const event = JSON.parse(message) as { type?: unknown; data?: unknown };
    return typeof event?.type === 'string' ? { type: event.type, data: event.data } : null;
  } catch {
    return null;
  }
}
