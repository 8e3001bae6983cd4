import { expect } from 'chai';
import { BatchV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { V1Job, V1Lease } from '@kubernetes/client-node';
import { cutroomGroup, cutroomVersion } from '../../crds/contract/resources.ts';
import { startKubeSim } from './index.ts';
import type { KubeObject, KubeSim } from './index.ts';
import { apiStatus, jobResourceBody } from './samples.ts';

const group = cutroomGroup;
const version = cutroomVersion;

function jobBody(name: string, owner?: KubeObject): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      ...(owner
        ? {
            ownerReferences: [
              { apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true },
            ],
          }
        : {}),
    },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'program', image: 'cutroom/ffmpeg:dev', args: ['render'] }],
        },
      },
    },
  };
}

describe('kube-sim: Jobs, Pods and Leases, and the job controller helpers', () => {
  let sim: KubeSim;
  let batch: BatchV1Api;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  let coordination: CoordinationV1Api;
  let n = 0;
  let namespace: string;

  before(async () => {
    sim = await startKubeSim({ bookmarkIntervalMs: 0 });
    const kc = sim.kubeConfig();
    batch = kc.makeApiClient(BatchV1Api);
    core = kc.makeApiClient(CoreV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
    coordination = kc.makeApiClient(CoordinationV1Api);
  });
  after(() => sim.close());
  beforeEach(() => {
    namespace = `j${++n}`;
  });

  const createRenderJob = (name: string) =>
    custom.createNamespacedCustomObject({ group, version, namespace, plural: 'renderjobs', body: jobResourceBody('RenderJob', name) }) as Promise<KubeObject>;

  it('a created Job gets the job controller defaults: selector, job-name labels on the pod template, backoffLimit', async () => {
    const job = await batch.createNamespacedJob({ namespace, body: { ...jobBody('j'), spec: { ...jobBody('j').spec!, backoffLimit: undefined } } });
    const uid = job.metadata!.uid!;
    expect(job.spec!.selector!.matchLabels).to.deep.equal({ 'batch.kubernetes.io/controller-uid': uid });
    expect(job.spec!.template.metadata!.labels).to.include({ 'job-name': 'j', 'batch.kubernetes.io/job-name': 'j' });
    expect(job.spec!.backoffLimit).to.equal(6);
    expect(job.metadata!.creationTimestamp).to.be.instanceOf(Date);
  });

  it('a Job whose pod template restarts Always → 422 on restartPolicy', async () => {
    const body = jobBody('j');
    body.spec!.template.spec!.restartPolicy = 'Always';
    const status = await apiStatus(batch.createNamespacedJob({ namespace, body }), 422);
    expect(status.details?.causes?.[0]?.field).to.equal('spec.template.spec.restartPolicy');
  });

  it('completeJob: Job Complete, its pod Succeeded with the termination message, findable by job-name', async () => {
    await batch.createNamespacedJob({ namespace, body: jobBody('j') });
    sim.startJob(namespace, 'j');
    const running = await batch.readNamespacedJob({ namespace, name: 'j' });
    expect(running.status).to.include({ active: 1 });
    sim.completeJob(namespace, 'j', { succeeded: true, message: '{"outputs":2}', logs: 'rendered\n' });

    const job = await batch.readNamespacedJob({ namespace, name: 'j' });
    expect(job.status!.succeeded).to.equal(1);
    expect(job.status!.conditions!.map((c) => `${c.type}=${c.status}`)).to.deep.equal(['SuccessCriteriaMet=True', 'Complete=True']);
    expect(job.status!.completionTime).to.be.instanceOf(Date);

    for (const labelSelector of ['job-name=j', 'batch.kubernetes.io/job-name=j']) {
      const pods = await core.listNamespacedPod({ namespace, labelSelector });
      expect(pods.items).to.have.length(1);
      const pod = pods.items[0]!;
      expect(pod.status!.phase).to.equal('Succeeded');
      expect(pod.status!.containerStatuses![0]!.state!.terminated).to.include({ exitCode: 0, reason: 'Completed', message: '{"outputs":2}' });
      expect(pod.metadata!.ownerReferences![0]).to.include({ kind: 'Job', name: 'j', controller: true });
    }
    const pod = sim.jobPods(namespace, 'j')[0]!;
    expect(await core.readNamespacedPodLog({ namespace, name: pod.metadata.name! })).to.equal('rendered\n');
  });

  it('failJob: Job Failed (BackoffLimitExceeded), its pod Failed with the termination message', async () => {
    await batch.createNamespacedJob({ namespace, body: jobBody('j') });
    sim.failJob(namespace, 'j', { message: 'ffmpeg exited with code 1: moov atom not found', exitCode: 2 });
    const job = await batch.readNamespacedJob({ namespace, name: 'j' });
    const failed = job.status!.conditions!.find((c) => c.type === 'Failed')!;
    expect(failed).to.include({ status: 'True', reason: 'BackoffLimitExceeded' });
    expect(job.status!.failed).to.equal(1);
    const [pod] = (await core.listNamespacedPod({ namespace, labelSelector: 'job-name=j' })).items;
    expect(pod!.status!.phase).to.equal('Failed');
    expect(pod!.status!.containerStatuses![0]!.state!.terminated).to.include({
      exitCode: 2,
      reason: 'Error',
      message: 'ffmpeg exited with code 1: moov atom not found',
    });
  });

  it('completeJob with succeeded: false fails it; DeadlineExceeded is a failure reason too', async () => {
    await batch.createNamespacedJob({ namespace, body: jobBody('j') });
    sim.completeJob(namespace, 'j', { succeeded: false, reason: 'DeadlineExceeded' });
    const job = await batch.readNamespacedJob({ namespace, name: 'j' });
    expect(job.status!.conditions!.find((c) => c.type === 'Failed')!.reason).to.equal('DeadlineExceeded');
  });

  it('writes to a Job ignore status; the Job status subresource takes it', async () => {
    await batch.createNamespacedJob({ namespace, body: jobBody('j') });
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    const patched = await batch.patchNamespacedJob({ namespace, name: 'j', body: { metadata: { labels: { a: 'b' } }, status: { failed: 3 } } }, merge);
    expect(patched.status?.failed).to.equal(undefined);
    const viaStatus = await batch.patchNamespacedJobStatus({ namespace, name: 'j', body: { status: { failed: 3 } } }, merge);
    expect(viaStatus.status?.failed).to.equal(3);
  });

  it('deleting a custom resource deletes the Jobs it owns, and their pods', async () => {
    const owner = await createRenderJob('r');
    await batch.createNamespacedJob({ namespace, body: jobBody('r-job', owner) });
    await batch.createNamespacedJob({ namespace, body: jobBody('unrelated') });
    sim.completeJob(namespace, 'r-job');
    expect(sim.jobPods(namespace, 'r-job')).to.have.length(1);

    await custom.deleteNamespacedCustomObject({ group, version, namespace, plural: 'renderjobs', name: 'r' });
    expect(sim.get('jobs', namespace, 'r-job')).to.equal(undefined);
    expect(sim.jobPods(namespace, 'r-job')).to.have.length(0);
    expect(sim.get('jobs', namespace, 'unrelated')).to.not.equal(undefined);
  });

  it('deleting a Job through the API orphans its pods unless propagationPolicy is Background', async () => {
    await batch.createNamespacedJob({ namespace, body: jobBody('orphaning') });
    sim.completeJob(namespace, 'orphaning');
    await batch.deleteNamespacedJob({ namespace, name: 'orphaning' });
    const [orphan] = sim.jobPods(namespace, 'orphaning');
    expect(orphan?.metadata.ownerReferences).to.equal(undefined);

    await batch.createNamespacedJob({ namespace, body: jobBody('cascading') });
    sim.completeJob(namespace, 'cascading');
    await batch.deleteNamespacedJob({ namespace, name: 'cascading', propagationPolicy: 'Background' });
    expect(sim.jobPods(namespace, 'cascading')).to.have.length(0);
  });

  it('a Lease is taken over only with the current resourceVersion (leader election)', async () => {
    const lease: V1Lease = { metadata: { name: 'cutroom-operator' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } };
    const created = await coordination.createNamespacedLease({ namespace, body: lease });
    const renewed = await coordination.replaceNamespacedLease({
      namespace,
      name: 'cutroom-operator',
      body: { ...created, spec: { ...created.spec, renewTime: new Date() } },
    });
    expect(renewed.metadata!.resourceVersion).to.not.equal(created.metadata!.resourceVersion);
    const status = await apiStatus(
      coordination.replaceNamespacedLease({ namespace, name: 'cutroom-operator', body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } } }),
      409,
    );
    expect(status.reason).to.equal('Conflict');
    expect((await coordination.readNamespacedLease({ namespace, name: 'cutroom-operator' })).spec!.holderIdentity).to.equal('a');
  });

  it('core Events can be recorded', async () => {
    const event = await core.createNamespacedEvent({
      namespace,
      body: { metadata: { generateName: 'r.' }, involvedObject: { kind: 'RenderJob', name: 'r', namespace }, reason: 'JobCreated', message: 'made r-job', type: 'Normal' },
    });
    expect(event.metadata!.name).to.match(/^r\./);
  });
});
