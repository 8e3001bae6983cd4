import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { makeVideo } from '../support/media.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import type { V1Lease } from '@kubernetes/client-node';
import type { JobResource } from '../../crds/contract/resources.ts';
import { startKubeSim } from '../kube-sim/index.ts';
import type { KubeSim } from '../kube-sim/index.ts';
import { channelFlushed } from '../support/wait.ts';
import { jobServiceIn, metricValue, putArtifactResult, resourceOf, startTestOperator, submitUploadJob } from './operator-support.ts';
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
  const lease = () => (sim.get('leases', namespace, 'cutroom-operator') as V1Lease).spec!;
  /** Everything published on the owner's channel before this call has reached `events` (see channelFlushed). */
  const published = (upload: { userId: string }, events: { events: { type: string }[] }) =>
    channelFlushed(app.services.redis, app.services.bus.userChannel(upload.userId), events.events);
  /** What a replica's reconciler logged about one resource (its lines carry the resource's name). */
  const logged = (operator: TestOperator, msg: string, name: string) => operator.logs.filter((line) => line.msg === msg && line.resource === name);

  it('operator restart mid-job: the next replica finds the running Job (no second Job) and completes the job once', async () => {
    const { first, upload, events, job, name, resource, jobName } = await runningJobOnFirstReplica();
    try {
      await first.stop();

      const second = await replica();
      await sim.waitFor(() => second.isLeader, 3000);
      await putArtifactResult(app.services.storage, job.outputPrefix);
      sim.completeJob(namespace, jobName);
      await events.next('media_ready');
      // The final phase is written after the completion ran and published; a terminal resource is never reconciled again.
      await whenPhase(name, 'Succeeded');
      await published(upload, events);

      expect(ownedJobs(resource)).to.have.length(1);
      expect(events.events.filter((event) => event.type === 'media_ready')).to.have.length(1);
      expect(logged(second, 'job created', name), 'the second replica found the running Job').to.deep.equal([]);
      expect(await metricValue(second.metrics, 'cutroom_jobs_succeeded_total', { kind: 'ArtifactJob' })).to.equal(1);
      expect((await app.services.orm.em.fork().findOneOrFail(Job, job.id)).status).to.equal('succeeded');
    } finally {
      await events.close();
    }
  });

  it('a restart between the completion and the final status write does not run the completion twice', async () => {
    // Slow retries: the first replica must not get to retry its failed status write before it stops.
    const { first, upload, events, job, name, resource, jobName } = await runningJobOnFirstReplica({ OPERATOR_RETRY_BASE_MS: '10000', OPERATOR_RETRY_MAX_MS: '10000' });
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
      // Its completion call found the job settled (the call's return value, logged before the phase is written): nothing counted, nothing published.
      expect(logged(second, 'job finished', name).map((line) => line.settled)).to.deep.equal([false]);
      await published(upload, events);
      expect(events.events.filter((event) => event.type === 'media_ready')).to.have.length(1);
      expect(await metricValue(first.metrics, 'cutroom_jobs_succeeded_total', { kind: 'ArtifactJob' })).to.equal(1);
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
    // Not a pause: the leader has held the Lease, renewing it, for longer than its duration, so the
    // follower (trying every retry period since it started) would have taken an expired one by now.
    await sim.waitFor(() => Date.parse(String(lease().renewTime)) - Date.parse(String(lease().acquireTime)) > lease().leaseDurationSeconds! * 1000, 5000);
    expect([a.isLeader, b.isLeader].filter(Boolean)).to.have.length(1);
    expect(lease().holderIdentity).to.equal(leader.identity);

    const { events, resource } = await artifactJob();
    await events.close();
    // artifactJob waited for the Job; only a leader reconciles, and the Job's name is the resource's own.
    expect(ownedJobs(resource)).to.have.length(1);
    expect(await metricValue(leader.metrics, 'cutroom_operator_reconciles_total')).to.be.greaterThan(0);
    // The follower never held the Lease (a takeover counts a transition), so it never reconciled.
    expect(lease().leaseTransitions).to.equal(0);
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
    // An hour-long Lease: the follower can only lead this test through the Lease the leader hands back.
    const hourLease = { OPERATOR_LEASE_DURATION_SECONDS: '3600' };
    const [a, b] = await Promise.all([replica(hourLease), replica(hourLease)]);
    const { leader, follower } = await leaderOf(a, b);
    const { events, job, name, resource, jobName } = await artifactJob();
    try {
      await leader.stop();
      await sim.waitFor(() => follower.isLeader, 5000);
      expect(lease()).to.include({ holderIdentity: follower.identity, leaseTransitions: 1 });

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
      await leader.stop({ release: false });
      // The crashed leader's Lease still names it: only its expiry lets the follower in
      // (the expiry rule itself is pinned in leader-election.test.ts).
      const left = lease();
      expect(left.holderIdentity).to.equal(leader.identity);
      await sim.waitFor(() => follower.isLeader, 5000);
      expect(both).to.equal(false);
      expect(lease()).to.include({ holderIdentity: follower.identity, leaseTransitions: left.leaseTransitions! + 1 });

      // The new leader reconciles what comes next: it makes the new resource's Job. (Not counted by
      // cutroom_jobs_created_total: the operator's own outbox may have created the resource too, and
      // counts that in the same series.)
      const { events, name } = await artifactJob();
      await events.close();
      await sim.waitFor(() => logged(follower, 'job created', name).length === 1, 5000);
    } finally {
      clearInterval(sampler);
    }
  });
});
