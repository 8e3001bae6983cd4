import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { makeVideo } from '../support/media.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { cutroomGroup, cutroomVersion } from '../../crds/contract/resources.ts';
import type { JobResource } from '../../crds/contract/resources.ts';
import { channelFlushed, eventually } from '../support/wait.ts';
import { applyCrds, kubeCluster, testNamespace, type KubeCluster } from '../support/kube-cluster.ts';
import { kubeNode, type KubeNode } from '../support/kube-node.ts';
import { startFaultProxy, type FaultProxy } from '../support/kube-faults.ts';
import { jobServiceWith, jobsOwnedBy, metricValue, operatorEnv, putArtifactResult, resourceIn, startTestOperatorWith, submitUploadJobOn } from './operator-support.ts';
import type { TestOperator } from './operator-support.ts';

/**
 * Operator replicas on the real API server (through the fault proxy), their Job Pods held on
 * the test node: the test plays the artifact program's part (its result object, its Pod's end)
 * at the moment each case needs it.
 */
describe('operator: restarts, two replicas and failover (real API server and Lease)', function () {
  this.timeout(60_000);
  let cluster: KubeCluster;
  let node: KubeNode;
  let proxy: FaultProxy;
  let app: TestApp;
  let dir: string;
  let clip: string;
  let clips = 0;
  let namespace: string;
  const operators: TestOperator[] = [];

  before(async () => {
    cluster = await kubeCluster();
    await applyCrds(cluster);
    node = await kubeNode(cluster);
    app = await startTestApp();
    dir = await mkdtemp(join(tmpdir(), 'cutroom-operator-ha-'));
  });
  after(async () => {
    await app?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    namespace = await testNamespace(cluster, 'ha');
    node.hold(namespace);
    // The job Pods' ServiceAccount, as the chart makes it: the server admits no Pod without it.
    await admin().makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'cutroom-artifact-job' } } });
    proxy = await startFaultProxy(cluster);
    // A clip of its own: stored uploads of the same bytes would be one file.
    clip = await makeVideo(dir, `clip-${++clips}.mp4`, { seconds: 1 + clips / 10 });
  });
  afterEach(async () => {
    for (const operator of operators.splice(0)) await operator.stop();
    await proxy.close();
  });

  const admin = () => cluster.kubeConfig(namespace);
  async function replica(env: Record<string, string> = {}) {
    const operator = await startTestOperatorWith(proxy.kubeConfig(namespace), operatorEnv(namespace, env));
    operators.push(operator);
    return operator;
  }
  const until = (check: () => boolean, timeoutMs: number, what: string) => eventually(async () => (check() ? true : undefined), what, timeoutMs, 10);

  const artifactJob = () => submitUploadJobOn(admin(), namespace, app.services, jobServiceWith(app.services, admin(), namespace), clip);
  /** The held Pod of a Job, once the Job controller made it. */
  const podOf = (jobName: string) => eventually(async () => (await node.held(namespace, jobName))[0], `the Pod of ${jobName}`, 10_000, 20);
  const startJob = async (jobName: string) => node.play(await podOf(jobName), 'running');
  const completeJob = async (jobName: string) => node.play(await podOf(jobName), { exitCode: 0 });

  /** A replica leading, with an artifact job whose pod is running. */
  async function runningJobOnFirstReplica(env: Record<string, string> = {}) {
    const first = await replica(env);
    await until(() => first.isLeader, 5000, 'the first replica to lead');
    const submitted = await artifactJob();
    await startJob(submitted.jobName);
    await whenPhase(submitted.name, 'Running');
    return { first, ...submitted };
  }

  const whenPhase = (name: string, phase: string, timeoutMs = 10_000) =>
    eventually(async () => {
      const resource = await resourceIn(admin(), 'ArtifactJob', namespace, name);
      return resource?.status?.phase === phase ? resource : undefined;
    }, `${name} ${phase}`, timeoutMs, 20);
  const ownedJobs = (resource: JobResource) => jobsOwnedBy(admin(), namespace, resource);
  const leaderOf = async (a: TestOperator, b: TestOperator) => {
    await until(() => a.isLeader || b.isLeader, 5000, 'a leader');
    return a.isLeader ? { leader: a, follower: b } : { leader: b, follower: a };
  };
  const lease = async () => (await admin().makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'cutroom-operator', namespace })).spec!;
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
      await until(() => second.isLeader, 5000, 'the second replica to lead');
      await putArtifactResult(app.services.storage, job.outputPrefix);
      await completeJob(jobName);
      await events.next('media_ready');
      // The final phase is written after the completion ran and published; a terminal resource is never reconciled again.
      await whenPhase(name, 'Succeeded');
      await published(upload, events);

      expect(await ownedJobs(resource)).to.have.length(1);
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
      // Every status write of the first replica fails from here on: on a real cluster the Job's
      // later updates (its condition, then its Pods' finalizers) reconcile the resource again.
      const refused = proxy.failNext({ method: 'PATCH', path: `/apis/cutroom.dev/v1alpha1/namespaces/${namespace}/artifactjobs/${name}/status`, code: 500 }, 1000);
      await completeJob(jobName);
      await events.next('media_ready');
      await until(() => first.logs.some((line) => line.msg === 'reconcile failed; retrying'), 5000, 'the failed status write');
      expect((await resourceIn(admin(), 'ArtifactJob', namespace, name))!.status!.phase).to.equal('Running');
      await first.stop();
      refused.clear();

      const second = await replica();
      await whenPhase(name, 'Succeeded');
      // Its completion call found the job settled (the call's return value, logged before the phase is written): nothing counted, nothing published.
      expect(logged(second, 'job finished', name).map((line) => line.settled)).to.deep.equal([false]);
      await published(upload, events);
      expect(events.events.filter((event) => event.type === 'media_ready')).to.have.length(1);
      expect(await metricValue(first.metrics, 'cutroom_jobs_succeeded_total', { kind: 'ArtifactJob' })).to.equal(1);
      expect(await metricValue(second.metrics, 'cutroom_jobs_succeeded_total', { kind: 'ArtifactJob' })).to.equal(0);
      expect(await ownedJobs(resource)).to.have.length(1);
    } finally {
      await events.close();
    }
  });

  it('a resource deleted while no operator ran is still settled as cancelled when one comes back (the finalizer held it)', async () => {
    const first = await replica();
    await until(() => first.isLeader, 5000, 'the first replica to lead');
    const { events, job, name, resource } = await artifactJob();
    try {
      await first.stop();
      await admin().makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({ group: cutroomGroup, version: cutroomVersion, namespace, plural: 'artifactjobs', name });
      expect((await resourceIn(admin(), 'ArtifactJob', namespace, name))!.metadata.deletionTimestamp).to.not.equal(undefined);

      await replica();
      await events.next('media_failed');
      await eventually(async () => ((await resourceIn(admin(), 'ArtifactJob', namespace, name)) ? undefined : true), 'the resource to go', 10_000, 20);
      // The real garbage collector removes the Job the resource owned.
      await eventually(async () => ((await ownedJobs(resource)).length === 0 ? true : undefined), 'its Job to be collected', 30_000, 50);
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
    await eventually(async () => {
      const held = await lease();
      return new Date(held.renewTime!).getTime() - new Date(held.acquireTime!).getTime() > held.leaseDurationSeconds! * 1000 ? true : undefined;
    }, 'the Lease renewed over more than its duration', 10_000, 50);
    expect([a.isLeader, b.isLeader].filter(Boolean)).to.have.length(1);
    expect((await lease()).holderIdentity).to.equal(leader.identity);

    const { events, resource } = await artifactJob();
    await events.close();
    // artifactJob waited for the Job; only a leader reconciles, and the Job's name is the resource's own.
    expect(await ownedJobs(resource)).to.have.length(1);
    expect(await metricValue(leader.metrics, 'cutroom_operator_reconciles_total')).to.be.greaterThan(0);
    // The follower never held the Lease (a takeover counts a transition), so it never reconciled.
    expect((await lease()).leaseTransitions).to.equal(0);
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
      await until(() => follower.isLeader, 5000, 'the follower to lead');
      expect(await lease()).to.include({ holderIdentity: follower.identity, leaseTransitions: 1 });

      await putArtifactResult(app.services.storage, job.outputPrefix);
      await completeJob(jobName);
      await events.next('media_ready');
      await whenPhase(name, 'Succeeded');
      expect(await ownedJobs(resource)).to.have.length(1);
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
      const left = await lease();
      expect(left.holderIdentity).to.equal(leader.identity);
      await until(() => follower.isLeader, 5000, 'the follower to lead');
      expect(both).to.equal(false);
      expect(await lease()).to.include({ holderIdentity: follower.identity, leaseTransitions: left.leaseTransitions! + 1 });

      // The new leader reconciles what comes next: it makes the new resource's Job. (Not counted by
      // cutroom_jobs_created_total: the operator's own outbox may have created the resource too, and
      // counts that in the same series.)
      const { events, name } = await artifactJob();
      await events.close();
      await until(() => logged(follower, 'job created', name).length === 1, 5000, 'the new leader to create the Job');
    } finally {
      clearInterval(sampler);
    }
  });
});
