import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { CoreV1Api } from '@kubernetes/client-node';
import { benchDatabase } from '../../bench/api/servers.ts';
import { chaosSeed, describeFindings, runCampaign, type CampaignResult } from '../../bench/chaos/campaign.ts';
import { applyCrds, kubeCluster, type KubeCluster } from '../support/kube-cluster.ts';
import { kubeNode } from '../support/kube-node.ts';
import { installRelease, type Release } from '../support/kube-release.ts';
import { operatorEnv } from '../operator/operator-support.ts';

const API_KILLS = 12;
const OPERATOR_KILLS = 10;

/**
 * The seeded chaos campaign of the suite (bench/chaos runs a longer one): SIGKILLs of the api
 * on the local backend and of the operator on a real control plane — a release of the chart,
 * whose Job Pods the test node runs (their real programs, which live on while the operator is
 * dead, as on a cluster) — while users of both ask for jobs of every program over HTTP; replay
 * a run with CHAOS_SEED=<the seed it printed>.
 */
describe('chaos: SIGKILLs of the api (local backend) and the operator (real control plane) while jobs run', function () {
  this.timeout(600_000);
  let cluster: KubeCluster;
  let release: Release;
  let database: { url: string; drop(): Promise<void> };
  let dir: string;
  let result: CampaignResult;
  const seed = chaosSeed();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-chaos-'));
    database = await benchDatabase(`cutroom_chaos_${randomBytes(4).toString('hex')}`);
    cluster = await kubeCluster();
    await applyCrds(cluster);
    await kubeNode(cluster);
    // The chart's job ServiceAccounts, ConfigMap (the run's S3 and Whisper) and Secret; its api and operator run as processes of the campaign.
    release = await installRelease(cluster, 'chaos');
    const { namespace } = release;
    const jobSettings = Object.fromEntries(Object.entries(release.operatorEnv).filter(([key]) => key.startsWith('JOB_')));
    console.log(`      chaos seed ${seed} (CHAOS_SEED=${seed} replays it)`);
    result = await runCampaign({
      seed,
      environment: {
        databaseUrl: database.url,
        redisUrl: process.env.REDIS_URL!,
        redisKeyPrefix: `${process.env.REDIS_KEY_PREFIX}chaos:`,
        // the run's bucket: the release's job ConfigMap and Secret give Pods the same settings
        s3: { endpoint: process.env.S3_ENDPOINT!, bucket: process.env.S3_BUCKET!, region: process.env.S3_REGION!, accessKeyId: process.env.S3_ACCESS_KEY_ID!, secretAccessKey: process.env.S3_SECRET_ACCESS_KEY! },
        whisperBaseUrl: process.env.WHISPER_BASE_URL!,
        workDir: dir,
      },
      apiKills: API_KILLS,
      operatorKills: OPERATOR_KILLS,
      // short leases: a killed leader's Lease expires in a second and the next replica takes over
      cluster: {
        kubeconfigPath: await cluster.kubeconfigFile(await release.tokenOf(release.operatorServiceAccount), namespace),
        apiKubeconfigPath: await cluster.kubeconfigFile(await release.tokenOf(release.apiServiceAccount), namespace),
        namespace,
        operatorEnv: () => ({ ...operatorEnv(namespace), ...jobSettings }),
      },
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

  it('the api never answered 5xx, and every Pod the Job controller made ran its program to an end', async () => {
    expect(result.serverErrors).to.deep.equal([]);
    const pods = (await cluster.kubeConfig(release.namespace).makeApiClient(CoreV1Api).listNamespacedPod({ namespace: release.namespace, labelSelector: 'job-name' })).items;
    expect(pods.length, 'job Pods').to.be.greaterThan(0);
    const unended = pods.filter((pod) => !pod.status?.containerStatuses?.[0]?.state?.terminated).map((pod) => `${pod.metadata!.name}: ${pod.status?.phase} ${pod.status?.message ?? ''}`);
    expect(unended).to.deep.equal([]);
  });
});
