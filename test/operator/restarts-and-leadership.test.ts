import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { makeVideo } from '../support/media.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import type { JobResource } from '../../crds/schema.ts';
import { startKubeSim } from '../kube-sim/index.ts';
import type { KubeSim } from '../kube-sim/index.ts';
import { jobServiceIn, metricValue, putArtifactResult, resourceOf, sleep, startTestOperator, submitUploadJob } from './operator-support.ts';
import type { TestOperator } from './operator-support.ts';

describe('operator: restarts, two replicas and failover', function () {
  this.timeout(30_000);
  let sim: KubeSim;
  let app: TestApp;
  let dir: string;
  let clip: string;
  let n = 0;
  let namespace: string;
  const operators: TestOperator[] = [];

  before(async () => {
    sim = await startKubeSim({ bookmarkIntervalMs: 0 });
    app = await startTestApp();
    dir = await mkdtemp(join(tmpdir(), 'cutroom-operator-ha-'));
    clip = await makeVideo(dir, 'clip.mp4', { seconds: 1 });
  });
  after(async () => {
    await app?.close();
    await sim?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    namespace = `ha-${++n}`;
  });
  afterEach(async () => {
    for (const operator of operators.splice(0)) await operator.stop();
  });

  async function replica(env: Record<string, string> = {}) {
    const operator = await startTestOperator(sim, namespace, env);
    operators.push(operator);
    return operator;
  }

  const artifactJob = () => submitUploadJob(sim, namespace, app.services, jobServiceIn(app.services, sim, namespace), clip);

  /** A replica leading, with an artifact job whose pod is running. */
  async function runningJobOnFirstReplica(env: Record<string, string> = {}) {
    const first = await replica(env);
    await sim.waitFor(() => first.isLeader, 3000);
    const submitted = await artifactJob();
    sim.startJob(namespace, submitted.jobName);
    await whenPhase(submitted.name, 'Running');
    return { first, ...submitted };
  }

  const whenPhase = (name: string, phase: string, timeoutMs = 5000) =>
    sim.waitFor(() => {
      const resource = resourceOf(sim, 'ArtifactJob', namespace, name);
      return resource?.status?.phase === phase && resource;
    }, timeoutMs);
  const ownedJobs = (resource: JobResource) =>
    sim.list('jobs', namespace).filter((job) => job.metadata.ownerReferences?.some((ref) => ref.uid === resource.metadata.uid));
  const leaderOf = async (a: TestOperator, b: TestOperator) => {
    await sim.waitFor(() => a.isLeader || b.isLeader, 3000);
    return a.isLeader ? { leader: a, follower: b } : { leader: b, follower: a };
  };

  it('operator restart mid-job: the next replica finds the running Job (no second Job) and completes the job once', async () => {
    const { first, events, job, name, resource, jobName } = await runningJobOnFirstReplica();
    try {
      await first.stop();

      const second = await replica();
      await sim.waitFor(() => second.isLeader, 3000);
      await putArtifactResult(app.services.storage, job.outputPrefix);
      sim.completeJob(namespace, jobName);
      await events.next('media_ready');
      await whenPhase(name, 'Succeeded');
      await sleep(200);

      expect(ownedJobs(resource)).to.have.length(1);
      expect(events.events.filter((event) => event.type === 'media_ready')).to.have.length(1);
      expect(await metricValue(second.metrics, 'cutroom_jobs_created_total')).to.equal(0);
      expect(await metricValue(second.metrics, 'cutroom_jobs_succeeded_total', { kind: 'ArtifactJob' })).to.equal(1);
      expect((await app.services.orm.em.fork().findOneOrFail(Job, job.id)).status).to.equal('succeeded');
    } finally {
      await events.close();
    }
  });

  it('a restart between the completion and the final status write does not run the completion twice', async () => {
    // Slow retries: the first replica must not get to retry its failed status write before it stops.
    const { first, events, job, name, resource, jobName } = await runningJobOnFirstReplica({ OPERATOR_RETRY_BASE_MS: '10000', OPERATOR_RETRY_MAX_MS: '10000' });
    try {
      await putArtifactResult(app.services.storage, job.outputPrefix);
      sim.failNext({ method: 'PATCH', path: `/apis/cutroom.dev/v1alpha1/namespaces/${namespace}/artifactjobs/${name}/status`, code: 500 }, 1);
      sim.completeJob(namespace, jobName);
      await events.next('media_ready');
      await sim.waitFor(() => first.logs.some((line) => line.msg === 'reconcile failed; retrying'), 3000);
      expect(resourceOf(sim, 'ArtifactJob', namespace, name)!.status!.phase).to.equal('Running');
      await first.stop();

      const second = await replica();
      await whenPhase(name, 'Succeeded');
      await sleep(200);
      expect(events.events.filter((event) => event.type === 'media_ready')).to.have.length(1);
      expect(await metricValue(first.metrics, 'cutroom_jobs_succeeded_total', { kind: 'ArtifactJob' })).to.equal(1);
      // Its completion call found the job settled: nothing counted, nothing published.
      expect(await metricValue(second.metrics, 'cutroom_jobs_succeeded_total', { kind: 'ArtifactJob' })).to.equal(0);
      expect(ownedJobs(resource)).to.have.length(1);
    } finally {
      await events.close();
    }
  });

  it('a resource deleted while no operator ran is still settled as cancelled when one comes back (the finalizer held it)', async () => {
    const first = await replica();
    await sim.waitFor(() => first.isLeader, 3000);
    const { events, job, name, resource } = await artifactJob();
    try {
      await first.stop();
      sim.delete('artifactjobs', namespace, name);
      expect(resourceOf(sim, 'ArtifactJob', namespace, name)!.metadata.deletionTimestamp).to.be.a('string');

      await replica();
      await events.next('media_failed');
      await sim.waitFor(() => !resourceOf(sim, 'ArtifactJob', namespace, name), 5000);
      expect(ownedJobs(resource)).to.deep.equal([]);
      expect(await app.services.orm.em.fork().findOneOrFail(Job, job.id)).to.deep.include({ status: 'failed', error: 'The job was cancelled.' });
    } finally {
      await events.close();
    }
  });

  it('two replicas: exactly one leads and reconciles, the Lease names it; /healthz is 200 on both', async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const { leader, follower } = await leaderOf(a, b);
    await sleep(1200);
    expect([a.isLeader, b.isLeader].filter(Boolean)).to.have.length(1);
    expect((sim.get('leases', namespace, 'cutroom-operator')!.spec as { holderIdentity: string }).holderIdentity).to.equal(leader.identity);

    const { events, resource } = await artifactJob();
    await events.close();
    await sleep(200);
    expect(ownedJobs(resource)).to.have.length(1);
    expect(await metricValue(leader.metrics, 'cutroom_operator_reconciles_total')).to.be.greaterThan(0);
    expect(await metricValue(follower.metrics, 'cutroom_operator_reconciles_total')).to.equal(0);
    expect(await metricValue(follower.metrics, 'cutroom_operator_leader')).to.equal(0);
    expect(await metricValue(leader.metrics, 'cutroom_operator_leader')).to.equal(1);
    for (const operator of [leader, follower]) {
      const health = await fetch(`${operator.url}/healthz`);
      expect(health.status).to.equal(200);
      expect(await health.json()).to.deep.equal({ status: 'ok', leader: operator === leader });
    }
  });

  it('failover: when the leader stops, the other takes over at once and finishes the job the first one started', async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const { leader, follower } = await leaderOf(a, b);
    const { events, job, name, resource, jobName } = await artifactJob();
    try {
      const stoppedAt = Date.now();
      await leader.stop();
      await sim.waitFor(() => follower.isLeader, 3000);
      expect(Date.now() - stoppedAt).to.be.below(1000);

      await putArtifactResult(app.services.storage, job.outputPrefix);
      sim.completeJob(namespace, jobName);
      await events.next('media_ready');
      await whenPhase(name, 'Succeeded');
      expect(ownedJobs(resource)).to.have.length(1);
      expect(await metricValue(follower.metrics, 'cutroom_jobs_succeeded_total', { kind: 'ArtifactJob' })).to.equal(1);
    } finally {
      await events.close();
    }
  });

  it('when the leader’s renewals stop (a crash), the other takes over after the Lease expired, never both at once', async () => {
    const [a, b] = await Promise.all([replica(), replica()]);
    const { leader, follower } = await leaderOf(a, b);
    let both = false;
    const sampler = setInterval(() => {
      both ||= a.isLeader && b.isLeader;
    }, 5);
    try {
      const crashedAt = Date.now();
      await leader.stop({ release: false });
      await sim.waitFor(() => follower.isLeader, 4000);
      expect(Date.now() - crashedAt).to.be.at.least(800);
      expect(both).to.equal(false);

      // The new leader reconciles what comes next.
      const { events } = await artifactJob();
      await events.close();
      expect(await metricValue(follower.metrics, 'cutroom_jobs_created_total', { kind: 'ArtifactJob' })).to.equal(1);
    } finally {
      clearInterval(sampler);
    }
  });
});
