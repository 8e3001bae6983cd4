/**
 * The rate limiter's choice (issue 42 item 2), measured alone: the api's RateLimiter (leases
 * of the window's count, api/src/shared/rate-limiter.ts) against the anchor it replaced, one
 * Redis round trip per request (rate-limiter-flexible's RateLimiterRedis, the same fixed
 * window), on the same Redis, in alternating pairs. Each pass takes `TAKES` requests of one
 * caller's allowance, `CONCURRENCY` at a time, as one busy client address does; reported per
 * request: wall time, CPU time of this process, and Redis commands sent.
 * Targets: at most one Redis command per 10 requests, and at most half the anchor's CPU.
 *
 *   node bench/api/rate-limiter.ts      (BENCH_ROUNDS=5 pairs by default; the medians count)
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { RateLimiter } from '../../api/src/shared/rate-limiter.ts';
import { dropRedisKeys, median } from './servers.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const TAKES = 20_000;
const CONCURRENCY = 10;
const POINTS = 1_000_000_000;
const REDIS_CALLS_TARGET = 0.1;
const CPU_RATIO_TARGET = 0.5;

interface Pass {
  wallUs: number;
  cpuUs: number;
  redisCalls: number;
}

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const prefix = `cutroom-bench-limiter:${randomBytes(4).toString('hex')}:`;
const redis = new Redis(url, { keyPrefix: prefix });
let commands = 0;
// Every command ioredis sends, whichever limiter sends it.
const send = redis.sendCommand.bind(redis);
redis.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
  commands++;
  return send(...args);
};

const leased = new RateLimiter(redis, { name: 'bench-leased', points: POINTS, seconds: 60 });
const roundTrip = new RateLimiterRedis({ storeClient: redis, keyPrefix: 'rate:bench-round-trip', points: POINTS, duration: 60 });

async function pass(take: (caller: string) => Promise<unknown>): Promise<Pass> {
  const caller = `10.0.0.${1 + Math.floor(Math.random() * 250)}`;
  const before = { commands, cpu: process.cpuUsage(), wall: performance.now() };
  let next = 0;
  const worker = async () => {
    while (next < TAKES) {
      next++;
      await take(caller);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const cpu = process.cpuUsage(before.cpu);
  return {
    wallUs: ((performance.now() - before.wall) * 1000) / TAKES,
    cpuUs: (cpu.user + cpu.system) / TAKES,
    redisCalls: (commands - before.commands) / TAKES,
  };
}

const ours = (caller: string) => leased.take(caller);
const anchor = (caller: string) => roundTrip.consume(caller);

try {
  await pass(ours); // warm-up of both, not counted
  await pass(anchor);
  const measured = { ours: [] as Pass[], anchor: [] as Pass[] };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (['ours', 'anchor'] as const) : (['anchor', 'ours'] as const);
    for (const name of order) {
      const result = await pass(name === 'ours' ? ours : anchor);
      measured[name].push(result);
      process.stdout.write(
        `round ${round + 1} ${name.padEnd(6)} ${result.wallUs.toFixed(1).padStart(6)} µs/request wall  ${result.cpuUs.toFixed(1).padStart(6)} µs CPU  ${result.redisCalls.toFixed(3)} Redis commands\n`,
      );
    }
  }
  const summary = (passes: Pass[]) => ({
    wallUs: median(passes.map((p) => p.wallUs)),
    cpuUs: median(passes.map((p) => p.cpuUs)),
    redisCalls: median(passes.map((p) => p.redisCalls)),
  });
  const a = summary(measured.ours);
  const b = summary(measured.anchor);
  process.stdout.write(
    `\nmedians of ${rounds} (leases / one round trip per request), ${TAKES} requests of one caller, ${CONCURRENCY} at a time:\n` +
      `  wall ${a.wallUs.toFixed(1)} / ${b.wallUs.toFixed(1)} µs = ${(a.wallUs / b.wallUs).toFixed(2)}×   CPU ${a.cpuUs.toFixed(1)} / ${b.cpuUs.toFixed(1)} µs = ${(a.cpuUs / b.cpuUs).toFixed(2)}×   Redis commands ${a.redisCalls.toFixed(3)} / ${b.redisCalls.toFixed(3)} per request\n\n`,
  );
  const callsOk = a.redisCalls <= REDIS_CALLS_TARGET;
  const cpuOk = a.cpuUs / b.cpuUs <= CPU_RATIO_TARGET;
  console.log(`RESULT rate_limit_redis_commands_per_request ${a.redisCalls.toFixed(3)} (target <= ${REDIS_CALLS_TARGET}) ${callsOk ? 'ok' : 'miss'}`);
  console.log(`RESULT rate_limit_cpu_ratio ${(a.cpuUs / b.cpuUs).toFixed(2)} (target <= ${CPU_RATIO_TARGET}) ${cpuOk ? 'ok' : 'miss'}`);
  process.exitCode = callsOk && cpuOk ? 0 : 1;
} finally {
  redis.disconnect();
  await dropRedisKeys(url, prefix);
}
