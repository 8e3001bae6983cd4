// The lives of jobs on a real control plane: leader election on a real Lease, garbage
// collection through ownerReferences by the real garbage collector, cancellation, the Job
// controller's deadline, and an API server killed and restarted in the middle of the operator's watches.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { BatchV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { V1Job } from '@kubernetes/client-node';
import { cutroomGroup, cutroomVersion } from '../../crds/contract/resources.ts';
import type { JobResource } from '../../crds/contract/resources.ts';
import { Export } from '../../api/src/exports/entities.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { eventually } from '../../hack/fixtures/wait.ts';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { Client, signUpAndLogin, type SignedIn } from '../support/users.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { fileWhen } from '../support/wait.ts';
import { listenToUser } from '../support/events.ts';
import { makeVideo } from '../support/media.ts';
import { applyCrds, kubeCluster } from '../support/kube-cluster.ts';
import type { KubeCluster } from '../support/kube-cluster.ts';
import { kubeNode } from '../support/kube-node.ts';
import { installRelease, startReleaseOperator } from '../support/kube-release.ts';
import type { Release } from '../support/kube-release.ts';
import { metricValue } from '../operator/operator-support.ts';
import type { TestOperator } from '../operator/operator-support.ts';

describe('job lifecycles on a real control plane: leases, garbage collection, cancellation, deadlines, restarts', function () {
  this.timeout(300_000);
  let cluster: KubeCluster;
  let dir: string;
  let videos = 0;
  let short: string;
  const operators: TestOperator[] = [];
  const apps: TestApp[] = [];

  before(async () => {
    cluster = await kubeCluster();
    await applyCrds(cluster);
    await kubeNode(cluster);
    dir = await mkdtemp(join(tmpdir(), 'cutroom-lifecycle-'));
    short = await makeVideo(dir, 'short.mp4', { width: 320, height: 180, seconds: 1 });
  });
  afterEach(async () => {
    for (const operator of operators.splice(0)) await operator.stop();
    for (const app of apps.splice(0)) await app.close();
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A release with the api and `replicas` operators on it. */
  async function world(prefix: string, replicas = 1, apiEnv: Record<string, string> = {}) {
    const release = await installRelease(cluster, prefix);
    const app = await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: release.namespace, ...apiEnv }, { kubeConfig: release.apiKubeConfig });
    apps.push(app);
    const started: TestOperator[] = [];
    for (let i = 0; i < replicas; i++) started.push(await startReleaseOperator(release));
    operators.push(...started);
    const user = await signUpAndLogin(app, { tier: 'Creator', credits: 10 });
    return { release, app, user, operators: started };
  }
  const resources = async (release: Release, plural: string) =>
    ((await cluster.kubeConfig(release.namespace).makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ group: cutroomGroup, version: cutroomVersion, namespace: release.namespace, plural })) as { items: JobResource[] }).items;
  const jobsOf = async (release: Release): Promise<V1Job[]> => (await cluster.kubeConfig(release.namespace).makeApiClient(BatchV1Api).listNamespacedJob({ namespace: release.namespace })).items;
  const podsOf = async (release: Release) => (await cluster.kubeConfig(release.namespace).makeApiClient(CoreV1Api).listNamespacedPod({ namespace: release.namespace })).items;

  /**
   * A 720p video whose render takes seconds, different from every other of the run: the same
   * bytes uploaded twice become one file (uploads are deduplicated by content).
   */
  const longVideo = () => makeVideo(dir, `long-${++videos}.mp4`, { width: 1280, height: 720, seconds: 30 + videos, fps: 30 });

  async function projectWith(app: TestApp, user: SignedIn, video: string): Promise<string> {
    const projectId = (await json(await user.client.post('/api/v1/projects/', { name: 'Lifecycle' }))).uuid as string;
    const media = await uploadMedia(user.client, video, { contentType: 'video/mp4', scopeProjectId: projectId });
    await fileWhen(app.services.orm, media.mediaFileId, (file) => file.status === 'UPLOADED', 120_000);
    return projectId;
  }
  /** A heavy export of the long video, once its Pod's program is running. */
  async function renderingExport(app: TestApp, user: SignedIn, release: Release, projectId: string): Promise<{ exportId: string; resource: JobResource }> {
    const response = await user.client.post(`/api/v1/projects/${projectId}/exports/`, { name: 'Heavy', export_settings: { audio: { normalize: true, noise_reduction: true } } });
    expect(response.status, await response.clone().text()).to.equal(202);
    const exportId = (await json(response)).uuid as string;
    await eventually(async () => ((await podsOf(release)).some((pod) => pod.metadata?.labels?.['cutroom.dev/kind'] === 'RenderJob' && pod.status?.phase === 'Running') ? true : undefined), 'the render Pod to run', 60_000, 100);
    const [resource] = await resources(release, 'renderjobs');
    return { exportId, resource: resource! };
  }

  it('two operator replicas elect one leader on a real Lease; the standby takes over within the lease duration when the leader crashes, and the job is settled once', async () => {
    const { release, app, user, operators: [a, b] } = await world('lease', 2);
    await eventually(async () => (a!.isLeader || b!.isLeader ? true : undefined), 'a leader', 10_000, 20);
    const [leader, standby] = a!.isLeader ? [a!, b!] : [b!, a!];
    const leases = release.operatorKubeConfig.makeApiClient(CoordinationV1Api);
    const leaseName = release.operatorEnv.OPERATOR_LEASE_NAME!;
    const held = await leases.readNamespacedLease({ name: leaseName, namespace: release.namespace });
    expect(held.spec!.holderIdentity).to.equal(leader.identity);
    expect([a!.isLeader, b!.isLeader].filter(Boolean)).to.have.length(1);

    let both = false;
    const sampler = setInterval(() => { both ||= a!.isLeader && b!.isLeader; }, 5);
    const crashed = Date.now();
    try {
      await leader.stop({ release: false });
      await eventually(async () => (standby.isLeader ? true : undefined), 'the standby to lead', 10_000, 20);
    } finally {
      clearInterval(sampler);
    }
    const tookOver = Date.now() - crashed;
    expect(both).to.equal(false);
    expect(tookOver, 'within the lease duration and a retry period').to.be.lessThan(leader.config.OPERATOR_LEASE_DURATION_SECONDS * 1000 + 1000);
    const taken = await leases.readNamespacedLease({ name: leaseName, namespace: release.namespace });
    expect(taken.spec).to.include({ holderIdentity: standby.identity, leaseTransitions: (held.spec!.leaseTransitions ?? 0) + 1 });

    const events = await listenToUser(app.services.bus, user.user.id);
    try {
      const media = await uploadMedia(user.client, short, { contentType: 'video/mp4' });
      await events.next('media_ready', 120_000);
      await fileWhen(app.services.orm, media.mediaFileId, (file) => file.status === 'UPLOADED', 10_000);
      expect(events.events.filter((event) => event.type === 'media_ready')).to.have.length(1);
      // Counted once the operator has written the final phase, just after the completion published media_ready.
      await eventually(async () => ((await metricValue(standby.metrics, 'cutroom_jobs_succeeded_total', { kind: 'ArtifactJob' })) === 1 ? true : undefined), 'the standby to count the job', 10_000, 50);
      expect(await metricValue(leader.metrics, 'cutroom_jobs_succeeded_total', { kind: 'ArtifactJob' })).to.equal(0);
    } finally {
      await events.close();
    }
  });

  it('deleting a job resource while its program runs: the real garbage collector removes its Job and Pod, the program is stopped, the export settles once as cancelled', async () => {
    const { release, app, user } = await world('gc');
    const projectId = await projectWith(app, user, await longVideo());
    const { exportId, resource } = await renderingExport(app, user, release, projectId);
    const deleted = await cluster.kubectl(['delete', 'renderjob', resource.metadata.name!, '--namespace', release.namespace, '--wait=false']);
    expect(deleted.code, deleted.stderr).to.equal(0);
    await eventually(async () => ((await resources(release, 'renderjobs')).length === 0 ? true : undefined), 'the resource to go (its finalizer released)', 60_000, 100);
    await eventually(async () => ((await jobsOf(release)).filter((job) => job.metadata?.labels?.['cutroom.dev/kind'] === 'RenderJob').length === 0 ? true : undefined), 'its Job to be collected', 60_000, 100);
    await eventually(async () => ((await podsOf(release)).filter((pod) => pod.metadata?.labels?.['cutroom.dev/kind'] === 'RenderJob').length === 0 ? true : undefined), 'its Pod to be collected', 60_000, 100);
    const row = await eventually(async () => {
      const found = await app.services.orm.em.fork().findOne(Export, exportId);
      return found && found.status === 'failed' ? found : undefined;
    }, 'the export to fail', 30_000);
    const job = await app.services.orm.em.fork().findOneOrFail(Job, row.jobId!);
    expect(job).to.deep.include({ status: 'failed', error: 'The job was cancelled.' });
  });

  it('cancelling an export removes its job resource, Job and Pod, and settles it once', async () => {
    const { release, app, user } = await world('cancel');
    const projectId = await projectWith(app, user, await longVideo());
    const { exportId } = await renderingExport(app, user, release, projectId);
    const jobId = (await app.services.orm.em.fork().findOneOrFail(Export, exportId)).jobId!;
    const cancelled = await user.client.delete(`/api/v1/exports/${exportId}`);
    expect(cancelled.status).to.equal(204);
    await eventually(async () => ((await resources(release, 'renderjobs')).length === 0 ? true : undefined), 'the resource to go', 60_000, 100);
    await eventually(async () => ((await podsOf(release)).filter((pod) => pod.metadata?.labels?.['cutroom.dev/kind'] === 'RenderJob').length === 0 ? true : undefined), 'the Pod to go', 60_000, 100);
    expect(await jobsOf(release).then((jobs) => jobs.filter((job) => job.metadata?.labels?.['cutroom.dev/kind'] === 'RenderJob'))).to.deep.equal([]);
    const job = await app.services.orm.em.fork().findOneOrFail(Job, jobId);
    expect(job).to.deep.include({ status: 'failed', error: 'The job was cancelled.' });
    expect(await app.services.orm.em.fork().findOne(Export, exportId)).to.equal(null);
  });

  it('a Job past activeDeadlineSeconds fails with DeadlineExceeded, and the export with job.timed_out', async () => {
    const { release, app, user } = await world('deadline');
    const projectId = await projectWith(app, user, await longVideo());
    // A second api on the same database whose jobs get three seconds: the export is made there.
    const impatient = await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: release.namespace, JOB_TIMEOUT_SECONDS: '3' }, { kubeConfig: release.apiKubeConfig });
    apps.push(impatient);
    const there = new Client(impatient);
    for (const [name, value] of user.client.cookies) there.cookies.set(name, value);
    const { exportId } = await renderingExport(impatient, { ...user, client: there }, release, projectId);
    const failedJob = await eventually(async () => (await jobsOf(release)).find((job) => job.metadata?.labels?.['cutroom.dev/kind'] === 'RenderJob' && job.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True')), 'the Job to fail', 60_000, 100);
    expect(failedJob.spec!.activeDeadlineSeconds).to.equal(3);
    expect(failedJob.status!.conditions!.find((c) => c.type === 'Failed')!.reason).to.equal('DeadlineExceeded');
    const row = await eventually(async () => {
      const found = await app.services.orm.em.fork().findOneOrFail(Export, exportId);
      return found.status === 'failed' ? found : undefined;
    }, 'the export to fail', 30_000);
    expect(row.errorCode).to.equal('job.timed_out');
  });

  it('the API server killed and started again while a job runs loses nothing: the operator\'s watches resume and the job is settled once', async () => {
    const { release, app, user, operators: [operator] } = await world('restart');
    await eventually(async () => (operator!.isLeader ? true : undefined), 'a leader', 10_000, 20);
    const events = await listenToUser(app.services.bus, user.user.id);
    try {
      const media = await uploadMedia(user.client, await longVideo(), { contentType: 'video/mp4' });
      await eventually(async () => ((await podsOf(release)).some((pod) => pod.metadata?.labels?.['cutroom.dev/kind'] === 'ArtifactJob' && pod.status?.phase === 'Running') ? true : undefined), 'the artifact Pod to run', 60_000, 100);
      const restarting = Date.now();
      await cluster.restartApiServer();
      console.log(`      API server restarted in ${Date.now() - restarting} ms`);
      await events.next('media_ready', 180_000);
      console.log(`      media_ready ${Date.now() - restarting} ms after the restart began`);
      await fileWhen(app.services.orm, media.mediaFileId, (file) => file.status === 'UPLOADED', 10_000);
      expect(events.events.filter((event) => event.type === 'media_ready')).to.have.length(1);
    } finally {
      await events.close();
    }
  });
});
