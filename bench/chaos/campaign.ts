/**
 * A chaos campaign: the api (local backend) and, given a cluster, a second api (kubernetes
 * backend) with the operator, all real child processes; users of both keep asking for jobs
 * of every program over HTTP while seeded schedules SIGKILL the local api (alone or with its
 * job programs) and the operator, each restarted at once. Then the work stops, the system
 * is left to settle, and the invariants (invariants.ts) are checked against the database,
 * the bucket and the outcome events heard on Redis.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ObjectStorage } from '../../api/src/storage/storage.ts';
import { Seeded } from '../fuzz/random.ts';
import { freePort } from '../api/servers.ts';
import { collectState, countByRule, violationsOf, type Violation, type ViolationRule } from './invariants.ts';
import { startMuxDouble } from './mux-double.ts';
import { listenToOutcomes } from './outcome-events.ts';
import { apiProcess, operatorProcess, type ChaosProcess, type KillMode } from './processes.ts';
import { ChaosWorld, makeChaosMedia, type Operation } from './workload.ts';

/** How often the gap before a kill is a calm spell, and how much longer than the usual longest gap it may be. */
const CALM_CHANCE = 0.25;
const CALM_FACTOR = 3;

/** Longest a kill waits for a job of its backend to be running. */
const RUNNING_WAIT_MS = 10_000;

/** The servers a campaign's processes use: a database, Redis prefix and bucket of the campaign's own, and a Whisper server. */
export interface ChaosEnvironment {
  databaseUrl: string;
  redisUrl: string;
  redisKeyPrefix: string;
  s3: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string };
  whisperBaseUrl: string;
  /** Scratch directory for media (the caller removes it). */
  workDir: string;
}

/** A cluster for the operator (the suite: its own control plane, whose test node runs every Job's program). */
export interface ChaosCluster {
  /** The operator's client configuration; the api's too unless `apiKubeconfigPath` names its own. */
  kubeconfigPath: string;
  apiKubeconfigPath?: string;
  namespace: string;
  /** The operator's own settings for this cluster (a new POD_NAME per call: each start is a new replica). */
  operatorEnv: () => Record<string, string>;
}

export interface CampaignOptions {
  seed: number;
  environment: ChaosEnvironment;
  apiKills: number;
  /** Ignored without a cluster. */
  operatorKills: number;
  cluster?: ChaosCluster;
  usersPerWorld: number;
  /** A world asks for no more work while this many of its jobs are unfinished. */
  backlog: number;
  /**
   * Time between a process being ready again and its next kill, drawn uniformly. The api's
   * upper bound must leave its jobs time to finish sometimes (a kill restarts them); the
   * operator's may be short (pods run on without it).
   */
  killGapMs: { api: readonly [number, number]; operator: readonly [number, number] };
  quiesceTimeoutMs: number;
  log: (line: string) => void;
}

export interface Kill {
  target: 'api' | 'operator';
  mode: KillMode;
  atMs: number;
  /** Programs with a job running at that moment, on the killed process's backend. */
  running: string[];
}

export interface CampaignResult {
  seed: number;
  kills: Kill[];
  violations: Violation[];
  counts: Record<ViolationRule, number>;
  /** Settled jobs per program and outcome, e.g. `artifact succeeded` → 12. */
  jobs: Map<string, number>;
  /** Failed jobs per program and error code, e.g. `analyze analysis.no_words` → 2. */
  failures: Map<string, number>;
  accepted: Map<Operation, number>;
  refused: Map<string, number>;
  /** 5xx answers the clients saw (each retried), and operations that never got an answer below 500. */
  serverErrors: string[];
  /** Error-level log lines of the processes. */
  processErrors: string[];
  quiesced: boolean;
  durationMs: number;
}

/** What every process of the campaign inherits from this one: tools, not configuration. */
function baseEnv(): Record<string, string> {
  const kept = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'FFMPEG_PATH', 'FFPROBE_PATH'];
  return Object.fromEntries(kept.flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])));
}

export async function runCampaign(options: CampaignOptions): Promise<CampaignResult> {
  const started = Date.now();
  const { environment: env, log } = options;
  const random = new Seeded(options.seed);
  const mux = await startMuxDouble();
  const events = await listenToOutcomes(env.redisUrl, env.redisKeyPrefix);
  const processes: ChaosProcess[] = [];
  const worlds: ChaosWorld[] = [];
  try {
    const media = await makeChaosMedia(env.workDir);
    const common = processEnvironment(env, mux.origin);
    const localPort = await freePort();
    const localApi = apiProcess('api (local backend)', () => ({ ...common, HOST: '127.0.0.1', PORT: String(localPort), JOB_BACKEND: 'local' }));
    processes.push(localApi);
    await localApi.start();
    worlds.push(new ChaosWorld({ name: 'local', baseUrl: `http://127.0.0.1:${localPort}`, databaseUrl: env.databaseUrl, backend: 'local', random: random.fork('world-local'), media, mux, users: options.usersPerWorld, backlog: options.backlog }));

    let operator: ChaosProcess | undefined;
    const cluster = options.cluster;
    if (cluster) {
      const kubePort = await freePort();
      const kube = { KUBECONFIG: cluster.kubeconfigPath, KUBE_NAMESPACE: cluster.namespace };
      const kubeApi = apiProcess('api (kubernetes backend)', () => ({
        ...common, ...kube, KUBECONFIG: cluster.apiKubeconfigPath ?? cluster.kubeconfigPath, HOST: '127.0.0.1', PORT: String(kubePort), JOB_BACKEND: 'kubernetes',
      }));
      processes.push(kubeApi);
      operator = operatorProcess('operator', () => ({ ...common, ...kube, ...cluster.operatorEnv() }));
      processes.push(operator);
      await Promise.all([kubeApi.start(), operator.start()]);
      worlds.push(new ChaosWorld({ name: 'kube', baseUrl: `http://127.0.0.1:${kubePort}`, databaseUrl: env.databaseUrl, backend: 'kubernetes', random: random.fork('world-kube'), media, mux, users: options.usersPerWorld, backlog: options.backlog }));
    }

    await Promise.all(worlds.map((world) => world.prepare()));
    log(`chaos: ${worlds.length} world(s) of ${options.usersPerWorld} users at work; seed ${options.seed}`);
    const working = Promise.all(worlds.map((world) => world.run()));
    const kills: Kill[] = [];
    const db = new pg.Client({ connectionString: env.databaseUrl });
    await db.connect();
    try {
      const runningPrograms = async (backend: string): Promise<string[]> => {
        const { rows } = await db.query(`select distinct program from jobs where backend = $1 and completed_at is null and status = 'running' order by program`, [backend]);
        return rows.map((row: { program: string }) => row.program);
      };
      const schedule = async (target: Kill['target'], victim: ChaosProcess, backend: string, count: number, schedule: Seeded) => {
        for (let index = 1; index <= count; index++) {
          const [shortest, longest] = options.killGapMs[target];
          // now and then a calm spell, so that jobs slower than the usual gap get to finish (a kill restarts local ones)
          const gap = schedule.chance(CALM_CHANCE) ? schedule.int(longest, CALM_FACTOR * longest) : schedule.int(shortest, longest);
          await new Promise((resolve) => setTimeout(resolve, gap));
          // a kill is meant to land on running jobs: wait a little for one when none runs yet
          const waitUntil = Date.now() + RUNNING_WAIT_MS;
          let running = await runningPrograms(backend);
          while (running.length === 0 && Date.now() < waitUntil) {
            await new Promise((resolve) => setTimeout(resolve, 100));
            running = await runningPrograms(backend);
          }
          // the operator has no children to take along; the api's job programs go with it or live on as orphans
          const mode: KillMode = target === 'api' && schedule.chance(0.5) ? 'group' : 'process';
          await victim.kill(mode);
          kills.push({ target, mode, atMs: Date.now() - started, running });
          const down = Date.now();
          await victim.start();
          log(`chaos: ${target} kill ${index}/${count} (${mode}) with ${running.join(', ') || 'nothing'} running; back in ${Date.now() - down} ms`);
        }
      };
      await Promise.all([
        schedule('api', localApi, 'local', options.apiKills, random.fork('api-kills')),
        ...(operator ? [schedule('operator', operator, 'kubernetes', options.operatorKills, random.fork('operator-kills'))] : []),
      ]);
      for (const world of worlds) world.stop();
      await working;
      log('chaos: kills done, work stopped; waiting for the system to settle');
      const quiesced = await settle(db, options.quiesceTimeoutMs);
      // events are published after their commit: give the last ones a moment on the wire
      await new Promise((resolve) => setTimeout(resolve, 1000));

      const storage = new ObjectStorage({ ...env.s3, forcePathStyle: true });
      const state = await collectState(env.databaseUrl, storage, {
        events: [...events.events],
        confirmedFileIds: worlds.flatMap((world) => world.confirmedFileIds),
      });
      storage.close();
      const violations = violationsOf(state);
      const { rows: failed } = await db.query(`select program || ' ' || coalesce(error_code, '?') || ' (' || left(min(error), 300) || ')' as failure, count(*)::int as n from jobs where status = 'failed' group by program, error_code order by 1`);
      const jobs = new Map<string, number>();
      for (const job of state.jobs) jobs.set(`${job.program} ${job.completed ? job.status : 'unfinished'}`, (jobs.get(`${job.program} ${job.completed ? job.status : 'unfinished'}`) ?? 0) + 1);
      const sum = <K>(maps: Map<K, number>[]) => {
        const total = new Map<K, number>();
        for (const map of maps) for (const [key, value] of map) total.set(key, (total.get(key) ?? 0) + value);
        return total;
      };
      return {
        seed: options.seed,
        kills,
        violations,
        counts: countByRule(violations),
        jobs,
        failures: new Map(failed.map((row: { failure: string; n: number }) => [row.failure, row.n])),
        accepted: sum(worlds.map((world) => world.accepted)),
        refused: sum(worlds.map((world) => world.refused)),
        serverErrors: worlds.flatMap((world) => [...world.failures, ...world.clients.flatMap((client) => client.serverErrors)]),
        processErrors: processes.flatMap((process) => process.errors.map((line) => `${process.name}: ${String(line.msg)} ${line.err ? JSON.stringify(line.err).slice(0, 300) : ''}`)),
        quiesced,
        durationMs: Date.now() - started,
      };
    } finally {
      await db.end();
    }
  } finally {
    for (const world of worlds) world.stop();
    await Promise.all(processes.map((process) => process.stop().catch(() => {})));
    for (const process of processes) process.dispose();
    await events.close();
    await mux.close();
  }
}

/** Waits until no job, file, export or analysis is unfinished; false when the timeout passed first. */
async function settle(db: pg.Client, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query(
      `select (select count(*) from jobs where completed_at is null)
            + (select count(*) from media_files where status = 'PROCESSING' or (status = 'UPLOADED' and proxy_status = 'pending'))
            + (select count(*) from exports where status in ('queued', 'rendering'))
            + (select count(*) from analysis_runs where status in ('queued', 'running')) as unfinished`,
    );
    if (Number((rows[0] as { unfinished: string }).unfinished) === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The configuration every process of a campaign shares (the api's and the operator's domain settings). */
export function processEnvironment(env: ChaosEnvironment, muxOrigin?: string): Record<string, string> {
  return {
    ...baseEnv(),
    NODE_ENV: 'test',
    SECRET_KEY: randomBytes(24).toString('base64url'),
    LOG_LEVEL: 'info',
    BCRYPT_COST: '4',
    DATABASE_URL: env.databaseUrl,
    DATABASE_POOL_MAX: '5',
    REDIS_URL: env.redisUrl,
    REDIS_KEY_PREFIX: env.redisKeyPrefix,
    S3_ENDPOINT: env.s3.endpoint,
    S3_BUCKET: env.s3.bucket,
    S3_REGION: env.s3.region,
    S3_ACCESS_KEY_ID: env.s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: env.s3.secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
    WHISPER_BASE_URL: env.whisperBaseUrl,
    JOB_DISPATCH_POLL_MS: '250',
    JOB_TIMEOUT_SECONDS: '300',
    ...(muxOrigin ? { MUX_API_BASE: muxOrigin, MUX_TOKEN_ID: 'chaos-token-id', MUX_TOKEN_SECRET: 'chaos-token-secret', MAX_EXTERNAL_VIDEO_DURATION_SECONDS: '3600' } : {}),
  };
}

/** The run's seed: `CHAOS_SEED` when set (decimal or 0x…), otherwise a fresh one (print it: it replays the run's choices). */
export function chaosSeed(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.CHAOS_SEED?.trim();
  if (!given) return Math.floor(Math.random() * 0x100000000);
  const seed = Number(given);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`CHAOS_SEED must be an integer 0..2^32-1, got ${given}`);
  return seed;
}

/** The campaign's findings in lines for a log: violations, server errors, process errors (each capped). */
export function describeFindings(result: CampaignResult, limit = 30): string[] {
  return [
    ...result.violations.slice(0, limit).map((violation) => `VIOLATION ${violation.rule}: ${violation.subject} — ${violation.detail}`),
    ...result.serverErrors.slice(0, limit).map((error) => `5xx: ${error}`),
    ...result.processErrors.slice(0, limit).map((error) => `process error: ${error}`),
  ];
}
