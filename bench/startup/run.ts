/**
 * Start-up of the api as a user starts it (`node api/src/main.ts`, local job backend,
 * embedded S3): time from spawn to the first 200 from /healthz and resident memory once
 * idle, over several starts; the bare baseline of bench/api (Koa + pg + ioredis) started
 * the same way in the same run, alternating, as the anchor. Also module loading alone (importing the app).
 * Targets (issue 42 item 3): ≤ 2× the baseline's time to /healthz, ≤ 1.3× its idle RSS.
 *
 *   node bench/startup/run.ts     (BENCH_STARTS=5 by default; the medians count)
 *   BENCH_PROFILE_DIR=/tmp/prof   writes a CPU profile of each Cutroom start there (node --cpu-prof)
 *
 * The first start fills a fresh compile cache (NODE_COMPILE_CACHE, see api/src/main.ts);
 * it is reported apart, as a container's first start without a baked cache would see it.
 * Last, what start-up leaves to first use: in a process that has imported the app, the time
 * and memory each lazily loaded SDK costs the first request that needs it.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startEmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { API_MAIN, ROOT, benchDatabase, dropRedisKeys, median, rssMegabytes, startServer } from '../api/servers.ts';

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
  NODE_COMPILE_CACHE: join(scratch, 'compile-cache'),
};

interface Start {
  ms: number;
  rssMb: number;
}

const profileDir = process.env.BENCH_PROFILE_DIR;

async function startAndIdle(name: string, entry: string): Promise<Start> {
  const profiled = profileDir && name === 'cutroom' ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } : {};
  const server = await startServer(name, entry, env, profiled);
  try {
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    return { ms: server.startedInMs, rssMb: await rssMegabytes(server.child.pid!) };
  } finally {
    await server.stop();
  }
}

/** Milliseconds to import the app's modules (api/src/app.ts) in a fresh process, and its RSS then. */
async function moduleLoad(): Promise<Start> {
  const script = `const t = performance.now(); await import(${JSON.stringify(new URL('../../api/src/app.ts', import.meta.url).href)}); console.log(JSON.stringify({ ms: performance.now() - t, rssMb: process.memoryUsage().rss / 1048576 }));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env: { ...process.env, ...env } });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Start;
}

/** The modules the api loads on first use (issue 42 item 3), with the feature that first needs each. */
const LAZY_MODULES: Record<string, string> = {
  stripe: 'the first payments call or Stripe webhook',
  '@mux/mux-node': 'the first external video import',
  jose: 'the first playback URL or token read',
  'openid-client': 'the first sign-in through the identity provider; jose already loaded',
};

/** In a fresh process that has imported the app (as the api has once it answers): each lazily loaded module's import, in ms and MB of RSS. */
async function firstUse(): Promise<Record<string, Start>> {
  const script = `await import(${JSON.stringify(new URL('../../api/src/app.ts', import.meta.url).href)});
const costs = {};
for (const name of ${JSON.stringify(Object.keys(LAZY_MODULES))}) {
  const rss = process.memoryUsage().rss, t = performance.now();
  await import(name);
  costs[name] = { ms: performance.now() - t, rssMb: (process.memoryUsage().rss - rss) / 1048576 };
}
console.log(JSON.stringify(costs));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env: { ...process.env, ...env } });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, Start>;
}

try {
  process.stdout.write(`${cpus().length} CPUs; ${starts} starts of each after one that fills the compile cache…\n`);
  const cold = await startAndIdle('cutroom', API_MAIN);
  process.stdout.write(`cutroom first start (empty compile cache): ${cold.ms.toFixed(0)} ms to /healthz, ${cold.rssMb.toFixed(0)} MB idle\n`);
  const cutroom: Start[] = [];
  const baseline: Start[] = [];
  const loads: Start[] = [];
  const firstUses: Record<string, Start>[] = [];
  const baselineEntry = fileURLToPath(new URL('../api/baseline.ts', import.meta.url));
  for (let attempt = 0; attempt < starts; attempt++) {
    cutroom.push(await startAndIdle('cutroom', API_MAIN));
    baseline.push(await startAndIdle('baseline', baselineEntry));
    loads.push(await moduleLoad());
    firstUses.push(await firstUse());
    const last = (list: Start[]) => `${list.at(-1)!.ms.toFixed(0)} ms ${list.at(-1)!.rssMb.toFixed(0)} MB`;
    process.stdout.write(`start ${attempt + 1}: cutroom ${last(cutroom)}   baseline ${last(baseline)}   app modules ${last(loads)}\n`);
  }
  const ms = median(cutroom.map((start) => start.ms));
  const rss = median(cutroom.map((start) => start.rssMb));
  const baselineMs = median(baseline.map((start) => start.ms));
  const baselineRss = median(baseline.map((start) => start.rssMb));
  process.stdout.write(
    [
      '',
      `medians of ${starts}:`,
      `  cutroom  ${ms.toFixed(0)} ms to /healthz, ${rss.toFixed(0)} MB idle RSS`,
      `  baseline ${baselineMs.toFixed(0)} ms to /healthz, ${baselineRss.toFixed(0)} MB idle RSS (bare Koa + pg + ioredis)`,
      `  importing api/src/app.ts alone: ${median(loads.map((load) => load.ms)).toFixed(0)} ms, ${median(loads.map((load) => load.rssMb)).toFixed(0)} MB`,
      `  ratio to the baseline: ${(ms / baselineMs).toFixed(2)}× the time, ${(rss / baselineRss).toFixed(2)}× the idle RSS`,
      'left to first use (paid once per process, by the first request that needs it):',
      ...Object.entries(LAZY_MODULES).map(
        ([name, when]) =>
          `  ${name.padEnd(14)} ${median(firstUses.map((costs) => costs[name]!.ms)).toFixed(0).padStart(4)} ms, +${median(firstUses.map((costs) => costs[name]!.rssMb)).toFixed(0)} MB RSS  (${when})`,
      ),
      '',
    ].join('\n'),
  );
  // the RESULT lines last, in the DESIGN form
  const timeOk = ms / baselineMs <= TIME_TARGET_RATIO;
  const rssOk = rss / baselineRss <= RSS_TARGET_RATIO;
  console.log(`RESULT startup_to_healthz_ratio ${(ms / baselineMs).toFixed(2)} (target <= ${TIME_TARGET_RATIO}) ${timeOk ? 'ok' : 'miss'}`);
  console.log(`RESULT startup_idle_rss_ratio ${(rss / baselineRss).toFixed(2)} (target <= ${RSS_TARGET_RATIO}) ${rssOk ? 'ok' : 'miss'}`);
  process.exitCode = timeOk && rssOk ? 0 : 1;
} finally {
  await s3.close();
  await rm(scratch, { recursive: true, force: true });
  await database.drop();
  await dropRedisKeys(env.REDIS_URL, env.REDIS_KEY_PREFIX);
}
