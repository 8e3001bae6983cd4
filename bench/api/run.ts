/**
 * Request efficiency of the api: Cutroom (`node api/src/main.ts`, started as a user
 * starts it: default log level, local job backend, embedded S3) against the bare
 * baseline (baseline.ts: Koa + pg + ioredis doing the same Redis and SQL I/O, the same
 * JSON) on the same database and Redis, measured in alternating runs, for the project
 * list, check-auth and project creation at concurrency 10 and 50, with a session cookie and
 * (list, creation) with an API key, after one unmeasured pass of every scenario on both (V8
 * optimises a fresh process's hot code in its first seconds). The medians of the rounds count.
 * The general rate limits stay on, set too high to refuse, so their cost is in every request.
 * Targets (issue 42 item 2): throughput ≥ 0.9× the baseline's and CPU per request ≤ 1.2× on
 * each; p99 < 20 ms at concurrency 10 for the reads.
 *
 *   node bench/api/run.ts        (BENCH_ROUNDS=3, BENCH_SECONDS=5 by default)
 *   BENCH_ONLY=list              runs the scenarios whose name contains it
 *   BENCH_PROFILE_DIR=/tmp/prof  writes CPU profiles of both there (node --cpu-prof; file names begin cutroom- and baseline-)
 *   BENCH_AGAINST=<dir>          also runs the api of another checkout (<dir>/api/src/main.ts, e.g. a clone at an earlier
 *                                commit) in the same alternation, and prints its ratios beside Cutroom's: before and after
 *                                measured in one run, on one machine's load (no RESULT lines for it)
 *   BENCH_API=bundle             runs Cutroom as the api image does: api/dist/main.js (hack/build-api.sh builds it when
 *                                stale) started with the CMD of api/Dockerfile, its Node flags included
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, promisify } from 'node:util';
import bcrypt from 'bcrypt';
import pg from 'pg';
import { startEmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { runLoad, type LoadRequest, type LoadResult } from './load.ts';
import { API_MAIN, ROOT, benchDatabase, dropRedisKeys, cpuSeconds, imageCommand, median, startServer, type ServerProcess } from './servers.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const warmupSeconds = 1;
/** The unmeasured pass of every scenario before the rounds. */
const WARMUP_PASS_SECONDS = 3;
const THROUGHPUT_TARGET = 0.9;
const CPU_TARGET = 1.2;
const P99_TARGET_MS = 20;
const READERS = 10;
const WRITERS = 5;
const PROJECTS_PER_READER = 20;
const PASSWORD = 'bench-password-1';

interface Account {
  id: string;
  cookie: string;
  csrfToken: string;
  apiKey: string;
}

interface Scenario {
  name: string;
  concurrency: number;
  expectStatus: number;
  next: (worker: number) => LoadRequest;
  /** Gated on p99 as well as throughput. */
  latencyTarget: boolean;
}

const id = randomBytes(4).toString('hex');
const database = await benchDatabase(`cutroom_bench_${id}`);
const s3Dir = await mkdtemp(join(tmpdir(), 'cutroom-bench-s3-'));
const s3 = await startEmbeddedS3({ directory: s3Dir, bucket: 'cutroom-bench' });
const env = {
  DATABASE_URL: database.url,
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0',
  REDIS_KEY_PREFIX: `cutroom-bench:${id}:`,
  SECRET_KEY: randomBytes(32).toString('base64url'),
  S3_ENDPOINT: s3.endpoint,
  S3_BUCKET: s3.bucket,
  JOB_BACKEND: 'local',
  // Counted on every request as in production, never reached: thousands of requests a second from one address and key.
  RATE_LIMIT_PER_IP: '1000000000',
  RATE_LIMIT_PER_API_KEY: '1000000000',
};
const servers: ServerProcess[] = [];
try {
  process.stdout.write(`${cpus().length} CPUs; starting Cutroom and the baseline…\n`);
  const profileDir = process.env.BENCH_PROFILE_DIR;
  const profiled = (name: string) => (profileDir ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}-\${pid}.cpuprofile`] } : {});
  const api = process.env.BENCH_API === 'bundle' ? await bundledApi() : { script: API_MAIN, nodeArgs: [] };
  process.stdout.write(`Cutroom: node ${[...api.nodeArgs, api.script].join(' ')}; load average ${loadavg().map((load) => load.toFixed(1)).join(' ')}\n`);
  const cutroomOptions = profiled('cutroom');
  const cutroom = await startServer('cutroom', api.script, env, { ...cutroomOptions, nodeArgs: [...api.nodeArgs, ...(cutroomOptions.nodeArgs ?? [])] });
  servers.push(cutroom);
  const baseline = await startServer('baseline', fileURLToPath(new URL('./baseline.ts', import.meta.url)), env, profiled('baseline'));
  servers.push(baseline);
  // Another checkout's api, on the same database and Redis (its sessions and keys are Cutroom's own).
  const against = process.env.BENCH_AGAINST ? await startServer('against', join(process.env.BENCH_AGAINST, 'api/src/main.ts'), env) : undefined;
  if (against) servers.push(against);
  const contenders = against ? [cutroom, baseline, against] : [cutroom, baseline];

  const readers = await seedAccounts(cutroom.url, database.url, READERS, PROJECTS_PER_READER);
  const writers = await seedAccounts(cutroom.url, database.url, WRITERS, 0);
  const cookies = (account: Account) => `session=${account.cookie}; csrf_token=${account.csrfToken}`;
  const reader = (worker: number) => readers[worker % readers.length]!;
  const writer = (worker: number) => writers[worker % writers.length]!;
  let created = 0;
  const list = (worker: number): LoadRequest => ({ method: 'GET', path: '/api/v1/projects/', headers: { Cookie: cookies(reader(worker)) } });
  const checkAuth = (worker: number): LoadRequest => ({ method: 'GET', path: '/api/v1/auth/check-auth', headers: { Cookie: cookies(reader(worker)) } });
  const bearer = (account: Account) => `Bearer ${account.apiKey}`;
  const listByKey = (worker: number): LoadRequest => ({ method: 'GET', path: '/api/v1/projects/', headers: { Authorization: bearer(reader(worker)) } });
  const newProject = () => JSON.stringify({ name: `Bench project ${++created}` });
  const create = (worker: number): LoadRequest => ({
    method: 'POST',
    path: '/api/v1/projects/',
    headers: { Cookie: cookies(writer(worker)), 'X-CSRF-Token': writer(worker).csrfToken, 'Content-Type': 'application/json' },
    body: newProject(),
  });
  const createByKey = (worker: number): LoadRequest => ({
    method: 'POST',
    path: '/api/v1/projects/',
    headers: { Authorization: bearer(writer(worker)), 'Content-Type': 'application/json' },
    body: newProject(),
  });

  await expectSameAnswers(cutroom, baseline, [list(0), listByKey(0), checkAuth(0), create(0), createByKey(0)]);
  if (against) await expectSameAnswers(against, baseline, [list(0), listByKey(0), checkAuth(0), create(0), createByKey(0)]);

  const scenarios: Scenario[] = [];
  for (const concurrency of [10, 50]) {
    scenarios.push({ name: `projects_list_c${concurrency}`, concurrency, expectStatus: 200, next: list, latencyTarget: concurrency === 10 });
    scenarios.push({ name: `projects_list_key_c${concurrency}`, concurrency, expectStatus: 200, next: listByKey, latencyTarget: concurrency === 10 });
    scenarios.push({ name: `check_auth_c${concurrency}`, concurrency, expectStatus: 200, next: checkAuth, latencyTarget: concurrency === 10 });
    scenarios.push({ name: `projects_create_c${concurrency}`, concurrency, expectStatus: 201, next: create, latencyTarget: false });
    scenarios.push({ name: `projects_create_key_c${concurrency}`, concurrency, expectStatus: 201, next: createByKey, latencyTarget: false });
  }
  const only = process.env.BENCH_ONLY;
  if (only) scenarios.splice(0, scenarios.length, ...scenarios.filter((scenario) => scenario.name.includes(only)));
  // A fresh process runs its first seconds on code V8 has not optimised yet, and the larger
  // program longer so: every scenario runs once on both servers before any round counts.
  for (const scenario of scenarios) {
    for (const server of contenders) {
      const result = await measure(server, scenario, WARMUP_PASS_SECONDS);
      process.stdout.write(`warm-up ${scenario.name.padEnd(20)} ${server.name.padEnd(8)} ${result.perSecond.toFixed(0).padStart(6)} req/s (not counted)\n`);
    }
  }
  const measured = new Map<string, Record<string, Measure[]>>();
  for (let round = 0; round < rounds; round++) {
    for (const scenario of scenarios) {
      // Alternate who goes first, so neither always runs on a machine the other just warmed.
      const order = contenders.map((_, index) => contenders[(index + round) % contenders.length]!);
      const entry = measured.get(scenario.name) ?? Object.fromEntries(contenders.map((server) => [server.name, [] as Measure[]]));
      measured.set(scenario.name, entry);
      for (const server of order) {
        const result = await measure(server, scenario);
        entry[server.name]!.push(result);
        process.stdout.write(
          `round ${round + 1} ${scenario.name.padEnd(20)} ${server.name.padEnd(8)} ${result.perSecond.toFixed(0).padStart(6)} req/s  p50 ${result.p50Ms.toFixed(1).padStart(5)} ms  p99 ${result.p99Ms.toFixed(1).padStart(5)} ms  cpu ${(result.cpuMsPerRequest).toFixed(2)} ms/req${result.errors ? `  ${result.errors} errors (${result.firstError})` : ''}\n`,
        );
        if (result.errors > 0) throw new Error(`${server.name} answered ${result.errors} requests wrongly in ${scenario.name}: ${result.firstError}`);
      }
    }
  }

  const results: string[] = [];
  let missed = false;
  process.stdout.write(`\nmedians of ${rounds} rounds of ${seconds} s (Cutroom / baseline); load average now ${loadavg().map((load) => load.toFixed(1)).join(' ')}\n`);
  for (const scenario of scenarios) {
    const entry = measured.get(scenario.name)!;
    const ours = summary(entry.cutroom!);
    const theirs = summary(entry.baseline!);
    const ratio = ours.perSecond / theirs.perSecond;
    process.stdout.write(
      `  ${scenario.name.padEnd(20)} ${ours.perSecond.toFixed(0)} / ${theirs.perSecond.toFixed(0)} req/s = ${ratio.toFixed(2)}×   p50 ${ours.p50Ms.toFixed(1)} / ${theirs.p50Ms.toFixed(1)} ms   p99 ${ours.p99Ms.toFixed(1)} / ${theirs.p99Ms.toFixed(1)} ms   cpu/req ${ours.cpuMsPerRequest.toFixed(2)} / ${theirs.cpuMsPerRequest.toFixed(2)} ms = ${(ours.cpuMsPerRequest / theirs.cpuMsPerRequest).toFixed(2)}×\n`,
    );
    if (entry.against) {
      const before = summary(entry.against);
      process.stdout.write(
        `  ${''.padEnd(20)} against: ${before.perSecond.toFixed(0)} req/s = ${(before.perSecond / theirs.perSecond).toFixed(2)}×   cpu/req ${before.cpuMsPerRequest.toFixed(2)} ms = ${(before.cpuMsPerRequest / theirs.cpuMsPerRequest).toFixed(2)}×   (Cutroom's cpu/req ${((ours.cpuMsPerRequest / before.cpuMsPerRequest - 1) * 100).toFixed(0)} % against it)\n`,
      );
    }
    const throughputOk = ratio >= THROUGHPUT_TARGET;
    const cpuRatio = ours.cpuMsPerRequest / theirs.cpuMsPerRequest;
    const cpuOk = cpuRatio <= CPU_TARGET;
    missed ||= !throughputOk || !cpuOk;
    results.push(`RESULT ${scenario.name}_throughput_ratio ${ratio.toFixed(2)} (target >= ${THROUGHPUT_TARGET}) ${throughputOk ? 'ok' : 'miss'}`);
    results.push(`RESULT ${scenario.name}_cpu_per_request_ratio ${cpuRatio.toFixed(2)} (target <= ${CPU_TARGET}) ${cpuOk ? 'ok' : 'miss'}`);
    if (scenario.latencyTarget) {
      const latencyOk = ours.p99Ms < P99_TARGET_MS;
      missed ||= !latencyOk;
      results.push(`RESULT ${scenario.name}_p99_ms ${ours.p99Ms.toFixed(1)} (target < ${P99_TARGET_MS}) ${latencyOk ? 'ok' : 'miss'}`);
    }
  }
  // the RESULT lines last, in the DESIGN form
  for (const line of results) console.log(line);
  process.exitCode = missed ? 1 : 0;
} finally {
  for (const server of servers) await server.stop();
  await s3.close();
  await rm(s3Dir, { recursive: true, force: true });
  await database.drop();
  await dropRedisKeys(env.REDIS_URL, env.REDIS_KEY_PREFIX);
}

interface Measure extends LoadResult {
  cpuMsPerRequest: number;
}

async function measure(server: ServerProcess, scenario: Scenario, duration = seconds): Promise<Measure> {
  const pid = server.child.pid!;
  // CPU is counted over the whole run, warm-up included, and divided by every request sent.
  const cpuBefore = await cpuSeconds(pid);
  let sent = 0;
  const result = await runLoad({
    url: server.url,
    concurrency: scenario.concurrency,
    seconds: duration,
    warmupSeconds,
    expectStatus: scenario.expectStatus,
    next: (worker) => {
      sent++;
      return scenario.next(worker);
    },
  });
  const cpu = (await cpuSeconds(pid)) - cpuBefore;
  return { ...result, cpuMsPerRequest: (cpu * 1000) / sent };
}

function summary(measures: Measure[]): { perSecond: number; p50Ms: number; p99Ms: number; cpuMsPerRequest: number } {
  return {
    perSecond: median(measures.map((m) => m.perSecond)),
    p50Ms: median(measures.map((m) => m.p50Ms)),
    p99Ms: median(measures.map((m) => m.p99Ms)),
    cpuMsPerRequest: median(measures.map((m) => m.cpuMsPerRequest)),
  };
}

/** Verified users on the Viral plan (no project limit), with projects, logged in through Cutroom, each with a read and write API key. */
/** The api's bundle as the image starts it (api/Dockerfile's CMD), built first when missing or older than a source. */
async function bundledApi(): Promise<{ script: string; nodeArgs: string[] }> {
  await promisify(execFile)('bash', [join(ROOT, 'hack/build-api.sh'), '--if-stale'], { cwd: ROOT });
  const image = await imageCommand();
  return { script: join(ROOT, image.script), nodeArgs: image.nodeArgs };
}

async function seedAccounts(url: string, databaseUrl: string, count: number, projects: number): Promise<Account[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const passwordHash = await bcrypt.hash(PASSWORD, 4);
  const accounts: Account[] = [];
  try {
    for (let index = 0; index < count; index++) {
      const userId = randomUUID();
      const username = `bench-${projects ? 'reader' : 'writer'}-${index}`;
      await client.query(
        `insert into users (id, name, username, email, password_hash, email_verified, locale, created_at) values ($1, $2, $3, $4, $5, true, 'en', now())`,
        [userId, `Bench ${index}`, username, `${username}@example.com`, passwordHash],
      );
      await client.query(`insert into subscriptions (user_id, tier, status, updated_at) values ($1, 'Viral', 'active', now())`, [userId]);
      for (let project = 0; project < projects; project++) {
        await client.query(
          `insert into projects (id, user_id, name, status, settings, created_at, updated_at) values ($1, $2, $3, 'created', '{}', now() - make_interval(mins => $4), now())`,
          [randomUUID(), userId, `Project ${project}`, project],
        );
      }
      const login = await fetch(`${url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username, password: PASSWORD }),
      });
      if (login.status !== 200) throw new Error(`login of ${username} answered ${login.status}: ${await login.text()}`);
      const cookie = /session=([^;]+)/.exec(login.headers.getSetCookie().join('\n'))?.[1];
      const { csrf_token: csrfToken } = (await login.json()) as { csrf_token: string };
      if (!cookie) throw new Error('login set no session cookie');
      const minted = await fetch(`${url}/api/v1/users/me/api-keys`, {
        method: 'POST',
        headers: { Cookie: `session=${cookie}`, 'X-CSRF-Token': csrfToken, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'bench', scopes: ['read', 'write'] }),
      });
      if (minted.status !== 201) throw new Error(`creating a key for ${username} answered ${minted.status}: ${await minted.text()}`);
      const { key: apiKey } = (await minted.json()) as { key: string };
      accounts.push({ id: userId, cookie, csrfToken, apiKey });
    }
  } finally {
    await client.end();
  }
  return accounts;
}

/** Both servers answer each request with the same status and JSON (a created project: the same shape). */
async function expectSameAnswers(cutroom: ServerProcess, baseline: ServerProcess, requests: LoadRequest[]): Promise<void> {
  for (const request of requests) {
    const [ours, theirs] = await Promise.all(
      [cutroom, baseline].map(async (server) => {
        const response = await fetch(`${server.url}${request.path}`, { method: request.method, headers: request.headers, ...(request.body ? { body: request.body } : {}) });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      }),
    );
    const comparable = (body: Record<string, unknown>) =>
      request.method === 'POST' ? { ...body, uuid: typeof body.uuid, name: typeof body.name, created_at: typeof body.created_at, updated_at: typeof body.updated_at } : body;
    if (ours!.status !== theirs!.status || !isDeepStrictEqual(comparable(ours!.body), comparable(theirs!.body))) {
      throw new Error(
        `the baseline no longer answers ${request.method} ${request.path} as Cutroom does:\n  cutroom  ${ours!.status} ${JSON.stringify(ours!.body)}\n  baseline ${theirs!.status} ${JSON.stringify(theirs!.body)}`,
      );
    }
  }
}
