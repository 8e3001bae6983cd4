import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { loadConfig } from '../../api/src/config.ts';
import { buildApp, createServices } from '../../api/src/app.ts';
import { createHttpServer } from '../../api/src/http/server.ts';
import type { TestApp } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';
import { eventually } from '../support/wait.ts';

const HEADERS_TIMEOUT_MS = 600;
const REQUEST_TIMEOUT_MS = 1200;
const KEEP_ALIVE_TIMEOUT_MS = 400;
const MAX_CONNECTIONS = 4;
/** Room for Node's connection check (every HEADERS_TIMEOUT_MS / 4) and a busy machine. */
const SLACK_MS = 1500;

/** The real app behind the api's own server (api/src/http/server.ts, as main.ts starts it), with small limits. */
async function startBoundedApp(env: Record<string, string> = {}): Promise<TestApp & { server: Server }> {
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    BCRYPT_COST: '4',
    LOG_LEVEL: 'warn',
    SSE_KEEPALIVE_SECONDS: '60', // a stream that says nothing for longer than every timeout below
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
    HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
    ...env,
  });
  const services = await createServices(config, { logDestination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  const { koa, router } = buildApp(services);
  const server = createHttpServer(koa.callback(), config, services.logger);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  services.baseUrl = url;
  return {
    url,
    server,
    services,
    router,
    logs: [],
    fetch: (path, init) => fetch(new URL(path, url), init),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await services.close();
    },
  };
}

interface Watched {
  socket: Socket;
  received: string;
  /** Resolves with the milliseconds from connecting to the server closing the socket. */
  closed: Promise<number>;
}

function open(app: TestApp, localAddress?: string): Promise<Watched> {
  const { port } = new URL(app.url);
  const started = Date.now();
  const socket = connect({ port: Number(port), host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
  const watched: Watched = {
    socket,
    received: '',
    closed: new Promise((resolve) => socket.once('close', () => resolve(Date.now() - started))),
  };
  socket.on('data', (chunk: Buffer) => (watched.received += chunk.toString()));
  socket.on('error', () => {});
  return new Promise((resolve) => socket.once('connect', () => resolve(watched)));
}

/** The milliseconds until the server closes the socket; fails if it is still open after `limitMs`. */
async function closedWithin(watched: Watched, limitMs: number): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the server kept the connection open for more than ${limitMs} ms`)), limitMs);
  });
  try {
    return await Promise.race([watched.closed, late]);
  } finally {
    clearTimeout(timer);
    watched.socket.destroy();
  }
}

/** `count` GET /healthz from `address`, each on a connection of its own: the status each got (0 when the connection was closed unanswered). */
async function servedHealthz(app: TestApp, address: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let request = 0; request < count; request++) {
    const watched = await open(app, address);
    watched.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await closedWithin(watched, 5000);
    statuses.push(Number(/^HTTP\/1\.1 (\d{3}) /.exec(watched.received)?.[1] ?? 0));
  }
  return statuses;
}

/** Connections the server holds now. */
function countOpen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

describe('idle and slow connections are closed (HTTP_*_TIMEOUT_MS, HTTP_MAX_CONNECTIONS)', () => {
  let app: Awaited<ReturnType<typeof startBoundedApp>>;
  before(async () => {
    app = await startBoundedApp();
  });
  after(() => app.close());

  it('a connection that opens and sends nothing is closed within HTTP_HEADERS_TIMEOUT_MS', async () => {
    const silent = await open(app);
    const after = await closedWithin(silent, HEADERS_TIMEOUT_MS + SLACK_MS);
    expect(after).to.be.at.least(HEADERS_TIMEOUT_MS - 50);
    expect(silent.received).to.match(/^(HTTP\/1\.1 408 |$)/);
  });

  it('a connection that sends its headers slowly is closed within HTTP_HEADERS_TIMEOUT_MS', async () => {
    const slow = await open(app);
    slow.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const trickle = setInterval(() => slow.socket.writable && slow.socket.write('X-Slow: y\r\n'), 100);
    try {
      await closedWithin(slow, HEADERS_TIMEOUT_MS + SLACK_MS);
    } finally {
      clearInterval(trickle);
    }
  });

  it('a request whose body trickles in gets 408 and is closed after HTTP_REQUEST_TIMEOUT_MS', async () => {
    const slow = await open(app);
    slow.socket.write('POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n');
    const trickle = setInterval(() => slow.socket.writable && slow.socket.write('a'), 100);
    try {
      const after = await closedWithin(slow, REQUEST_TIMEOUT_MS + SLACK_MS);
      expect(after).to.be.at.least(REQUEST_TIMEOUT_MS - 50);
      expect(slow.received).to.match(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(trickle);
    }
  });

  it('an idle keep-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const client = await open(app);
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await closedWithin(client, KEEP_ALIVE_TIMEOUT_MS + SLACK_MS);
    expect(client.received).to.match(/^HTTP\/1\.1 200 /);
    expect(client.received).to.match(/keep-alive/i);
  });

  it('at HTTP_MAX_CONNECTIONS a new connection takes the place of the one idle the longest; only when every connection is busy is it closed at once', async () => {
    const silent: Watched[] = [];
    for (let i = 0; i < MAX_CONNECTIONS; i++) silent.push(await open(app));
    const extra = await open(app);
    // the oldest silent one made room, at once (long before the headers timeout)
    expect(await closedWithin(silent[0]!, HEADERS_TIMEOUT_MS - 100)).to.be.below(HEADERS_TIMEOUT_MS - 100);
    extra.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await closedWithin(extra, 2000);
    expect(extra.received).to.match(/^HTTP\/1\.1 200 /);
    for (const watched of silent) watched.socket.destroy();
    await eventually(async () => ((await countOpen(app.server)) === 0 ? true : undefined), 'every connection closed');

    // every connection busy with a request whose body trickles in: a newcomer has no idle one to replace
    const busy = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => open(app)));
    for (const watched of busy) watched.socket.write('POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const refused = await open(app);
    expect(await closedWithin(refused, 1000)).to.be.below(1000);
    expect(refused.received).to.equal('');
    for (const watched of busy) watched.socket.destroy();
  });

  it('an event stream that stays silent outlives every one of those timeouts, and still delivers', async () => {
    const { user, client } = await signUpAndLogin(app);
    const response = await client.get('/api/v1/user-stream', { headers: { Accept: 'text/event-stream' } });
    expect(response.status).to.equal(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    try {
      expect(decoder.decode((await reader.read()).value)).to.contain(': connected');
      const next = reader.read();
      const wait = REQUEST_TIMEOUT_MS + HEADERS_TIMEOUT_MS + KEEP_ALIVE_TIMEOUT_MS + SLACK_MS;
      const early = await Promise.race([next, new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), wait))]);
      expect(early, 'the stream ended or spoke before anything was published').to.equal('still open');
      await app.services.bus.publishToUser(user.id, {
        type: 'media_failed',
        data: { media_file_uuid: 'f', media_item_uuid: 'i', display_name: null, error: 'test' },
      });
      const chunk = await next;
      expect(chunk.done).to.equal(false);
      expect(decoder.decode(chunk.value)).to.contain('event: media_failed');
    } finally {
      await reader.cancel();
    }
  });
});

describe('a crowd of streams, or one client address, cannot fill the server (issue 25 item 6)', () => {
  it('users holding streams up to the connection cap: past the stream budget (SSE_STREAM_SHARE_PERCENT of HTTP_MAX_CONNECTIONS) new streams get 503 with Retry-After, and other requests are still served', async () => {
    const app = await startBoundedApp({ HTTP_MAX_CONNECTIONS: '20', SSE_STREAM_SHARE_PERCENT: '50', SSE_MAX_CONNECTIONS_PER_USER: '5', HTTP_HEADERS_TIMEOUT_MS: '10000', HTTP_REQUEST_TIMEOUT_MS: '20000' });
    const streams: Response[] = [];
    try {
      const users = [await signUpAndLogin(app), await signUpAndLogin(app), await signUpAndLogin(app)];
      const refused: Response[] = [];
      for (const user of users) {
        for (let stream = 0; stream < 5; stream++) {
          const response = await user.client.get('/api/v1/user-stream');
          (response.status === 200 ? streams : refused).push(response);
        }
      }
      expect(streams).to.have.length(10);
      expect(refused.map((response) => response.status)).to.deep.equal([503, 503, 503, 503, 503]);
      expect(refused[0]!.headers.get('retry-after')).to.equal('60');
      expect(((await refused[0]!.json()) as { detail: string }).detail).to.match(/event stream/);
      const others = await Promise.all(Array.from({ length: 5 }, () => app.fetch('/healthz')));
      expect(others.map((response) => response.status)).to.deep.equal([200, 200, 200, 200, 200]);
      // A place comes back when a stream closes.
      await streams.pop()!.body?.cancel();
      const again = await eventually(async () => {
        const answer = await users[2]!.client.get('/api/v1/user-stream');
        return answer.status === 503 ? undefined : answer;
      }, 'a stream admitted once one closed', 3000, 100);
      expect(again.status).to.equal(200);
      streams.push(again);
    } finally {
      for (const response of streams) await response.body?.cancel();
      await app.close();
    }
  });

  it('attack: idle sockets from five client addresses fill HTTP_MAX_CONNECTIONS: every request from a sixth address is still served', async () => {
    const app = await startBoundedApp({ HTTP_MAX_CONNECTIONS: '20', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '4', HTTP_HEADERS_TIMEOUT_MS: '10000', HTTP_REQUEST_TIMEOUT_MS: '20000' });
    const held: Watched[] = [];
    try {
      for (const address of ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6']) for (let i = 0; i < 4; i++) held.push(await open(app, address));
      const statuses = await servedHealthz(app, '127.0.0.7', 30);
      // before: every one closed on arrival (the cap held by sockets that had sent nothing)
      expect(statuses.filter((status) => status !== 200), 'refused').to.deep.equal([]);
    } finally {
      for (const watched of held) watched.socket.destroy();
      await app.close();
    }
  });

  it("attack: refused event streams' keep-alive connections fill HTTP_MAX_CONNECTIONS: requests from another address are still served", async () => {
    const app = await startBoundedApp({ HTTP_MAX_CONNECTIONS: '12', SSE_STREAM_SHARE_PERCENT: '50', SSE_MAX_CONNECTIONS_PER_USER: '5', HTTP_KEEP_ALIVE_TIMEOUT_MS: '10000', HTTP_HEADERS_TIMEOUT_MS: '10000', HTTP_REQUEST_TIMEOUT_MS: '20000' });
    const streams: Response[] = [];
    const refusedStreams: Watched[] = [];
    try {
      const [first, second] = [await signUpAndLogin(app), await signUpAndLogin(app)];
      for (let stream = 0; stream < 5; stream++) streams.push(await first.client.get('/api/v1/user-stream'));
      streams.push(await second.client.get('/api/v1/user-stream'));
      expect(streams.map((response) => response.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
      const cookie = [...second.client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      // six more stream requests of the second user, each on a connection of its own: 503, and the connection kept alive
      for (let stream = 0; stream < 6; stream++) {
        const watched = await open(app, '127.0.0.2');
        watched.socket.write(`GET /api/v1/user-stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nCookie: ${cookie}\r\n\r\n`);
        await eventually(async () => (watched.received.includes('\r\n\r\n') ? true : undefined), 'the refusal');
        expect(watched.received).to.match(/^HTTP\/1\.1 503 /);
        refusedStreams.push(watched);
      }
      const statuses = await servedHealthz(app, '127.0.0.3', 20);
      // before: refused until the refused streams' keep-alive ran out
      expect(statuses.filter((status) => status !== 200), 'refused').to.deep.equal([]);
    } finally {
      for (const watched of refusedStreams) watched.socket.destroy();
      for (const response of streams) await response.body?.cancel();
      await app.close();
    }
  });

  it('one address holding HTTP_MAX_CONNECTIONS_PER_ADDRESS connections: its next one is closed at once, another address is still served', async () => {
    const app = await startBoundedApp({ HTTP_MAX_CONNECTIONS: '50', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '3', HTTP_HEADERS_TIMEOUT_MS: '10000', HTTP_REQUEST_TIMEOUT_MS: '20000' });
    try {
      const held = await Promise.all(Array.from({ length: 3 }, () => open(app, '127.0.0.2')));
      const extra = await open(app, '127.0.0.2');
      expect(await closedWithin(extra, 2000)).to.be.below(2000);
      const other = await open(app, '127.0.0.3');
      other.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await closedWithin(other, 5000);
      expect(other.received).to.match(/^HTTP\/1\.1 200 /);
      // A place comes back when one of its connections closes.
      held.pop()!.socket.destroy();
      const next = await eventually(async () => {
        const attempt = await open(app, '127.0.0.2');
        attempt.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        await attempt.closed;
        return attempt.received.startsWith('HTTP/1.1 200') ? attempt : undefined;
      }, 'a connection of that address served once one closed', 3000, 100);
      expect(next.received).to.match(/^HTTP\/1\.1 200 /);
      for (const watched of held) watched.socket.destroy();
    } finally {
      await app.close();
    }
  });
});
