import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import pg from 'pg';
import { loadConfig, type Config } from '../../api/src/config.ts';
import { checkResponsesAgainstDocument, type ContractCheck } from './contract.ts';
import { buildApp, createServices, type AppOptions, type BuiltApp, type Services, type ServiceOverrides } from '../../api/src/app.ts';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface TestApp {
  url: string;
  /** The app's HTTP server (Koa's listen). */
  server: Server;
  services: Services;
  router: BuiltApp['router'];
  /** Every JSON log line the app wrote, parsed. */
  logs: LogLine[];
  /** fetch against the app: relative paths resolve to its address. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** The test file whose code is calling (from the stack), or null when none is on it. */
function callingTestFile(): string | null {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 50;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  return /\/test\/[^\s:()]+\.test\.ts/.exec(stack)?.[0] ?? null;
}

let appsStartedBy: string | null = null;

/**
 * Jobs an earlier test file left unfinished (its apps closed mid-job, or queued more than
 * they ran) are settled as cancelled before another file's first app starts: the local job runner
 * would take them up as unfinished work of a previous process, and spend the next file's
 * time (and its tests' waits for an idle runner) on renders and probes of finished tests.
 * A file's own leftovers stay for its later apps, which is what its recovery tests restart for.
 */
async function cancelJobsOfEarlierFiles(databaseUrl: string): Promise<void> {
  const file = callingTestFile();
  if (file === null || file === appsStartedBy) return;
  appsStartedBy = file;
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2_000, query_timeout: 5_000 });
  try {
    await client.connect();
    await client.query(
      // completed_at is what the outbox and the runners go by: a job is unfinished until it is set
      `update jobs set status = 'cancelled', error = 'left by an earlier test file', finished_at = coalesce(finished_at, now()), completed_at = now() where completed_at is null`,
    );
  } catch {
    // the database is down on purpose (a test of a start without it): nothing can run those jobs either
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Starts the real app on a free port against the run's PostgreSQL database, Redis key
 * prefix and embedded S3 (see global.ts); `env` overrides configuration knobs.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  overrides: ServiceOverrides = {},
  appOptions: AppOptions = {},
): Promise<TestApp> {
  const config: Config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    PORT: '0',
    LOG_LEVEL: 'info',
    BCRYPT_COST: '4',
    // One run's tests all come from 127.0.0.1 within minutes: the per-address limit is off unless a test sets it.
    RATE_LIMIT_PER_IP: '0',
    ...env,
  });
  await cancelJobsOfEarlierFiles(config.DATABASE_URL);
  const logs: LogLine[] = [];
  const logDestination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logs.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const services = await createServices(config, { logDestination, ...overrides });
  const { koa, router } = buildApp(services, appOptions);
  const server: Server = await new Promise((resolve) => {
    const s = koa.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  services.baseUrl = url;
  const app: TestApp = {
    url,
    server,
    services,
    router,
    logs,
    fetch: (path, init) => fetch(new URL(path, url), init),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await services.close();
    },
  };
  // CONTRACT_CHECK=1: every answer of every app checked against the served document, violations failing the app's close.
  if (process.env.CONTRACT_CHECK === '1') await failCloseOnContractViolations(app);
  return app;
}

/**
 * Checks every answer of the app against its served document (test/support/contract.ts)
 * and makes `close()` fail, listing them, when any answer was not what the document says.
 */
export async function failCloseOnContractViolations(app: TestApp): Promise<ContractCheck> {
  const check = await checkResponsesAgainstDocument(app);
  const close = app.close;
  app.close = async () => {
    check.stop();
    await close();
    if (check.violations.length) throw new Error(`answers the OpenAPI document does not describe:\n${[...new Set(check.violations)].join('\n')}`);
  };
  return check;
}

/** A response's JSON body, loosely typed for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function json(response: Response): Promise<any> {
  return response.json();
}
