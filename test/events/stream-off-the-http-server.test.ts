import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect } from 'chai';
import { MAX_UNSENT_BYTES, detachedCount } from '../../api/src/http/detached-response.ts';
import type { UserEvent } from '../../api/src/events/bus.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { dataOf, isEvent, openSse } from '../support/sse-stream.ts';
import { eventually } from '../support/wait.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const macrotask = () => new Promise((resolve) => setImmediate(resolve));

const mediaReady = (name: string): UserEvent => ({
  type: 'media_ready',
  data: { media_file_uuid: '00000000-0000-4000-8000-000000000001', media_item_uuid: '00000000-0000-4000-8000-000000000002', display_name: name, proxy_status: 'ready' },
});

/** cutroom_event_streams_open from the app's /metrics, for user streams held as `heldBy`. */
async function openGauge(app: TestApp, heldBy: 'socket' | 'response'): Promise<number> {
  const text = await (await app.fetch('/metrics')).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`cutroom_event_streams_open{stream="user",held_by="${heldBy}"} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** The Cookie header of a logged-in client. */
const cookieOf = (user: SignedIn) => [...user.client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');

/** How many Redis subscribers the user's channel has. */
async function subscribersOf(app: TestApp, user: SignedIn): Promise<number> {
  return Number(((await app.services.redis.pubsub('NUMSUB', app.services.bus.userChannel(user.user.id))) as [string, number])[1]);
}

/** The user stream over a bare TCP connection, as a client other than a browser speaks it: every byte it receives, unparsed. */
async function rawStream(app: TestApp, user: SignedIn, httpVersion: '1.0' | '1.1') {
  const { port } = new URL(app.url);
  const socket: Socket = connect(Number(port), '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  let closed = false;
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  socket.write(`GET /api/v1/user-stream HTTP/${httpVersion}\r\nHost: 127.0.0.1\r\nCookie: ${cookieOf(user)}\r\n\r\n`);
  await eventually(async () => (received.includes(': connected\n\n') ? true : undefined), 'the stream opens', 5000, 20);
  const headEnd = received.indexOf('\r\n\r\n');
  return {
    socket,
    head: received.slice(0, headEnd),
    /** The bytes after the head. */
    body: () => received.slice(headEnd + 4),
    closed: () => closed,
  };
}

/** A chunked body decoded: its payload, and whether the last chunk came. */
function dechunk(body: string): { payload: string; complete: boolean } {
  let payload = '';
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd < 0) return { payload, complete: false };
    const size = Number.parseInt(body.slice(at, lineEnd), 16);
    if (!Number.isInteger(size) || !/^[0-9a-f]+$/.test(body.slice(at, lineEnd))) throw new Error(`not a chunk size at ${at}: ${JSON.stringify(body.slice(at, at + 20))}`);
    if (size === 0) return { payload, complete: body.slice(lineEnd + 2, lineEnd + 4) === '\r\n' };
    const data = body.slice(lineEnd + 2, lineEnd + 2 + size);
    if (data.length < size) return { payload, complete: false };
    if (body.slice(lineEnd + 2 + size, lineEnd + 4 + size) !== '\r\n') throw new Error(`a chunk of ${size} bytes is not followed by CRLF`);
    payload += data;
    at = lineEnd + 4 + size;
  }
}

/**
 * An open stream lives for hours; on Node's HTTP server it would keep its connection's HTTP
 * parser, its request and response and Koa's context all that time. Once its head is out it
 * is taken off the server (api/src/http/detached-response.ts), and must still behave as an
 * HTTP response to every kind of client.
 */
describe('event streams are taken off the HTTP server once open (issue 14)', function () {
  this.timeout(30_000);
  let app: TestApp;
  let user: SignedIn;
  let subscribers: () => Promise<number>;

  before(async () => {
    app = await startTestApp({ SSE_KEEPALIVE_SECONDS: '60', SSE_MAX_CONNECTIONS_PER_USER: '5' });
    user = await signUpAndLogin(app);
    subscribers = () => subscribersOf(app, user);
  });
  after(() => app.close());

  it('open streams hold neither their request nor their response, and each gets every event in order', async () => {
    const requests: WeakRef<object>[] = [];
    const watch = (req: { url?: string }, res: object) => {
      if (req.url === '/api/v1/user-stream') requests.push(new WeakRef(req), new WeakRef(res));
    };
    app.server.prependListener('request', watch);
    const streams = await Promise.all([1, 2, 3].map(() => openSse(user.client, '/api/v1/user-stream')));
    app.server.removeListener('request', watch);
    try {
      for (const stream of streams) await stream.next((frame) => frame === ': connected');
      expect(requests).to.have.length(6);
      await eventually(async () => (detachedCount(app.server) === 3 ? true : undefined), 'all three are off the server', 5000, 20);
      expect(await openGauge(app, 'socket'), 'cutroom_event_streams_open, held by their socket').to.equal(3);
      expect(await openGauge(app, 'response')).to.equal(0);
      for (let round = 0; round < 3; round++) {
        await macrotask();
        gc();
      }
      expect(requests.filter((ref) => ref.deref() !== undefined), 'requests and responses still reachable').to.have.length(0);

      for (const name of ['first', 'second', 'third']) await app.services.bus.publishToUser(user.user.id, mediaReady(name));
      for (const stream of streams) {
        const names: string[] = [];
        for (let index = 0; index < 3; index++) names.push(dataOf(await stream.next(isEvent('media_ready'))).display_name);
        expect(names).to.deep.equal(['first', 'second', 'third']);
      }
    } finally {
      for (const stream of streams) stream.close();
    }
    await eventually(async () => (detachedCount(app.server) === 0 && (await subscribers()) === 0 ? true : undefined), 'the closed streams leave', 5000, 20);
    await eventually(async () => ((await openGauge(app, 'socket')) === 0 ? true : undefined), 'the gauge counts them out', 5000, 20);
  });

  it('HTTP/1.1: the body after the head is valid chunked coding; bytes the client sends (a pipelined request) are ignored', async () => {
    const stream = await rawStream(app, user, '1.1');
    try {
      expect(stream.head).to.match(/^HTTP\/1\.1 200 OK\r\n/);
      expect(stream.head.toLowerCase()).to.include('transfer-encoding: chunked');
      stream.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nnot http at all\r\n\r\n');
      await app.services.bus.publishToUser(user.user.id, mediaReady('after the pipelined request'));
      await eventually(async () => (dechunk(stream.body()).payload.includes('after the pipelined request') ? true : undefined), 'the event arrives', 5000, 20);
      const { payload, complete } = dechunk(stream.body());
      expect(payload.startsWith(': connected\n\nevent: media_ready\ndata: {')).to.equal(true);
      expect(complete).to.equal(false);
      expect(stream.body(), 'no answer to the pipelined request').not.to.include('HTTP/1.1');
    } finally {
      stream.socket.destroy();
    }
  });

  it('HTTP/1.0: the body is close-delimited, events written as they are', async () => {
    const stream = await rawStream(app, user, '1.0');
    try {
      expect(stream.head).to.match(/^HTTP\/1\.1 200 OK\r\n/);
      expect(stream.head.toLowerCase()).not.to.include('transfer-encoding');
      await app.services.bus.publishToUser(user.user.id, mediaReady('plain'));
      await eventually(async () => (stream.body().includes('"display_name":"plain"') ? true : undefined), 'the event arrives', 5000, 20);
      expect(stream.body()).to.match(/^: connected\n\nevent: media_ready\ndata: \{[^\n]*\}\n\n$/);
    } finally {
      stream.socket.destroy();
    }
  });

  it('a client that half-closes its connection ends its stream: the connection, the lease and the channel are let go', async () => {
    const stream = await rawStream(app, user, '1.1');
    await eventually(async () => ((await subscribers()) === 1 ? true : undefined), 'subscribed', 5000, 20);
    stream.socket.end();
    await eventually(async () => (stream.closed() ? true : undefined), 'the server closes the connection', 5000, 20);
    await eventually(async () => (detachedCount(app.server) === 0 && (await subscribers()) === 0 ? true : undefined), 'the stream leaves', 5000, 20);
    // Every lease is back: the user can open SSE_MAX_CONNECTIONS_PER_USER streams again.
    const streams = await Promise.all([1, 2, 3, 4, 5].map(() => openSse(user.client, '/api/v1/user-stream')));
    try {
      expect(streams.map((opened) => opened.response.status)).to.deep.equal([200, 200, 200, 200, 200]);
    } finally {
      for (const opened of streams) opened.close();
    }
  });

  it('a session that ends ends its stream without the last chunk: the body is visibly incomplete and the connection closes', async () => {
    const own = await startTestApp({ SSE_KEEPALIVE_SECONDS: '1' });
    try {
      const ownUser = await signUpAndLogin(own);
      const stream = await rawStream(own, ownUser, '1.1');
      expect((await ownUser.client.post('/api/v1/auth/logout')).status).to.be.lessThan(300);
      await eventually(async () => (stream.closed() ? true : undefined), 'the server closes the connection', 5000, 20);
      expect(dechunk(stream.body()).complete, 'no last chunk: no client may take the connection for reusable').to.equal(false);
      await eventually(async () => (detachedCount(own.server) === 0 ? true : undefined), 'the server lets the socket go', 5000, 20);
    } finally {
      await own.close();
    }
  });

  it('a client that stops reading is dropped once MAX_UNSENT_BYTES wait unsent: its lease and channel are let go', async () => {
    const reader = await signUpAndLogin(app);
    const stream = await rawStream(app, reader, '1.1');
    const channelSubscribers = () => subscribersOf(app, reader);
    await eventually(async () => ((await channelSubscribers()) === 1 ? true : undefined), 'subscribed', 5000, 20);
    stream.socket.pause();
    const large = 'x'.repeat(128 * 1024);
    let published = 0;
    // The kernel's buffers on both ends take some megabytes first; the bound is counted beyond them.
    while (detachedCount(app.server) > 0 && published < 400) {
      await app.services.bus.publishToUser(reader.user.id, mediaReady(`${published} ${large}`));
      published++;
      await macrotask();
    }
    expect(published * large.length, 'bytes published before the drop').to.be.greaterThan(MAX_UNSENT_BYTES);
    await eventually(async () => (detachedCount(app.server) === 0 && (await channelSubscribers()) === 0 ? true : undefined), 'the stream leaves', 5000, 20);
    stream.socket.destroy();
  });

  it('HEAD: the stream\'s head and an empty body, no lease and no channel taken', async () => {
    const response = await user.client.fetch('/api/v1/user-stream', { method: 'HEAD' });
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^text\/event-stream/);
    expect(await response.text()).to.equal('');
    expect(await subscribers()).to.equal(0);
    expect(detachedCount(app.server)).to.equal(0);
  });

  it('two stream requests pipelined on one connection: the first streams, and closing the connection lets both go', async () => {
    const piper = await signUpAndLogin(app);
    const channelSubscribers = () => subscribersOf(app, piper);
    const { port } = new URL(app.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => {});
    const request = `GET /api/v1/user-stream HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookieOf(piper)}\r\n\r\n`;
    socket.write(request + request);
    await eventually(async () => (received.includes(': connected\n\n') ? true : undefined), 'the first stream opens', 5000, 20);
    await app.services.bus.publishToUser(piper.user.id, mediaReady('pipelined'));
    await eventually(async () => (received.includes('"display_name":"pipelined"') ? true : undefined), 'the first stream gets the event', 5000, 20);
    expect(await openGauge(app, 'response'), 'the first stream stays on the server, written through its response').to.equal(1);
    socket.destroy();
    await eventually(async () => ((await openGauge(app, 'response')) === 0 ? true : undefined), 'the gauge counts it out', 5000, 20);
    await eventually(async () => ((await channelSubscribers()) === 0 ? true : undefined), 'both let go', 5000, 20);
    const streams = await Promise.all([1, 2, 3, 4, 5].map(() => openSse(piper.client, '/api/v1/user-stream')));
    try {
      expect(streams.map((opened) => opened.response.status), 'every lease is back').to.deep.equal([200, 200, 200, 200, 200]);
    } finally {
      for (const opened of streams) opened.close();
    }
  });

  it('a body taken off the server from inside the parser\'s callbacks (the head flushed while a request body is parsed) does not crash the process', async () => {
    // In a process of its own: freeing the parser while it runs is a segmentation fault, not an exception.
    const script = `
      import http from 'node:http';
      import net from 'node:net';
      import { openBody } from ${JSON.stringify(new URL('../../api/src/http/detached-response.ts', import.meta.url).pathname)};
      const server = http.createServer((req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.write(': connected\\n\\n', () => openBody(res, (body) => body?.write('event: done\\ndata: {}\\n\\n')));
      });
      server.listen(0, '127.0.0.1', () => {
        const socket = net.connect(server.address().port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 5\\r\\n\\r\\nhello'));
        let got = '';
        socket.on('data', (chunk) => {
          got += chunk;
          if (got.includes('event: done')) process.exit(0);
        });
      });
      setTimeout(() => process.exit(3), 5000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
    expect({ code, signal }).to.deep.equal({ code: 0, signal: null });
  });

  it("closing all of the server's connections ends the open streams too", async () => {
    const own = await startTestApp();
    try {
      const ownUser = await signUpAndLogin(own);
      const stream = await rawStream(own, ownUser, '1.1');
      expect(detachedCount(own.server)).to.equal(1);
      own.server.closeAllConnections();
      await eventually(async () => (stream.closed() ? true : undefined), 'the client sees the connection close', 5000, 20);
      expect(detachedCount(own.server)).to.equal(0);
    } finally {
      await own.close();
    }
  });
});
