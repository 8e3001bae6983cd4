/**
 * Start-up of the api as it is run (local job backend, embedded S3): time from spawn to the
 * first 200 from /healthz, the CPU time spent until then, and resident memory once idle, over
 * several starts of each of
 *   - the bundle (api/dist/main.js, built here by hack/bundle/build-api.ts) started with the
 *     api image's own command (the CMD of api/Dockerfile, its Node flags included);
 *   - the sources (`node api/src/main.ts`): what a developer runs;
 *   - the bare baseline of bench/api (Koa + pg + ioredis), the anchor,
 * started in turn, the order rotating each round. Targets (issue 42 item 3), on the bundle:
 * ≤ 2× the baseline's time to /healthz, ≤ 1.3× its idle RSS.
 *
 *   node bench/startup/run.ts     (BENCH_STARTS=5 by default; the medians count)
 *   BENCH_PROFILE_DIR=/tmp/prof   writes a CPU profile of each Cutroom start there (node --cpu-prof)
 *
 * The first start of each Cutroom entry fills a fresh compile cache (NODE_COMPILE_CACHE, see
 * api/src/main.ts); it is reported apart, as a container's first start without a baked cache
 * would see it. Last, what start-up leaves to first use: in a process that has loaded the app,
 * the time and memory each lazily loaded SDK costs the first request that needs it (in the
 * bundle, importing the chunk esbuild made of it, as the first such request does); and the
 * first requests of a user after a start (sign-up, log-in, project create, list) against the same
 * requests in a process that has served them once.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { startEmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { buildApi } from '../../hack/bundle/build-api.ts';
import { API_MAIN, ROOT, benchDatabase, dropRedisKeys, imageCommand, median, rssMegabytes, startServer, type ServerProcess } from '../api/servers.ts';

const starts = Number(process.env.BENCH_STARTS ?? 5);
const IDLE_MS = 3000;
const TIME_TARGET_RATIO = 2;
const RSS_TARGET_RATIO = 1.3;
const run = promisify(execFile);

const id = randomBytes(4).toString('hex');
const database = await benchDatabase(`cutroom_bench_startup_${id}`);
const scratch = await mkdtemp(join(tmpdir(), 'cutroom-bench-startup-'));
const s3 = await startEmbeddedS3({ directory: join(scratch, 's3'), bucket: 'cutroom-bench' });
const env = {
  DATABASE_URL: database.url,
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0',
  REDIS_KEY_PREFIX: `cutroom-bench-startup:${id}:`,
  SECRET_KEY: randomBytes(32).toString('base64url'),
  S3_ENDPOINT: s3.endpoint,
  S3_BUCKET: s3.bucket,
  JOB_BACKEND: 'local',
};
const PASSWORD = 'bench-password-1';

interface Start {
  ms: number;
  cpuMs: number;
  rssMb: number;
}

interface Entry {
  name: string;
  path: string;
  nodeArgs?: string[];
  /** Its own compile cache, so one entry's cache never serves another. */
  compileCache: string;
  starts: Start[];
}

const profileDir = process.env.BENCH_PROFILE_DIR;

async function start(entry: Entry, extraEnv: Record<string, string> = {}): Promise<ServerProcess> {
  const profiled = profileDir && entry.name !== 'baseline' ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${entry.name}-\${pid}.cpuprofile`] : [];
  return startServer(entry.name, entry.path, { ...env, NODE_COMPILE_CACHE: entry.compileCache, ...extraEnv }, { nodeArgs: [...(entry.nodeArgs ?? []), ...profiled] });
}

async function startAndIdle(entry: Entry): Promise<Start> {
  const server = await start(entry);
  try {
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    return { ms: server.startedInMs, cpuMs: server.startCpuSeconds * 1000, rssMb: await rssMegabytes(server.child.pid!) };
  } finally {
    await server.stop();
  }
}

/** The modules the api loads on first use (issue 42 item 3), with the feature that first needs each. */
const LAZY_MODULES: Record<string, string> = {
  stripe: 'the first payments call or Stripe webhook',
  '@mux/mux-node': 'the first external video import',
  jose: 'the first playback URL or token read',
  'openid-client': 'the first sign-in through the identity provider; jose already loaded',
};

/**
 * In a fresh process that has loaded the app (as the api has once it answers): each lazily
 * loaded module's import, in ms and MB of RSS. `app` is the module to load first; `lazy` what
 * to import for each lazy module (its name for the sources, its chunk's file for the bundle).
 */
async function firstUse(app: string, lazy: Record<string, string>): Promise<Record<string, Start>> {
  const script = `await import(${JSON.stringify(app)});
const costs = {};
for (const [name, specifier] of Object.entries(${JSON.stringify(lazy)})) {
  const rss = process.memoryUsage().rss, t = performance.now();
  await import(specifier);
  costs[name] = { ms: performance.now() - t, cpuMs: 0, rssMb: (process.memoryUsage().rss - rss) / 1048576 };
}
console.log(JSON.stringify(costs));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env: { ...process.env, ...env } });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, Start>;
}

/** A user's first requests: sign up, log in (the address marked verified in the database), create a project, list the projects; their times in ms. */
async function userRequests(url: string): Promise<number[]> {
  const name = `bench${randomBytes(4).toString('hex')}`;
  const times: number[] = [];
  const timed = async (path: string, init: RequestInit, expected: number): Promise<Response> => {
    const started = performance.now();
    const response = await fetch(`${url}${path}`, init);
    const text = await response.text();
    times.push(performance.now() - started);
    if (response.status !== expected) throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${text}`);
    return new Response(text, { status: response.status, headers: response.headers });
  };
  const json = { 'content-type': 'application/json' };
  const email = `${name}@example.com`;
  await timed('/api/v1/users/', { method: 'POST', headers: json, body: JSON.stringify({ name, username: name, email, password: PASSWORD }) }, 201);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query('update users set email_verified = true where email = $1', [email]).finally(() => client.end());
  const login = await timed('/api/v1/auth/login', { method: 'POST', body: new URLSearchParams({ username: name, password: PASSWORD }) }, 200);
  const session = login.headers.getSetCookie().map((cookie) => cookie.split(';')[0]!);
  const { csrf_token: csrfToken } = (await login.json()) as { csrf_token: string };
  const headers = { cookie: session.join('; '), 'x-csrf-token': csrfToken, ...json };
  await timed('/api/v1/projects/', { method: 'POST', headers, body: JSON.stringify({ name: 'First project' }) }, 201);
  await timed('/api/v1/projects/', { headers }, 200);
  return times;
}
const USER_REQUESTS = ['sign-up', 'log-in', 'create', 'list'];

/** The first sign-up → log-in → create → list after a start, then the same again in the same process (each start its own rate-limit keys). */
async function firstRequests(entry: Entry, round: number): Promise<{ first: number[]; again: number[] }> {
  const server = await start(entry, { REDIS_KEY_PREFIX: `${env.REDIS_KEY_PREFIX}${entry.name}-${round}:` });
  try {
    const first = await userRequests(server.url);
    const again = await userRequests(server.url);
    return { first, again };
  } finally {
    await server.stop();
  }
}

const ms = (value: number) => `${value.toFixed(0)} ms`;
try {
  process.stdout.write(`${cpus().length} CPUs, load average ${loadavg().map((load) => load.toFixed(1)).join(' ')}; building the bundle…\n`);
  const metafile = await buildApi();
  const image = await imageCommand();
  process.stdout.write(`the image's command: node ${[...image.nodeArgs, image.script].join(' ')}\n`);
  const bundle: Entry = { name: 'bundle', path: join(ROOT, image.script), nodeArgs: image.nodeArgs, compileCache: join(scratch, 'compile-cache-bundle'), starts: [] };
  const sources: Entry = { name: 'sources', path: API_MAIN, compileCache: join(scratch, 'compile-cache-sources'), starts: [] };
  const baseline: Entry = { name: 'baseline', path: fileURLToPath(new URL('../api/baseline.ts', import.meta.url)), compileCache: join(scratch, 'compile-cache-baseline'), starts: [] };
  const entries = [bundle, sources, baseline];

  for (const entry of entries) {
    const cold = await startAndIdle(entry);
    process.stdout.write(`${entry.name} first start (empty compile cache): ${ms(cold.ms)} to /healthz (${ms(cold.cpuMs)} of CPU), ${cold.rssMb.toFixed(0)} MB idle\n`);
  }
  process.stdout.write(`${starts} starts of each, in turn…\n`);
  for (let round = 0; round < starts; round++) {
    const order = entries.map((_, index) => entries[(index + round) % entries.length]!);
    for (const entry of order) entry.starts.push(await startAndIdle(entry));
    const last = (entry: Entry) => `${entry.name} ${ms(entry.starts.at(-1)!.ms)} (cpu ${ms(entry.starts.at(-1)!.cpuMs)}) ${entry.starts.at(-1)!.rssMb.toFixed(0)} MB`;
    process.stdout.write(`round ${round + 1} (load ${loadavg()[0]!.toFixed(1)}): ${entries.map(last).join('   ')}\n`);
  }
  const medianOf = (entry: Entry, field: keyof Start) => median(entry.starts.map((one) => one[field]));

  // What start-up leaves to first use, in the sources and in the bundle.
  const appChunk = Object.entries(metafile.outputs).find(([, output]) => output.entryPoint === 'api/src/app.ts')?.[0];
  const chunkOf = (name: string) => Object.entries(metafile.outputs).find(([, output]) => output.entryPoint?.startsWith(`node_modules/${name}/`))?.[0];
  const bundleLazy = Object.fromEntries(Object.keys(LAZY_MODULES).map((name) => [name, pathToFileURL(join(ROOT, chunkOf(name) ?? `missing chunk of ${name}`)).href]));
  const sourceCosts: Record<string, Start>[] = [];
  const bundleCosts: Record<string, Start>[] = [];
  const firsts: Record<string, { first: number[]; again: number[] }[]> = { bundle: [], sources: [] };
  for (let round = 0; round < Math.min(starts, 3); round++) {
    sourceCosts.push(await firstUse(new URL('../../api/src/app.ts', import.meta.url).href, Object.fromEntries(Object.keys(LAZY_MODULES).map((name) => [name, name]))));
    if (appChunk) bundleCosts.push(await firstUse(pathToFileURL(join(ROOT, appChunk)).href, bundleLazy));
    for (const entry of [bundle, sources]) firsts[entry.name]!.push(await firstRequests(entry, round));
  }
  const lazyLine = (name: string, costs: Record<string, Start>[]) =>
    costs.length ? `${median(costs.map((cost) => cost[name]!.ms)).toFixed(0).padStart(4)} ms +${median(costs.map((cost) => cost[name]!.rssMb)).toFixed(0)} MB` : 'not measured';
  const requestLine = (name: string, field: 'first' | 'again') =>
    USER_REQUESTS.map((request, index) => `${request} ${ms(median(firsts[name]!.map((pair) => pair[field][index]!)))}`).join(', ');

  const time = medianOf(bundle, 'ms') / medianOf(baseline, 'ms');
  const rss = medianOf(bundle, 'rssMb') / medianOf(baseline, 'rssMb');
  process.stdout.write(
    [
      '',
      `medians of ${starts} (load average now ${loadavg().map((load) => load.toFixed(1)).join(' ')}):`,
      ...entries.map(
        (entry) =>
          `  ${entry.name.padEnd(8)} ${ms(medianOf(entry, 'ms')).padStart(8)} to /healthz, ${ms(medianOf(entry, 'cpuMs')).padStart(8)} of CPU until then, ${medianOf(entry, 'rssMb').toFixed(0)} MB idle RSS` +
          (entry === baseline ? ' (bare Koa + pg + ioredis)' : `  — ${(medianOf(entry, 'ms') / medianOf(baseline, 'ms')).toFixed(2)}× / ${(medianOf(entry, 'cpuMs') / medianOf(baseline, 'cpuMs')).toFixed(2)}× / ${(medianOf(entry, 'rssMb') / medianOf(baseline, 'rssMb')).toFixed(2)}× the baseline`),
      ),
      'left to first use (paid once per process, by the first request that needs it):      sources          bundle',
      ...Object.entries(LAZY_MODULES).map(([name, when]) => `  ${name.padEnd(14)} ${lazyLine(name, sourceCosts).padEnd(16)} ${lazyLine(name, bundleCosts).padEnd(16)} (${when})`),
      `a user's first requests after a start, then the same again (medians of ${firsts.bundle!.length}):`,
      ...[bundle, sources].map((entry) => `  ${entry.name.padEnd(8)} first: ${requestLine(entry.name, 'first')};  again: ${requestLine(entry.name, 'again')}`),
      '',
    ].join('\n'),
  );
  // the RESULT lines last, in the DESIGN form: the bundle is what the api image runs
  const timeOk = time <= TIME_TARGET_RATIO;
  const rssOk = rss <= RSS_TARGET_RATIO;
  console.log(`RESULT startup_to_healthz_ratio ${time.toFixed(2)} (target <= ${TIME_TARGET_RATIO}) ${timeOk ? 'ok' : 'miss'}`);
  console.log(`RESULT startup_idle_rss_ratio ${rss.toFixed(2)} (target <= ${RSS_TARGET_RATIO}) ${rssOk ? 'ok' : 'miss'}`);
  process.exitCode = timeOk && rssOk ? 0 : 1;
} finally {
  await s3.close();
  await rm(scratch, { recursive: true, force: true });
  await database.drop();
  await dropRedisKeys(env.REDIS_URL, env.REDIS_KEY_PREFIX);
}
