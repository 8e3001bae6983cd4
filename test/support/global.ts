import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openOrm, migrateUp } from '../../api/src/db/orm.ts';
import { startEmbeddedS3, type EmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { startLocalWhisper, type LocalWhisper } from '../../hack/local-whisper/server.ts';

/**
 * One fresh PostgreSQL database, one Redis key prefix, one embedded S3 server and one
 * local Whisper server per test run; their addresses go into process.env for the harness
 * and child processes.
 */
const runId = `${process.pid}_${Date.now().toString(36)}`;
const adminUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const databaseName = `cutroom_test_${runId}`;
let s3: EmbeddedS3 | undefined;
let s3Dir: string | undefined;
let whisper: LocalWhisper | undefined;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function mochaGlobalSetup(): Promise<void> {
  await admin(`create database "${databaseName}"`);
  const databaseUrl = new URL(adminUrl);
  databaseUrl.pathname = `/${databaseName}`;
  process.env.DATABASE_URL = databaseUrl.toString();
  const orm = await openOrm({ DATABASE_URL: process.env.DATABASE_URL, DATABASE_POOL_MAX: 2 });
  try {
    await migrateUp(orm, process.env.DATABASE_URL);
  } finally {
    await orm.close();
  }
  process.env.REDIS_URL ??= 'redis://127.0.0.1:6379/0';
  process.env.REDIS_KEY_PREFIX = `cutroom-test:${runId}:`;
  s3Dir = await mkdtemp(join(tmpdir(), 'cutroom-s3-'));
  // A secret of this run: the store verifies every signature, so nothing passes on a well-known one.
  const secretAccessKey = randomBytes(24).toString('base64url');
  s3 = await startEmbeddedS3({ directory: s3Dir, bucket: 'cutroom-test', secretAccessKey });
  process.env.S3_ENDPOINT = s3.endpoint;
  process.env.S3_BUCKET = s3.bucket;
  process.env.S3_ACCESS_KEY_ID = 'S3RVER';
  process.env.S3_SECRET_ACCESS_KEY = secretAccessKey;
  process.env.S3_FORCE_PATH_STYLE = 'true';
  process.env.S3_REGION = 'us-east-1';
  // Always this run's own: tests know what the offline recognizer hears, not what another server would.
  whisper = await startLocalWhisper();
  process.env.WHISPER_BASE_URL = whisper.url;
}

export async function mochaGlobalTeardown(): Promise<void> {
  await Promise.all([s3?.close(), whisper?.close()]);
  if (s3Dir) await rm(s3Dir, { recursive: true, force: true });
  if (process.env.KEEP_TEST_DATABASE !== '1') await admin(`drop database if exists "${databaseName}" with (force)`);
  const { Redis } = await import('ioredis');
  const redis = new Redis(process.env.REDIS_URL!);
  try {
    const keys = await redis.keys(`${process.env.REDIS_KEY_PREFIX}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}
