import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { expect } from 'chai';
import { Client as UndiciClient } from 'undici';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { Client, createAccount, type TestAccount } from '../support/users.ts';
import { startNginx, type Nginx } from '../support/nginx.ts';
import { launchChromium } from '../support/browser.ts';
import type { Browser } from 'playwright-core';

/**
 * Issue 22 item 1: a stream the server ends (here by logout) must not leave a connection a
 * client takes for reusable, or the client's next request goes into a socket that discards it.
 * Each client runs 100 stream endings (10 users at once, 10 each), and after every one
 * logs in again on the same client: every login must be answered.
 */
const LANES = 10;
const ROUNDS = 10;
/**
 * A lost request is never answered (nginx would wait out its 60 s upstream timeout); an answered one
 * comes in milliseconds, or in seconds on two cores shared with another test worker's ffmpeg and
 * five Chromium pages (a stream's end once took more than 5 s to reach a page's script there).
 */
const REQUEST_TIMEOUT_MS = 15_000;

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

/** Global fetch (undici's pool) to `base`: the api itself, or nginx in front of it. */
function fetchTransport(app: TestApp, base = app.url): Transport {
  const at = (path: string, init?: RequestInit) => fetch(new URL(path, base), init);
  return {
    async openStream(cookie) {
      const response = await at('/api/v1/user-stream', { headers: { Cookie: cookie } });
      const reader = response.body!.getReader();
      await reader.read();
      return { ended: drained(() => reader.read()) };
    },
    async post(path, headers, body) {
      const response = await at(path, { method: 'POST', headers, body });
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

async function hundredEndings(app: TestApp, transportOf: (app: TestApp) => Transport, lanesCount = LANES, rounds = ROUNDS): Promise<string[]> {
  const accounts = await Promise.all(Array.from({ length: lanesCount }, () => createAccount(app)));
  const lanes = await Promise.all(
    accounts.map(async (account, lane) => {
      const transport = transportOf(app);
      try {
        // A client address per lane: concurrent logins of one address are held to the lockout's allowance.
        return await streamEndings(app, transport, account, rounds, `10.22.0.${lane + 1}`);
      } finally {
        await transport.close();
      }
    }),
  );
  return lanes.flat();
}

/**
 * A page on nginx's origin, as a front end runs: it logs in with fetch, opens an EventSource
 * on the user stream, another tab logs out, the stream ends (the EventSource's error), and
 * the page logs in again: `rounds` times. A lost request is a login answered 502 or not at all.
 */
async function browserEndings(app: TestApp, browser: Browser, appPage: string, rounds: number, ip: string): Promise<string[]> {
  const account = await createAccount(app);
  const context = await browser.newContext({ extraHTTPHeaders: { 'X-Forwarded-For': ip } });
  const failures: string[] = [];
  try {
    const page = await context.newPage();
    // A blank front-end page of the origin. (The reference page would do, but Swagger UI renders the
    // whole OpenAPI document on the page's thread after load: 12 s with five pages on two cores, in
    // which no event reaches a script and a stream's end waits past any timeout.)
    await page.goto(appPage);
    const credentials: string = form({ username: account.username, password: account.password });
    const login = (): Promise<number> =>
      page.evaluate(async (body: string) => {
        const response = await fetch('/api/v1/auth/login', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body, credentials: 'same-origin' });
        await response.text();
        return response.status;
      }, credentials);
    expect(await login()).to.equal(200);
    for (let round = 0; round < rounds; round++) {
      await page.evaluate(
        () =>
          new Promise<void>((resolve, reject) => {
            const source = new EventSource('/api/v1/user-stream');
            (globalThis as unknown as { stream: EventSource }).stream = source;
            source.onopen = () => resolve();
            source.onerror = () => reject(new Error('the stream did not open'));
          }),
      );
      const ended = page.evaluate(
        () =>
          new Promise<void>((resolve) => {
            const source = (globalThis as unknown as { stream: EventSource }).stream;
            source.onerror = () => (source.close(), resolve());
          }),
      );
      const other = new Client(app);
      for (const cookie of await context.cookies()) other.cookies.set(cookie.name, cookie.value);
      expect((await other.post('/api/v1/auth/logout')).status).to.be.below(300);
      await withTimeout(ended, 'the stream end');
      const status = await withTimeout(login(), 'login').catch((error: unknown) => (error as Error).message);
      if (status !== 200) {
        failures.push(`login answered ${status}`);
        expect(await login()).to.equal(200);
      }
    }
  } finally {
    await context.close();
  }
  return failures;
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

  describe('through nginx (a reverse proxy with keep-alive upstream connections)', () => {
    let nginx: Nginx;
    before(async () => {
      nginx = await startNginx(app.url);
    });
    after(async () => {
      await nginx?.close();
    });

    it('global fetch through nginx: the first POST after each of 100 server-ended streams is answered (no 502)', async () => {
      const failures = await hundredEndings(app, (target) => fetchTransport(target, nginx.url));
      expect(failures, await nginx.errors()).to.deep.equal([]);
    });

    it('headless Chromium through nginx: the login after each of 100 server-ended EventSource streams is answered (no 502)', async function () {
      // each ending waits for the stream's keepalive tick and a browser round trip: 5 pages of 20 at once
      this.timeout(300_000);
      const browser = await launchChromium();
      try {
        const failures = (await Promise.all([1, 2, 3, 4, 5].map((lane) => browserEndings(app, browser, nginx.appPage, 20, `10.22.1.${lane}`)))).flat();
        expect(failures, await nginx.errors()).to.deep.equal([]);
      } finally {
        await browser.close();
      }
    });
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
