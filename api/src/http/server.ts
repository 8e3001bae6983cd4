import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { isTaken, keptWhenTaken } from './detached-response.ts';

export type HttpServerConfig = Pick<
  Config,
  'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_KEEP_ALIVE_TIMEOUT_MS' | 'HTTP_MAX_CONNECTIONS' | 'HTTP_MAX_CONNECTIONS_PER_ADDRESS'
>;

const DROP_LOG_INTERVAL_MS = 60_000;

/** A request handler such as Koa's callback(), which answers its own errors (ctx.onerror): its promise never rejects. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/**
 * The api's HTTP server, bounded so that idle or slow clients cannot hold descriptors:
 * a connection must deliver a request's headers within HTTP_HEADERS_TIMEOUT_MS (also one
 * that sends nothing at all), a request must arrive whole within HTTP_REQUEST_TIMEOUT_MS,
 * an idle keep-alive connection closes after HTTP_KEEP_ALIVE_TIMEOUT_MS, and one client
 * address holds at most HTTP_MAX_CONNECTIONS_PER_ADDRESS connections (further ones are
 * closed on arrival). At HTTP_MAX_CONNECTIONS, a new connection takes the place of the
 * connection idle the longest — one that has not sent a whole request head yet, or waits
 * in keep-alive for its next request (a refused stream's among them) — and is closed on
 * arrival only when every connection is busy with a request or a stream: idle sockets, from
 * however many addresses, never keep a client out. Event streams are not cut: their request
 * is complete at once and they set their socket's idle timeout to none; they have their own
 * budget below HTTP_MAX_CONNECTIONS (api/src/events).
 */
export function createHttpServer(listener: RequestHandler, config: HttpServerConfig, logger?: Logger): Server {
  const server = createServer(
    {
      headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      // How often Node looks for connections past those timeouts: its default, 30 s, would stretch them.
      connectionsCheckingInterval: Math.max(100, Math.min(5_000, Math.floor(config.HTTP_HEADERS_TIMEOUT_MS / 4))),
    },
    // Not awaited: the handler answers its own errors (see RequestHandler).
    (req, res) => void listener(req, res),
  );

  // Every open connection (a socket taken off the server, a stream, counts until it closes), and
  // those idle now, oldest idle first (a Map keeps insertion order: an idle socket is re-inserted).
  const open = new Set<Socket>();
  const idle = new Map<Socket, true>();
  const perAddress = new Map<string, number>();

  const refuse = (socket: Socket, address: string) => {
    socket.destroy();
    server.emit('drop', { remoteAddress: address });
  };

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const fromAddress = perAddress.get(address) ?? 0;
    if (fromAddress >= config.HTTP_MAX_CONNECTIONS_PER_ADDRESS) return refuse(socket, address);
    if (open.size >= config.HTTP_MAX_CONNECTIONS) {
      const [oldestIdle] = idle.keys();
      if (!oldestIdle) return refuse(socket, address);
      forget(oldestIdle);
      oldestIdle.destroy();
    }
    perAddress.set(address, fromAddress + 1);
    open.add(socket);
    idle.set(socket, true);
    socket.once(
      'close',
      keptWhenTaken(() => {
        forget(socket);
        const left = (perAddress.get(address) ?? 1) - 1;
        if (left > 0) perAddress.set(address, left);
        else perAddress.delete(address);
      }),
    );
  });

  function forget(socket: Socket): void {
    open.delete(socket);
    idle.delete(socket);
  }

  // Busy from a request's head to the end of its response; then idle again (keep-alive) unless it became a stream.
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    idle.delete(socket);
    res.once('finish', () => {
      if (open.has(socket) && !socket.destroyed && !isTaken(server, socket)) idle.set(socket, true);
    });
  });

  let dropped = 0;
  let lastDropLog = 0;
  server.on('drop', () => {
    dropped++;
    const now = Date.now();
    if (now - lastDropLog < DROP_LOG_INTERVAL_MS) return;
    logger?.warn({ dropped, max_connections: config.HTTP_MAX_CONNECTIONS }, 'connection limit reached: new connections are being closed');
    lastDropLog = now;
    dropped = 0;
  });
  return server;
}
