import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The body of a response that stays open for hours (an event stream): frames written in
 * the response's transfer coding, an end, and one notice when the connection is gone.
 */
export interface OpenBody {
  /** `socket` once taken off the HTTP server, `response` when written through the response. */
  readonly heldBy: 'socket' | 'response';
  write(chunk: string): void;
  end(): void;
  /** Called once, when the connection closes (either side, or `end`). */
  onClose(listener: () => void): void;
}

/** What Node's HTTP server keeps on a connection's socket (node:_http_server; checked on Node 24). */
interface ServerSocket extends Socket {
  parser?: HttpParser | null;
  server?: Server;
}
interface HttpParser {
  _consumed?: boolean;
  /** The request it parsed last: another than the response's own when one was pipelined behind it. */
  incoming?: unknown;
  unconsume(): void;
  remove(): void;
  close(): void;
}

/**
 * Bytes a body may hold unsent beyond what the kernel's socket buffers took: a client that
 * stops reading is dropped at this point (an event stream's client reconnects), instead of
 * the server buffering its events for as long as the connection stays open.
 */
export const MAX_UNSENT_BYTES = 1024 * 1024;

const KEPT_WHEN_TAKEN = new WeakSet<object>();

/** Marks a socket's close listener to stay when the socket is taken off the server (it holds nothing of a request). */
export function keptWhenTaken<T extends (...args: never[]) => unknown>(listener: T): T {
  KEPT_WHEN_TAKEN.add(listener);
  return listener;
}

/** The sockets taken off each HTTP server, so that closing all its connections ends them too. */
const detachedSockets = new WeakMap<Server, Set<Socket>>();

/** Whether `socket` was taken off this server (an open stream). */
export function isTaken(server: Server, socket: Socket): boolean {
  return detachedSockets.get(server)?.has(socket) ?? false;
}

/** How many sockets are held off this server's HTTP machinery now (open streams). */
export function detachedCount(server: Server): number {
  return detachedSockets.get(server)?.size ?? 0;
}

/**
 * The body of a response whose head has gone out, taken off Node's HTTP server when it can be.
 *
 * An open response on Node's HTTP server keeps its connection's HTTP parser (7 KB of native
 * memory), the request and response objects, and whatever listens for their end (Koa's
 * context): 25 KB of RSS per stream in all. A response that will only ever append to its
 * body needs none of it, so once its head and first bytes are flushed the socket is taken,
 * as Node itself does for an upgraded connection: the parser is freed, every listener of
 * the server and the framework leaves the socket, and the body is written to the socket in
 * the transfer coding the head announced (chunked for HTTP/1.1, close-delimited for 1.0).
 *
 * The taking happens in a macrotask of its own (`opened` is called there, with null if the
 * connection went meanwhile): the parser must not be freed while it runs, and the write
 * that flushed the head can complete inside one of its callbacks (a request with a body).
 * The response stays on the server when the connection already carries another request
 * (pipelined: the server answers it once this response ends, and cleans up after both when
 * the connection closes), for HEAD, and where the server's own fields of the socket are not
 * as expected (a Node version that changed them): its body is then written through `res`.
 */
export function openBody(res: ServerResponse, opened: (body: OpenBody | null) => void): void {
  setImmediate(() => {
    if (res.destroyed) return opened(null);
    opened(takeSocket(res) ?? responseBody(res));
  });
}

function takeSocket(res: ServerResponse): OpenBody | null {
  const socket = res.socket as ServerSocket | null;
  const parser = socket?.parser;
  const server = socket?.server;
  const detachable =
    socket && parser && server && parser.incoming === res.req && res.req.method !== 'HEAD' &&
    !res.writableEnded && res.headersSent && res.writableLength === 0 &&
    typeof parser.unconsume === 'function' && typeof parser.remove === 'function' && typeof parser.close === 'function';
  if (!detachable) return null;

  const chunked = (res as ServerResponse & { chunkedEncoding?: boolean }).chunkedEncoding === true;
  res.detachSocket(socket);
  // Everything still listening on the socket (the server's per-connection state, Koa's
  // on-finished, net's own half-close handling) holds the request or the response;
  // only the close listeners marked to stay (the per-address count) are put back.
  const kept = socket.listeners('close').filter((listener) => KEPT_WHEN_TAKEN.has(listener));
  socket.removeAllListeners();
  for (const listener of kept) socket.once('close', listener as () => void);
  if (parser._consumed) parser.unconsume();
  parser.remove();
  parser.close();
  socket.parser = null;
  return socketBody(socket, server, chunked);
}

function socketBody(socket: Socket, server: Server, chunked: boolean): OpenBody {
  let sockets = detachedSockets.get(server);
  if (!sockets) {
    sockets = new Set();
    detachedSockets.set(server, sockets);
    const set = sockets;
    const closeAllConnections = server.closeAllConnections.bind(server);
    server.closeAllConnections = () => {
      closeAllConnections();
      for (const detached of set) detached.destroy();
    };
  }
  const held = sockets;
  held.add(socket);
  let ended = false;
  const listeners: (() => void)[] = [];
  // A client sends nothing on an event stream: anything it does send is dropped, and its end closes the stream.
  socket.on('data', () => {});
  socket.on('end', () => socket.destroy());
  // The server may have stopped reading (bytes of a pipelined request arrived while the response was open).
  socket.resume();
  socket.on('error', () => socket.destroy());
  socket.once('close', () => {
    held.delete(socket);
    for (const listener of listeners) listener();
  });
  return {
    heldBy: 'socket',
    write(chunk) {
      // An empty chunk would end a chunked body.
      if (ended || socket.destroyed || chunk === '') return;
      socket.write(chunked ? asChunk(chunk) : chunk);
      if (socket.writableLength > MAX_UNSENT_BYTES) socket.destroy();
    },
    end() {
      if (ended) return;
      ended = true;
      if (socket.destroyed) return;
      // No last chunk: the server will read nothing more on this connection (its parser is gone), so the
      // body ends visibly incomplete and no client (keep-alive agent, undici, a proxy) takes it for reusable.
      // A complete body would let a client send its next request into a socket that discards it.
      socket.end();
    },
    onClose(listener) {
      if (socket.closed) queueMicrotask(listener);
      else listeners.push(listener);
    },
  };
}

/** The last chunk framed: an event reaches every stream of its channel in one loop, so it is framed once. */
let lastData: string | undefined;
let lastChunk = '';

function asChunk(data: string): string {
  if (data !== lastData) {
    lastChunk = `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
    lastData = data;
  }
  return lastChunk;
}

function responseBody(res: ServerResponse): OpenBody {
  return {
    heldBy: 'response',
    write(chunk) {
      if (chunk === '') return;
      res.write(chunk);
      if (res.writableLength > MAX_UNSENT_BYTES) res.destroy();
    },
    end: () => void res.end(),
    onClose(listener) {
      if (res.closed) queueMicrotask(listener);
      else res.once('close', listener);
    },
  };
}
