// What the api benchmarks share: a database of their own, the api (or the baseline) as a
// child process started as a user would start it, and its CPU time and memory from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { eventually } from '../../hack/fixtures/wait.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const API_MAIN = fileURLToPath(new URL('../../api/src/main.ts', import.meta.url));
const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh database migrated by the api's own migrations; `drop()` removes it. */
export async function benchDatabase(name: string): Promise<{ url: string; drop(): Promise<void> }> {
  await admin(`create database "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const { openOrm, migrateUp } = await import('../../api/src/orm.ts');
  const { entities } = await import('../../api/src/entities.ts');
  const orm = await openOrm({ DATABASE_URL: url.toString(), DATABASE_POOL_MAX: 2 }, entities);
  try {
    await migrateUp(orm, url.toString());
  } finally {
    await orm.close();
  }
  return { url: url.toString(), drop: () => admin(`drop database if exists "${name}" with (force)`) };
}

/**
 * The api image's command (api/Dockerfile's CMD): `node`, its flags, the script; the benchmarks
 * start the bundle with it, so its Node flags count as in production.
 */
export async function imageCommand(): Promise<{ nodeArgs: string[]; script: string }> {
  const dockerfile = await readFile(join(ROOT, 'api/Dockerfile'), 'utf8');
  const command = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? 'null') as string[] | null;
  if (!command || command[0] !== 'node' || command.length < 2) throw new Error(`api/Dockerfile's CMD is not ["node", …flags, script]: ${JSON.stringify(command)}`);
  return { nodeArgs: command.slice(1, -1), script: command.at(-1)! };
}

/** Removes every Redis key a benchmark's servers wrote under their prefix. */
export async function dropRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  name: string;
  url: string;
  child: ChildProcess;
  /** Milliseconds from spawn to the first 200 from the probe path. */
  startedInMs: number;
  /** CPU seconds (user + system) the process had used when it first answered 200: steadier than the time on a shared machine. */
  startCpuSeconds: number;
  stop(): Promise<void>;
}

/** Spawns `node <entry>` on a free port and waits for `probePath` to answer 200. */
export async function startServer(
  name: string,
  entry: string,
  env: Record<string, string>,
  options: { probePath?: string; nodeArgs?: string[]; timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), entry], {
    cwd: ROOT,
    env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: String(port) },
    // The access log goes where a container's stdout would: nowhere we wait on.
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before answering`))));
  const probe = eventually(
    async () => {
      try {
        const response = await fetch(`${url}${options.probePath ?? '/healthz'}`);
        await response.arrayBuffer();
        return response.status === 200 ? true : undefined;
      } catch {
        return undefined; // not listening yet
      }
    },
    `${name} answering 200 on ${options.probePath ?? '/healthz'}`,
    options.timeoutMs ?? 30_000,
    5,
  );
  await Promise.race([probe, exited]);
  const startedInMs = performance.now() - started;
  const startCpuSeconds = await cpuSeconds(child.pid!);
  exited.catch(() => {});
  return {
    name,
    url,
    child,
    startedInMs,
    startCpuSeconds,
    stop: async () => {
      if (child.exitCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await gone;
    },
  };
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a process has used so far. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Resident memory of a process in MB. */
export async function rssMegabytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kilobytes = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kilobytes / 1024;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}
