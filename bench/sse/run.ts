/**
 * Event streams at scale on one api process (a child of this one, so its RSS is its own):
 * SSE_BENCH_STREAMS open streams (10,000 by default; 5 per user, the default per-user cap:
 * 3 user streams and 2 project streams each), opened 1,000 at a time with a measurement of
 * the api after each step (full GC first). Events go through the app's EventBus on Redis
 * with a sequence number and a send time in their data; every stream counts what it got.
 *
 *   RSS growth per 1,000 streams           target ≤ 15 MB (floors: Node's HTTP server alone; with Koa and security headers)
 *   publish → client p99, 500 streams/event target < 50 ms (a direct Redis subscriber is the baseline)
 *     (this process, which holds every client, collects its garbage before each wave: its own
 *      pauses are reported and kept out of the api's figure; the api's own pauses stay in it)
 *   publish → client, all streams at once  reported
 *   events lost, by sequence number        target 0
 *   EntityManagers held by open streams    target 0 (a WeakRef to every fork made for a stream request, after a full GC)
 *
 *   node bench/sse/run.ts
 *
 * Needs PostgreSQL at DATABASE_URL's server and Redis at REDIS_URL (as hack/test.sh starts
 * them) and a descriptor per stream in each process (below that, the bench runs itself again
 * under a raised `ulimit -n`). SSE_BENCH_STREAMS and SSE_BENCH_WAVES scale it down;
 * SSE_BENCH_HEAP_SNAPSHOTS=<dir> also writes the api's heap at 0 streams and with all open.
 */
import { execFileSync, fork as spawnNode, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfig } from '../../api/src/config.ts';
import { createServices } from '../../api/src/app.ts';
import { migrateUp, openOrm } from '../../api/src/orm.ts';
import { entities } from '../../api/src/entities.ts';
import { createRedis } from '../../api/src/redis.ts';
import { EventBus } from '../../api/src/events/bus.ts';
import { mb } from '../../hack/fixtures/units.ts';
import { watchGcPauses, type BenchRequest, type MeasuredMessage, type ProcessMeasurement } from './measured-process.ts';

const STREAMS = Number(process.env.SSE_BENCH_STREAMS ?? 10_000);
const USER_STREAMS_PER_USER = 3;
const PROJECT_STREAMS_PER_USER = 2;
const PER_USER = USER_STREAMS_PER_USER + PROJECT_STREAMS_PER_USER;
const USERS = Math.ceil(STREAMS / PER_USER);
const STEP = 1000;
const OPEN_CONCURRENCY = 100;
/** 100 users × 5 streams: the streams one wave of events reaches. */
const WAVE_USERS = 100;
const WAVES = Number(process.env.SSE_BENCH_WAVES ?? 60);
const ALL_AT_ONCE_ROUNDS = 5;
const TARGET_RSS_MB_PER_1000 = 15;
const TARGET_P99_MS = 50;
const HEAP_SNAPSHOTS = process.env.SSE_BENCH_HEAP_SNAPSHOTS;
const API_PROCESS = new URL('./api-process.ts', import.meta.url).pathname;
const FLOOR_PROCESS = new URL('./floor-process.ts', import.meta.url).pathname;

const adminUrl = new URL(process.env.TEST_POSTGRES_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
adminUrl.pathname = '/postgres';
const runId = `${process.pid}_${Date.now().toString(36)}`;
const databaseName = `cutroom_bench_sse_${runId}`;
const databaseUrl = new URL(adminUrl);
databaseUrl.pathname = `/${databaseName}`;
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const prefix = `cutroom-bench-sse:${runId}:`;
const env = {
  ...process.env,
  NODE_ENV: 'production',
  SECRET_KEY: randomBytes(24).toString('base64url'),
  DATABASE_URL: databaseUrl.toString(),
  REDIS_URL: redisUrl,
  REDIS_KEY_PREFIX: prefix,
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: 'warn',
  JOB_BACKEND: 'local',
  // Every stream is a connection; the default cap (1000) is for a replica behind an ingress.
  HTTP_MAX_CONNECTIONS: String(STREAMS + 500),
  // All from one address, nearly all streams: the per-address cap and the stream budget opened up.
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(STREAMS + 500),
  SSE_STREAM_SHARE_PERCENT: '99',
};

/**
 * The descriptors this process and the api each need: one socket per stream, plus slack.
 * Node cannot raise its own limit, so below it the bench runs itself again under `ulimit -n`.
 */
function ensureDescriptorLimit(): void {
  const need = STREAMS + 1000;
  const soft = Number(execFileSync('bash', ['-c', 'ulimit -n']).toString().trim());
  if (soft >= need) return;
  const hard = execFileSync('bash', ['-c', 'ulimit -Hn']).toString().trim();
  if (process.env.SSE_BENCH_RAISED_LIMIT || (hard !== 'unlimited' && Number(hard) < need)) {
    throw new Error(`ulimit -n is ${soft} and its hard limit ${hard}; ${need} descriptors are needed (or set SSE_BENCH_STREAMS lower)`);
  }
  const again = spawnSync('bash', ['-c', `ulimit -n ${need} && exec "$@"`, 'bash', process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, SSE_BENCH_RAISED_LIMIT: '1' },
  });
  process.exit(again.status ?? 1);
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Runs `work` over `items` with at most `limit` at once. */
async function inBatches<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

interface BenchUser {
  id: string;
  projectId: string;
  cookie: string;
}

/** Verified users with a project and a live session each, made through the app's own services (what signup, verify and login leave behind). */
async function makeUsers(count: number): Promise<BenchUser[]> {
  const services = await createServices(loadConfig({ ...env, BCRYPT_COST: '4' }));
  try {
    const { projects } = services.features;
    return await inBatches(Array.from({ length: count }, (_, n) => n), 16, async (n) => {
      const username = `sse_bench_${n}_${randomBytes(3).toString('hex')}`;
      const em = services.orm.em.fork();
      // No password: a session is all a stream needs, and bcrypt would dominate the setup.
      const user = await services.accounts.createVerifiedAccount(em, { name: username, username, email: `${username}@bench.test`, password: null, locale: 'en' });
      const project = await projects.create(em, user.id, 'Bench');
      const { cookie } = await services.accounts.sessions.create(user.id, false);
      return { id: user.id, projectId: project.id, cookie };
    });
  } finally {
    await services.close();
  }
}

/** A server process of the bench (the api, or the floor under it). */
interface Measured {
  process: ChildProcess;
  url: string;
  /** A measurement after a full GC; with `heapSnapshot`, the heap is also written to that file first. */
  measure(heapSnapshot?: string): Promise<ProcessMeasurement>;
  stop(): Promise<void>;
}

async function startMeasured(script: string, extraEnv: Record<string, string> = {}): Promise<Measured> {
  const child = spawnNode(script, [], { env: { ...env, ...extraEnv }, execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting: ((measurement: ProcessMeasurement) => void)[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it listened`)));
    child.on('message', (message: MeasuredMessage) => {
      if ('ready' in message) resolve(message.url);
      else waiting.shift()?.(message.measurement);
    });
  });
  return {
    process: child,
    url,
    measure: (heapSnapshot) =>
      new Promise((resolve) => {
        waiting.push(resolve);
        child.send({ measure: true, heapSnapshot } satisfies BenchRequest);
      }),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  };
}

/** What one client stream saw. */
interface StreamClient {
  channel: string;
  received: number;
  /** Frames whose sequence number was not the next one: repeated or out of order. */
  disordered: number;
  lastSeq: number;
  ended: boolean;
  close(): void;
}

setFlagsFromString('--expose-gc');
/**
 * A full collection of this process. Run before each measured wave: the clients of 10,000
 * streams live here, and a major collection of theirs during a wave (up to ~60 ms) would be
 * counted as the api's delay (the bare Redis subscriber beside them showed it too).
 */
const collectHere = runInNewContext('gc') as () => void;

/** This process's own garbage collection pauses since last reset: they delay what it measures. */
const benchGc = watchGcPauses();

/** Publish → client delays of the current measurement, in ms. */
let latencies: number[] = [];

/** Opens one SSE stream and resolves once its first comment arrived. */
function openStream(url: string, path: string, cookie: string, channel: string): Promise<StreamClient> {
  return new Promise((resolve, reject) => {
    const client: StreamClient = { channel, received: 0, disordered: 0, lastSeq: 0, ended: false, close: () => req.destroy() };
    const req = request(new URL(path, url), { agent: false, headers: { Cookie: `session=${cookie}`, Accept: 'text/event-stream' } });
    req.on('error', (error) => (client.ended ? undefined : reject(error)));
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`${path} answered ${res.statusCode}`));
        return;
      }
      res.setEncoding('utf8');
      let buffer = '';
      let connected = false;
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          if (frame === ': connected' && !connected) {
            connected = true;
            resolve(client);
          }
          const data = frame.startsWith('event: ') ? frame.slice(frame.indexOf('\ndata: ') + 7) : undefined;
          if (!data) continue;
          const { seq, sent } = JSON.parse(data) as { seq: number; sent: number };
          if (seq !== client.lastSeq + 1) client.disordered++;
          client.lastSeq = Math.max(client.lastSeq, seq);
          client.received++;
          latencies.push(at - sent);
        }
      });
      res.on('end', () => (client.ended = true));
      res.on('close', () => (client.ended = true));
    });
    req.end();
  });
}

/** Publishes through the app's EventBus, one sequence per channel, and knows what each channel should have delivered. */
class Publisher {
  readonly #bus: EventBus;
  readonly published = new Map<string, number>();

  constructor(bus: EventBus) {
    this.#bus = bus;
  }

  #next(channel: string): number {
    const seq = (this.published.get(channel) ?? 0) + 1;
    this.published.set(channel, seq);
    return seq;
  }

  toUser(user: BenchUser): Promise<void> {
    const seq = this.#next(this.#bus.userChannel(user.id));
    const data = { media_file_uuid: user.id, media_item_uuid: user.id, display_name: 'bench', proxy_status: 'ready', seq, sent: performance.now() };
    return this.#bus.publishToUser(user.id, { type: 'media_ready', data });
  }

  toProject(user: BenchUser): Promise<void> {
    const seq = this.#next(this.#bus.projectChannel(user.projectId));
    // seq and sent ride along for the bench's own reading; the catalog's export_started has export_uuid alone
    const data = { export_uuid: user.projectId, seq, sent: performance.now() };
    return this.#bus.publishToProject(user.projectId, { type: 'export_started', data });
  }
}

/** Resolves once every stream holds what was published on its channel, or after `timeoutMs`. */
async function delivered(streams: readonly StreamClient[], publisher: Publisher, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (streams.every((stream) => stream.ended || stream.received >= (publisher.published.get(stream.channel) ?? 0))) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function percentile(values: number[], p: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const line = (text: string) => process.stdout.write(`${text}\n`);

ensureDescriptorLimit();
await admin(`create database "${databaseName}"`);
let api: Measured | undefined;
let floor: Measured | undefined;
const streams: StreamClient[] = [];
const redis = createRedis({ REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix });
const baselineSubscriber = new Redis(redisUrl);
try {
  const orm = await openOrm({ DATABASE_URL: databaseUrl.toString(), DATABASE_POOL_MAX: 2 }, entities);
  await migrateUp(orm, databaseUrl.toString()).finally(() => orm.close());

  let started = performance.now();
  const users = await makeUsers(USERS);
  line(`${USERS} users with a project and a session each in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const bus = new EventBus(redis, prefix);
  const publisher = new Publisher(bus);

  // The floors first, each on its own: as many idle responses of the bare servers, measured the same way.
  const floorOf = async (kind: 'koa' | 'node') => {
    floor = await startMeasured(FLOOR_PROCESS, { SSE_FLOOR: kind });
    const floorUrl = floor.url;
    const openBare = () => openStream(floorUrl, '/', '', '');
    for (const warm of await inBatches(Array.from({ length: 250 }, (_, n) => n), 250, openBare)) warm.close();
    const from = await floor.measure();
    const bare = await inBatches(Array.from({ length: STREAMS }, (_, n) => n), OPEN_CONCURRENCY, openBare);
    const to = await floor.measure();
    for (const response of bare) response.close();
    await floor.stop();
    return { rssPer1000: (to.rssBytes - from.rssBytes) / mb(1) / (STREAMS / 1000), heapPerStream: (to.heapUsedBytes - from.heapUsedBytes) / STREAMS };
  };
  const nodeFloor = await floorOf('node');
  line(`Node's HTTP server alone (${STREAMS} idle event-stream responses, no Koa, no headers of ours): RSS ${nodeFloor.rssPer1000.toFixed(2)} MB per 1,000, heap ${(nodeFloor.heapPerStream / 1024).toFixed(1)} KB per response`);
  const { rssPer1000: floorRssPer1000, heapPerStream: floorHeapPerStream } = await floorOf('koa');
  line(`floor (the same HTTP server, Koa and security headers; ${STREAMS} idle event-stream responses): RSS ${floorRssPer1000.toFixed(2)} MB per 1,000, heap ${(floorHeapPerStream / 1024).toFixed(1)} KB per response`);

  api = await startMeasured(API_PROCESS);
  const { url } = api;

  /** The i-th stream: the first three of each user on their user stream, the last two on their project's. */
  const open = (index: number) => {
    const user = users[Math.floor(index / PER_USER)]!;
    const onProject = index % PER_USER >= USER_STREAMS_PER_USER;
    return onProject
      ? openStream(url, `/api/v1/projects/${user.projectId}/events`, user.cookie, bus.projectChannel(user.projectId))
      : openStream(url, '/api/v1/user-stream', user.cookie, bus.userChannel(user.id));
  };

  // Warm up every code path once (and let the leases go), so step 0 is a steady api.
  // As many at once as fill the database pool: connections opened later would keep their request's context.
  const warm = await inBatches(Array.from({ length: 250 }, (_, n) => n), 250, (n) => open(n));
  for (const stream of warm) stream.close();
  await new Promise((resolve) => setTimeout(resolve, 1500));

  const snapshot = (name: string) => (HEAP_SNAPSHOTS ? `${HEAP_SNAPSHOTS}/${name}.heapsnapshot` : undefined);
  const steps: { streams: number; measurement: ProcessMeasurement; seconds: number }[] = [{ streams: 0, measurement: await api.measure(snapshot('0-streams')), seconds: 0 }];
  line(`api at 0 streams: RSS ${(steps[0]!.measurement.rssBytes / mb(1)).toFixed(1)} MB, heap ${(steps[0]!.measurement.heapUsedBytes / mb(1)).toFixed(1)} MB`);
  for (let from = 0; from < STREAMS; from += STEP) {
    const indices = Array.from({ length: Math.min(STEP, STREAMS - from) }, (_, n) => from + n);
    started = performance.now();
    streams.push(...(await inBatches(indices, OPEN_CONCURRENCY, open)));
    const seconds = (performance.now() - started) / 1000;
    const measurement = await api.measure(from + STEP >= STREAMS ? snapshot(`${STREAMS}-streams`) : undefined);
    steps.push({ streams: streams.length, measurement, seconds });
    line(
      `${String(streams.length).padStart(6)} streams (${(indices.length / seconds).toFixed(0)} opens/s): RSS ${(measurement.rssBytes / mb(1)).toFixed(1)} MB, heap ${(measurement.heapUsedBytes / mb(1)).toFixed(1)} MB, ` +
        `${measurement.liveWatched} EntityManagers of stream requests reachable, ${measurement.openConnections} connections`,
    );
  }
  const first = steps[0]!.measurement;
  const last = steps.at(-1)!.measurement;
  const rssPer1000 = (last.rssBytes - first.rssBytes) / mb(1) / (STREAMS / 1000);
  const heapPerStream = (last.heapUsedBytes - first.heapUsedBytes) / STREAMS;
  const heldEntityManagers = last.liveWatched;
  // From 2,000 streams on, the young generation has grown to its size under this load: what each further stream adds.
  const settled = steps.find((step) => step.streams >= 2 * STEP);
  if (settled && settled !== steps.at(-1)) {
    const slope = (last.rssBytes - settled.measurement.rssBytes) / mb(1) / ((STREAMS - settled.streams) / 1000);
    line(`RSS growth from ${settled.streams} to ${STREAMS} streams: ${slope.toFixed(2)} MB per 1,000`);
  }
  line(`RSS growth ${rssPer1000.toFixed(2)} MB per 1,000 streams (${(rssPer1000 / floorRssPer1000).toFixed(2)}× the floor); heap ${(heapPerStream / 1024).toFixed(1)} KB per stream (floor ${(floorHeapPerStream / 1024).toFixed(1)} KB); ${heldEntityManagers} EntityManagers of stream requests reachable with ${STREAMS} streams open`);

  // One keepalive period with every stream open and no event: what idle streams cost the api.
  const idleFrom = await api.measure();
  await new Promise((resolve) => setTimeout(resolve, 15_000));
  const idleTo = await api.measure();
  line(`api with ${STREAMS} idle streams: ${((idleTo.cpuMs - idleFrom.cpuMsAnswered) / 150).toFixed(1)} % of a core, event loop delay p99 ${idleTo.loopDelayP99Ms.toFixed(1)} ms`);

  // The baseline: the same messages seen by a bare Redis subscriber in this process.
  const baselineLatencies: number[] = [];
  baselineSubscriber.on('message', (_channel: string, message: string) => {
    baselineLatencies.push(performance.now() - (JSON.parse(message) as { data: { sent: number } }).data.sent);
  });
  await baselineSubscriber.subscribe(...users.slice(0, WAVE_USERS).map((user) => bus.userChannel(user.id)));

  // 500 streams per event: waves of one event per channel for 100 users (3 user streams + 2 project streams each).
  latencies = [];
  benchGc.max = 0;
  benchGc.total = 0;
  for (let wave = 0; wave < WAVES; wave++) {
    const group = Array.from({ length: WAVE_USERS }, (_, n) => users[(wave * WAVE_USERS + n) % users.length]!);
    // the forced collection and its concurrent sweeping end before the wave, and are not counted
    benchGc.counting = false;
    collectHere();
    await new Promise((resolve) => setTimeout(resolve, 100));
    benchGc.counting = true;
    await Promise.all(group.flatMap((user) => [publisher.toUser(user), publisher.toProject(user)]));
    await delivered(streams, publisher, 5000);
  }
  const wave = { p50: percentile(latencies, 50), p99: percentile(latencies, 99), count: latencies.length };
  const base = { p50: percentile(baselineLatencies, 50), p99: percentile(baselineLatencies, 99) };
  line(`publish → client, 500 streams per event (${WAVES} waves, ${wave.count} deliveries): p50 ${wave.p50.toFixed(1)} ms, p99 ${wave.p99.toFixed(1)} ms`);
  const afterWaves = await api.measure();
  line(
    `  baseline, a bare Redis subscriber of the same messages: p50 ${base.p50.toFixed(1)} ms, p99 ${base.p99.toFixed(1)} ms; ` +
      `api event loop delay p99 ${afterWaves.loopDelayP99Ms.toFixed(1)} ms, longest GC pause ${afterWaves.gcMaxPauseMs.toFixed(1)} ms (${afterWaves.gcTotalPauseMs.toFixed(0)} ms in all)`,
  );
  line(`  this process (the clients of all streams, and the baseline subscriber): longest GC pause ${benchGc.max.toFixed(1)} ms (${benchGc.total.toFixed(0)} ms in all)`);
  baselineSubscriber.disconnect();

  // All streams at once: one event on every channel.
  latencies = [];
  for (let round = 0; round < ALL_AT_ONCE_ROUNDS; round++) {
    await Promise.all(users.flatMap((user) => [publisher.toUser(user), publisher.toProject(user)]));
    await delivered(streams, publisher, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const all = { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies), count: latencies.length };
  line(`publish → client, all ${STREAMS} streams at once (${ALL_AT_ONCE_ROUNDS} rounds, ${all.count} deliveries): p50 ${all.p50.toFixed(1)} ms, p99 ${all.p99.toFixed(1)} ms, max ${all.max.toFixed(1)} ms`);
  line(`  api event loop delay p99 ${(await api.measure()).loopDelayP99Ms.toFixed(1)} ms`);

  await delivered(streams, publisher, 10_000);
  const expected = streams.reduce((sum, stream) => sum + (publisher.published.get(stream.channel) ?? 0), 0);
  const lost = streams.reduce((sum, stream) => sum + Math.max(0, (publisher.published.get(stream.channel) ?? 0) - stream.received), 0);
  const disordered = streams.reduce((sum, stream) => sum + stream.disordered, 0);
  const ended = streams.filter((stream) => stream.ended).length;
  line(`${expected} deliveries expected: ${lost} lost, ${disordered} out of sequence, ${ended} streams ended by the server`);

  const verdict = (ok: boolean) => (ok ? 'ok' : 'miss');
  const results = [
    `RESULT sse_rss_mb_per_1000_streams ${rssPer1000.toFixed(2)} (target <= ${TARGET_RSS_MB_PER_1000}) ${verdict(rssPer1000 <= TARGET_RSS_MB_PER_1000)}`,
    `RESULT sse_publish_to_client_p99_ms_500_streams ${wave.p99.toFixed(1)} (target < ${TARGET_P99_MS}) ${verdict(wave.p99 < TARGET_P99_MS)}`,
    `RESULT sse_events_lost ${lost + disordered} (target = 0) ${verdict(lost + disordered === 0 && ended === 0)}`,
    `RESULT sse_entity_managers_held_by_open_streams ${heldEntityManagers} (target = 0) ${verdict(heldEntityManagers === 0)}`,
  ];
  // the RESULT lines last, in the DESIGN form
  for (const result of results) line(result);
  process.exitCode = results.every((result) => result.endsWith(' ok')) ? 0 : 1;
} finally {
  for (const stream of streams) stream.close();
  await Promise.all([api?.stop(), floor?.stop()]);
  redis.disconnect();
  const cleaner = new Redis(redisUrl);
  const keys = await cleaner.keys(`${prefix}*`);
  if (keys.length) await cleaner.del(...keys);
  cleaner.disconnect();
  baselineSubscriber.disconnect();
  await admin(`drop database if exists "${databaseName}" with (force)`);
}
