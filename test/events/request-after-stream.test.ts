import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { expect } from 'chai';
import { Client as UndiciClient } from 'undici';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { Client, createAccount, type TestAccount } from '../support/users.ts';

/**
 * Issue 22 item 1: a stream the server ends (here by logout) must not leave a connection a
 * client takes for reusable, or the client's next request goes into a socket that discards it.
 * Each client runs 100 stream endings (10 users at once, 10 each), and after every one
 * logs in again on the same client: every login must be answered.
 */
const LANES = 10;
const ROUNDS = 10;
const REQUEST_TIMEOUT_MS = 5_000;

/** One HTTP client as an application holds it: the stream, and the requests after it, share its connections. */
interface Transport {
  /** Opens the stream with the cookie, resolves once the ': connected' comment arrived, with a promise of its end (clean or not). */
  openStream(cookie: string): Promise<{ ended: Promise<void> }>;
  post(path: string, headers: Record<string, string>, body: string): Promise<{ status: number; setCookies: string[] }>;
  close(): Promise<void>;
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

function cookiesOf(setCookies: string[]): Map<string, string> {
  const jar = new Map<string, string>();
  for (const line of setCookies) {
    const pair = line.split(';')[0] ?? '';
    const eq = pair.indexOf('=');
    jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
  }
  return jar;
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error as Error)),
    );
  });
}

const setCookiesOf = (headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): string[] => {
  const value = headers['set-cookie'];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
};

/** Reads a body to its end; an incomplete body (no last chunk) is an end like any other here. */
async function drained(read: () => Promise<{ done?: boolean }>): Promise<void> {
  try {
    while (!(await read()).done);
  } catch {
    // ended without its last chunk
  }
}

function nodeAgentTransport(app: TestApp): Transport {
  const agent = new Agent({ keepAlive: true });
  const url = new URL(app.url);
  const base = { host: url.hostname, port: url.port, agent };
  return {
    openStream: (cookie) =>
      new Promise((resolve, reject) => {
        const req = httpRequest({ ...base, path: '/api/v1/user-stream', headers: { Cookie: cookie } }, (res) => {
          res.setEncoding('utf8');
          const ended = new Promise<void>((done) => {
            res.on('end', done);
            res.on('error', () => done());
            res.on('aborted', () => done());
            res.on('close', () => done());
          });
          res.once('data', () => resolve({ ended }));
        });
        req.on('error', reject);
        req.end();
      }),
    post: (path, headers, body) =>
      new Promise((resolve, reject) => {
        const req = httpRequest({ ...base, method: 'POST', path, headers: { ...headers, 'Content-Length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, setCookies: setCookiesOf(res.headers) }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
      }),
    close: async () => agent.destroy(),
  };
}

function undiciTransport(app: TestApp): Transport {
  // One connection: the request after a stream can only go where the stream was.
  const client = new UndiciClient(app.url, { pipelining: 1 });
  return {
    async openStream(cookie) {
      const { body } = await client.request({ method: 'GET', path: '/api/v1/user-stream', headers: { cookie } });
      const iterator = body[Symbol.asyncIterator]();
      await iterator.next();
      return { ended: drained(() => iterator.next()) };
    },
    async post(path, headers, body) {
      const response = await client.request({ method: 'POST', path, headers, body });
      await response.body.dump();
      return { status: response.statusCode, setCookies: setCookiesOf(response.headers) };
    },
    close: () => client.close(),
  };
}

function fetchTransport(app: TestApp): Transport {
  return {
    async openStream(cookie) {
      const response = await app.fetch('/api/v1/user-stream', { headers: { Cookie: cookie } });
      const reader = response.body!.getReader();
      await reader.read();
      return { ended: drained(() => reader.read()) };
    },
    async post(path, headers, body) {
      const response = await app.fetch(path, { method: 'POST', headers, body });
      await response.arrayBuffer();
      return { status: response.status, setCookies: response.headers.getSetCookie() };
    },
    close: async () => {},
  };
}

/** Logs in on the transport, opens a stream, logs out from elsewhere, waits for the stream's end, logs in again: `rounds` times. */
async function streamEndings(app: TestApp, transport: Transport, account: TestAccount, rounds: number, ip: string): Promise<string[]> {
  const failures: string[] = [];
  const credentials = form({ username: account.username, password: account.password });
  const login = async () => {
    const answer = await withTimeout(transport.post('/api/v1/auth/login', { ...FORM, 'X-Forwarded-For': ip }, credentials), 'login');
    if (answer.status !== 200) throw new Error(`login answered ${answer.status}`);
    return cookiesOf(answer.setCookies);
  };
  let jar = await login();
  for (let round = 0; round < rounds; round++) {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const { ended } = await transport.openStream(cookie);
    // The logout comes from another connection (another tab); the stream ends at its next keepalive.
    const logout = new Client(app);
    for (const [name, value] of jar) logout.cookies.set(name, value);
    expect((await logout.post('/api/v1/auth/logout')).status).to.be.below(300);
    await withTimeout(ended, 'the stream end');
    try {
      jar = await login();
    } catch (error) {
      failures.push((error as Error).message);
      jar = await login();
    }
  }
  return failures;
}

async function hundredEndings(app: TestApp, transportOf: (app: TestApp) => Transport): Promise<string[]> {
  const accounts = await Promise.all(Array.from({ length: LANES }, () => createAccount(app)));
  const lanes = await Promise.all(
    accounts.map(async (account, lane) => {
      const transport = transportOf(app);
      try {
        // A client address per lane: concurrent logins of one address are held to the lockout's allowance.
        return await streamEndings(app, transport, account, ROUNDS, `10.22.0.${lane + 1}`);
      } finally {
        await transport.close();
      }
    }),
  );
  return lanes.flat();
}

describe('a request after an event stream is never lost', function () {
  this.timeout(180_000);
  let app: TestApp;

  before(async () => {
    app = await startTestApp({ SSE_KEEPALIVE_SECONDS: '1', TRUST_PROXY: 'true' });
  });
  after(async () => {
    await app.close();
  });

  it("Node's http.Agent({ keepAlive: true }): the first POST after each of 100 server-ended streams is answered", async () => {
    expect(await hundredEndings(app, nodeAgentTransport)).to.deep.equal([]);
  });

  it('undici with one connection: the first POST after each of 100 server-ended streams is answered', async () => {
    expect(await hundredEndings(app, undiciTransport)).to.deep.equal([]);
  });

  it('global fetch: the first POST after each of 100 server-ended streams is answered', async () => {
    expect(await hundredEndings(app, fetchTransport)).to.deep.equal([]);
  });

  it("the stream's head keeps the spec's Connection: keep-alive", async () => {
    const account = await createAccount(app);
    const client = new Client(app);
    await client.logIn(account.username, account.password);
    const controller = new AbortController();
    const response = await client.get('/api/v1/user-stream', { signal: controller.signal });
    expect(response.headers.get('connection')).to.equal('keep-alive');
    controller.abort();
  });
});
