import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { keptWhenTaken } from './detached-response.ts';

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
 * an idle keep-alive connection closes after HTTP_KEEP_ALIVE_TIMEOUT_MS, and connections
 * beyond HTTP_MAX_CONNECTIONS are closed on arrival, as are those of one client address
 * beyond HTTP_MAX_CONNECTIONS_PER_ADDRESS (one client cannot fill the server). Event streams
 * are not cut: their request is complete at once and they set their socket's idle timeout
 * to none; they have their own budget below HTTP_MAX_CONNECTIONS (api/src/events).
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
  server.maxConnections = config.HTTP_MAX_CONNECTIONS;

  // Open connections per client address; a socket taken off the server (a stream) still counts until it closes.
  const perAddress = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const open = perAddress.get(address) ?? 0;
    if (open >= config.HTTP_MAX_CONNECTIONS_PER_ADDRESS) {
      socket.destroy();
      server.emit('drop', { remoteAddress: address });
      return;
    }
    perAddress.set(address, open + 1);
    socket.once(
      'close',
      keptWhenTaken(() => {
        const left = (perAddress.get(address) ?? 1) - 1;
        if (left > 0) perAddress.set(address, left);
        else perAddress.delete(address);
      }),
    );
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
