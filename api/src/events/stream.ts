import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { Logger } from 'pino';
import { SESSION_COOKIE, requireAuth } from '../accounts/guards.ts';
import type { SessionStore } from '../accounts/sessions.ts';
import { RateLimited } from '../shared/errors.ts';
import type { ApiRouter } from '../http/router.ts';
import type { AppContext } from '../http/state.ts';
import type { EventBus, UserEvent } from './bus.ts';
import type { StreamConnections } from './stream-connections.ts';
import type { ChannelSubscriber } from './stream-subscriber.ts';

export interface UserStreamDeps {
  bus: EventBus;
  subscriber: ChannelSubscriber;
  connections: StreamConnections;
  /** Re-checked on every keepalive: a stream ends with its session (logout, logout-all, expiry). */
  sessions: Pick<SessionStore, 'find'>;
  logger: Logger;
  keepaliveSeconds: number;
  maxConnectionsPerUser: number;
}

/** One SSE frame: a lowercase event name and its JSON data. */
export function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** GET /api/v1/user-stream: the caller's media_ready and media_failed events over SSE. */
export function registerUserStream(router: ApiRouter, deps: UserStreamDeps): void {
  router.add({
    method: 'get',
    path: '/api/v1/user-stream',
    summary: "Server-sent events of the caller's media: media_ready and media_failed, with a keepalive comment.",
    tags: ['events'],
    access: 'session',
    responses: {
      200: { description: 'An endless text/event-stream', contentType: 'text/event-stream' },
      401: { description: 'No active session' },
      429: { description: 'Too many open streams for this user (SSE_MAX_CONNECTIONS_PER_USER)' },
    },
    handler: (ctx) => openUserStream(ctx, deps),
  });
}

async function openUserStream(ctx: AppContext, deps: UserStreamDeps): Promise<void> {
  const { user, session } = requireAuth(ctx);
  const cookie = ctx.cookies.get(SESSION_COOKIE) ?? '';
  const limit = deps.maxConnectionsPerUser;
  const lease = await deps.connections.admit(user.id, limit, randomUUID());
  if (!lease) throw RateLimited(deps.keepaliveSeconds, 'stream.too_many_connections', { params: { limit } });

  const stream = new PassThrough();
  let stopListening: (() => Promise<void>) | undefined;
  let keepalive: NodeJS.Timeout | undefined;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(keepalive);
    void stopListening?.();
    lease.release().catch((error: unknown) => deps.logger.warn({ err: error }, 'releasing a stream lease failed'));
    stream.end();
  };
  ctx.req.on('close', close);
  stream.on('close', close);

  try {
    stopListening = await deps.subscriber.listen(deps.bus.userChannel(user.id), (message) => {
      const event = parseEvent(message);
      if (event && !closed) stream.write(sseFrame(event.type, event.data));
    });
  } catch (error) {
    close();
    throw error;
  }
  if (closed) return void stopListening();

  const tick = async () => {
    const alive = await deps.sessions.find(cookie).then(
      (current) => current?.key === session.key,
      (error: unknown) => {
        // A transient Redis failure should not drop every stream; the next tick checks again.
        deps.logger.warn({ err: error }, 'checking the session of a stream failed');
        return true;
      },
    );
    if (closed) return;
    if (!alive) return close();
    stream.write(': keepalive\n\n');
    lease.renew().catch((error: unknown) => deps.logger.warn({ err: error }, 'renewing a stream lease failed'));
  };
  keepalive = setInterval(() => void tick(), deps.keepaliveSeconds * 1000);

  // The stream lives far longer than any request timeout.
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.req.socket.setKeepAlive(true);
  ctx.status = 200;
  ctx.set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  // Headers and a first comment go out at once, so the client knows the stream is live.
  stream.write(': connected\n\n');
  ctx.body = stream;
}

function parseEvent(message: string): UserEvent | null {
  try {
    const event = JSON.parse(message) as UserEvent;
    return typeof event?.type === 'string' ? event : null;
  } catch {
    return null;
  }
}
