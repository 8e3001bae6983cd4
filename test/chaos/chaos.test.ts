import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { benchDatabase } from '../../bench/api/servers.ts';
import { chaosSeed, describeFindings, runCampaign, type CampaignResult } from '../../bench/chaos/campaign.ts';
import { startKubeSim, type KubeSim } from '../kube-sim/index.ts';
import { operatorEnv } from '../operator/operator-support.ts';
import { startKubelet, type Kubelet } from './kubelet.ts';

const API_KILLS = 12;
const OPERATOR_KILLS = 10;
const NAMESPACE = 'chaos';

/**
 * The seeded chaos campaign of the suite (bench/chaos runs a longer one): SIGKILLs of the api
 * on the local backend and of the operator on the simulator, while users of both ask for jobs
 * of every program over HTTP; replay a run with CHAOS_SEED=<the seed it printed>.
 */
describe('chaos: SIGKILLs of the api (local backend) and the operator (simulator) while jobs run', function () {
  this.timeout(600_000);
  let sim: KubeSim;
  let kubelet: Kubelet;
  let database: { url: string; drop(): Promise<void> };
  let dir: string;
  let result: CampaignResult;
  const seed = chaosSeed();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-chaos-'));
    database = await benchDatabase(`cutroom_chaos_${randomBytes(4).toString('hex')}`);
    sim = await startKubeSim();
    const kubeconfigPath = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfigPath,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'kube-sim', cluster: { server: sim.url, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'kube-sim', user: {} }],
        contexts: [{ name: 'kube-sim', context: { cluster: 'kube-sim', user: 'kube-sim', namespace: NAMESPACE } }],
        'current-context': 'kube-sim',
      }),
    );
    kubelet = startKubelet(sim, NAMESPACE, 2);
    console.log(`      chaos seed ${seed} (CHAOS_SEED=${seed} replays it)`);
    result = await runCampaign({
      seed,
      environment: {
        databaseUrl: database.url,
        redisUrl: process.env.REDIS_URL!,
        redisKeyPrefix: `${process.env.REDIS_KEY_PREFIX}chaos:`,
        // the run's bucket: the stand-in kubelet gives pods the run's S3 settings
        s3: { endpoint: process.env.S3_ENDPOINT!, bucket: process.env.S3_BUCKET!, region: process.env.S3_REGION!, accessKeyId: process.env.S3_ACCESS_KEY_ID!, secretAccessKey: process.env.S3_SECRET_ACCESS_KEY! },
        whisperBaseUrl: process.env.WHISPER_BASE_URL!,
        workDir: dir,
      },
      apiKills: API_KILLS,
      operatorKills: OPERATOR_KILLS,
      // short leases: a killed leader's Lease expires in a second and the next replica takes over
      cluster: { kubeconfigPath, namespace: NAMESPACE, operatorEnv: () => operatorEnv(NAMESPACE) },
      usersPerWorld: 3,
      backlog: 4,
      killGapMs: { api: [800, 5000], operator: [300, 2500] },
      quiesceTimeoutMs: 90_000,
      log: (line) => console.log(`      ${line}`),
    });
    console.log(`      ${result.kills.length} kills in ${(result.durationMs / 1000).toFixed(0)} s; jobs: ${[...result.jobs].map(([key, n]) => `${key} ${n}`).join(', ')}`);
    console.log(`      failures: ${[...result.failures].map(([key, n]) => `${key} ${n}`).join(', ') || 'none'}`);
    console.log(`      asked: ${[...result.accepted].map(([key, n]) => `${key} ${n}`).join(', ')}; refused: ${[...result.refused].map(([key, n]) => `${key} ${n}`).join(', ') || 'none'}`);
    for (const line of describeFindings(result)) console.log(`      ${line}`);
  });
  after(async () => {
    await kubelet?.stop();
    await sim?.close();
    await database?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`at least ${API_KILLS + OPERATOR_KILLS} kills landed, most of them with jobs running`, () => {
    expect(result.kills.filter((kill) => kill.target === 'api')).to.have.length(API_KILLS);
    expect(result.kills.filter((kill) => kill.target === 'operator')).to.have.length(OPERATOR_KILLS);
    const busy = result.kills.filter((kill) => kill.running.length > 0).length;
    expect(busy, 'kills that landed while a job ran').to.be.at.least(Math.ceil(result.kills.length / 2));
  });

  it('jobs of every program were asked for and settled', () => {
    const programs = new Set([...result.jobs.keys()].map((key) => key.split(' ')[0]));
    expect([...programs].sort()).to.deep.equal(['analyze', 'artifact', 'media-edit', 'media-import', 'proxy', 'render']);
  });

  it('afterwards no job is stuck: every job completed, every file, export and analysis in a final state', () => {
    expect(result.quiesced, 'settled within the timeout').to.equal(true);
    expect(result.violations.filter((v) => v.rule === 'stuck_jobs' || v.rule === 'stuck_records')).to.deep.equal([]);
  });

  it("storage accounting is exact: each user's storage_used_bytes is what their items were charged, each stored object its row's size", () => {
    expect(result.violations.filter((v) => v.rule === 'storage_mismatches')).to.deep.equal([]);
  });

  it('the credit ledger is exact: every reservation deducted (success) or released (failure) exactly once', () => {
    expect(result.violations.filter((v) => v.rule === 'ledger_mismatches')).to.deep.equal([]);
  });

  it('every outcome event (media_ready/failed, analysis_complete/failed, export_complete/failed) was published exactly once', () => {
    expect(result.violations.filter((v) => v.rule.endsWith('_events'))).to.deep.equal([]);
  });

  it('the api never answered 5xx and the stand-in kubelet ran every pod it was given', () => {
    expect(result.serverErrors).to.deep.equal([]);
    expect(kubelet.errors).to.deep.equal([]);
  });
});
