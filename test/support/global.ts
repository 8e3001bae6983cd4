import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type Mocha from 'mocha';
import pg from 'pg';
import { openOrm, migrateUp } from '../../api/src/orm.ts';
import { entities } from '../../api/src/entities.ts';
import { startEmbeddedS3, type EmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { startLocalWhisper, type LocalWhisper } from '../../recognizer/server/server.ts';
import { fileTimesDirectory, testRunDirectory, testRunId } from './test-run.ts';

/**
 * Each process that runs test files has a world of its own: a fresh PostgreSQL database, a
 * Redis key prefix, an embedded S3 server and a local Whisper server, their addresses in
 * process.env for the harness and child processes. Without `--parallel` that is mocha's one
 * process; with it, each worker (files run one after another inside a worker, so a worker's
 * files share its world as a serial run's do), and the main process only reports and, at
 * the end, removes what every worker of the run left.
 *
 * The world is made here, at load time (this file is mocha's `--require`, awaited before any
 * test file is loaded), so a test file reading process.env at its top level sees it.
 */
const adminUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const databasePrefix = `cutroom_test_${testRunId}`;
const redisPrefix = `cutroom-test:${testRunId}:`;
/** The main process of a parallel run runs no test file: mocha's workers do. */
const isParallelMain = process.argv.includes('--parallel') || process.argv.includes('-p');

let s3: EmbeddedS3 | undefined;
let whisper: LocalWhisper | undefined;

async function admin(sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

async function makeWorld(): Promise<void> {
  const worldId = isWorker() ? `w${process.pid}` : 'main';
  const databaseName = `${databasePrefix}_${worldId}`;
  await admin(`create database "${databaseName}"`);
  const databaseUrl = new URL(adminUrl);
  databaseUrl.pathname = `/${databaseName}`;
  process.env.DATABASE_URL = databaseUrl.toString();
  const orm = await openOrm({ DATABASE_URL: process.env.DATABASE_URL, DATABASE_POOL_MAX: 2 }, entities);
  try {
    await migrateUp(orm, process.env.DATABASE_URL);
  } finally {
    await orm.close();
  }
  process.env.REDIS_URL ??= 'redis://127.0.0.1:6379/0';
  process.env.REDIS_KEY_PREFIX = `${redisPrefix}${worldId}:`;
  const s3Dir = join(testRunDirectory, `s3-${worldId}`);
  await mkdir(s3Dir, { recursive: true });
  // A secret of this world: the store verifies every signature, so nothing passes on a well-known one.
  const secretAccessKey = randomBytes(24).toString('base64url');
  s3 = await startEmbeddedS3({ directory: s3Dir, bucket: 'cutroom-test', secretAccessKey });
  process.env.S3_ENDPOINT = s3.endpoint;
  process.env.S3_BUCKET = s3.bucket;
  process.env.S3_ACCESS_KEY_ID = 'S3RVER';
  process.env.S3_SECRET_ACCESS_KEY = secretAccessKey;
  process.env.S3_FORCE_PATH_STYLE = 'true';
  process.env.S3_REGION = 'us-east-1';
  // Always this world's own: tests know what the offline recognizer hears, not what another server would.
  // Under the run's directory, which the main process removes: a worker is stopped without its own teardown.
  whisper = await startLocalWhisper({ directory: testRunDirectory });
  process.env.WHISPER_BASE_URL = whisper.url;
}

/** A mocha worker of a parallel run (mocha forks lib/nodejs/worker.cjs). */
function isWorker(): boolean {
  return /[/\\]mocha[/\\]lib[/\\]nodejs[/\\]worker\.cjs$/.test(process.argv[1] ?? '');
}

if (!isParallelMain) await makeWorld();

/** Runs in the main process only, after every file: removes every world of this run. */
export async function mochaGlobalTeardown(): Promise<void> {
  await Promise.all([s3?.close(), whisper?.close()]);
  await rm(testRunDirectory, { recursive: true, force: true });
  if (process.env.KEEP_TEST_DATABASE !== '1') {
    const { rows } = await admin(`select datname from pg_database where datname like '${databasePrefix}\\_%'`);
    for (const { datname } of rows as Array<{ datname: string }>) await admin(`drop database if exists "${datname}" with (force)`);
  }
  const { Redis } = await import('ioredis');
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
  try {
    const keys = await redis.keys(`${redisPrefix}*`);
    // In slices: a long run leaves more keys than one DEL's arguments should carry.
    for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
  } finally {
    redis.disconnect();
  }
}

let fileStarted = Date.now();
/**
 * A file's wall time, from its first root hook to its last, for the reporter's slowest files:
 * a parallel run's main process hears each file's events only once the file is done.
 */
export const mochaHooks = {
  beforeAll(this: Mocha.Context) {
    fileStarted = Date.now();
  },
  async afterAll(this: Mocha.Context) {
    const file = this.test?.parent?.suites[0]?.file;
    if (!isWorker() || !file) return;
    await mkdir(fileTimesDirectory, { recursive: true });
    await appendFile(join(fileTimesDirectory, `${process.pid}.jsonl`), `${JSON.stringify({ file, ms: Date.now() - fileStarted })}\n`);
  },
};
