/**
 * The long chaos campaign (the suite's test/chaos/chaos.test.ts is its short form): SIGKILLs
 * of the api on the local backend — alone (its job programs live on as orphans) or with its
 * whole process group — while users keep asking for jobs of every program over HTTP; then
 * the invariants are checked (bench/chaos/invariants.ts). Its own database, Redis prefix,
 * bucket, Whisper and Mux double. The operator's half runs in the suite only: the Kubernetes
 * control plane and its test node live in test/support/, which nothing in bench/ imports.
 *
 *   node bench/chaos/run.ts      CHAOS_KILLS=100 CHAOS_USERS=4 CHAOS_SEED=<seed to replay>
 *   (needs PostgreSQL at TEST_POSTGRES_URL's server and Redis at REDIS_URL, as hack/test.sh starts them)
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMBEDDED_S3_CREDENTIALS, startEmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { startLocalWhisper } from '../../recognizer/server/server.ts';
import { benchDatabase } from '../api/servers.ts';
import { chaosSeed, describeFindings, runCampaign } from './campaign.ts';

// an interrupted campaign still takes its processes along (processes.ts kills their groups at exit)
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

const KILLS = Number(process.env.CHAOS_KILLS ?? 100);
const USERS = Number(process.env.CHAOS_USERS ?? 4);
const TARGET_KILLS = 20;
const seed = chaosSeed();
const id = randomBytes(4).toString('hex');

const dir = await mkdtemp(join(tmpdir(), 'cutroom-bench-chaos-'));
const database = await benchDatabase(`cutroom_bench_chaos_${id}`);
const s3 = await startEmbeddedS3({ directory: join(dir, 's3'), bucket: 'cutroom-chaos' });
const whisper = await startLocalWhisper();
let failed = true;
try {
  process.stdout.write(`chaos seed ${seed} (CHAOS_SEED=${seed} replays it); ${KILLS} kills, ${USERS} users, ${cpus().length} CPUs\n`);
  const result = await runCampaign({
    seed,
    environment: {
      databaseUrl: database.url,
      redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0',
      redisKeyPrefix: `cutroom-bench-chaos:${id}:`,
      s3: { endpoint: s3.endpoint, bucket: s3.bucket, region: 'us-east-1', ...EMBEDDED_S3_CREDENTIALS },
      whisperBaseUrl: whisper.url,
      workDir: dir,
    },
    apiKills: KILLS,
    operatorKills: 0,
    usersPerWorld: USERS,
    backlog: 6,
    killGapMs: { api: [500, 10_000], operator: [500, 2000] },
    quiesceTimeoutMs: 300_000,
    log: (line) => process.stdout.write(`${line}\n`),
  });
  const busy = result.kills.filter((kill) => kill.running.length > 0).length;
  const programsHit = new Set(result.kills.flatMap((kill) => kill.running));
  process.stdout.write(
    [
      `\n${result.kills.length} kills in ${(result.durationMs / 1000).toFixed(0)} s (${result.kills.filter((kill) => kill.mode === 'group').length} with the process group), ${busy} with jobs running; programs running at a kill: ${[...programsHit].sort().join(', ')}`,
      `jobs: ${[...result.jobs].map(([key, n]) => `${key} ${n}`).join(', ')}`,
      `failures: ${[...result.failures].map(([key, n]) => `${key} ×${n}`).join('; ') || 'none'}`,
      `asked: ${[...result.accepted].map(([key, n]) => `${key} ${n}`).join(', ')}; refused: ${[...result.refused].map(([key, n]) => `${key} ${n}`).join(', ') || 'none'}`,
      ...describeFindings(result),
      '',
    ].join('\n'),
  );
  const stuck = result.counts.stuck_jobs + result.counts.stuck_records;
  const lines: [string, number, string, boolean][] = [
    ['chaos_kills', result.kills.length, `>= ${TARGET_KILLS}`, result.kills.length >= TARGET_KILLS],
    ['stuck_jobs', stuck, '= 0', stuck === 0 && result.quiesced],
    ['storage_mismatches', result.counts.storage_mismatches, '= 0', result.counts.storage_mismatches === 0],
    ['ledger_mismatches', result.counts.ledger_mismatches, '= 0', result.counts.ledger_mismatches === 0],
    ['missing_events', result.counts.missing_events + result.counts.contradicting_events, '= 0', result.counts.missing_events + result.counts.contradicting_events === 0],
    ['duplicate_events', result.counts.duplicate_events, '= 0', result.counts.duplicate_events === 0],
    ['server_errors', result.serverErrors.length, '= 0', result.serverErrors.length === 0],
  ];
  // the RESULT lines last, in the DESIGN form
  for (const [metric, value, target, ok] of lines) console.log(`RESULT ${metric} ${value} (target ${target}) ${ok ? 'ok' : 'miss'}`);
  failed = lines.some(([, , , ok]) => !ok);
} finally {
  await whisper.close();
  await s3.close();
  await database.drop();
  await rm(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
