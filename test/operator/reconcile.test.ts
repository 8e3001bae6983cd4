// The operator's reconcile on a real control plane: its batch Jobs made by the real API server,
// their Pods by the real Job controller, their ends reported by the test node. Two namespaces:
// in `live` (a Helm release of the chart) the node runs each Pod's real program; in `held` the
// node holds the Pods and the test plays the container's part, and the operator talks to the
// server through the fault proxy, which answers what the server gives only by chance.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ApiException, BatchV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeConfig, V1Status } from '@kubernetes/client-node';
import { artifactJob } from '../../operator/src/job-kinds.ts';
import { eventually } from '../support/wait.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { makeCorruptFile, makeVideo, sha256OfFile } from '../support/media.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { Job, type JobRow } from '../../api/src/jobs/entities.ts';
import { cutroomGroup, cutroomVersion, jobResourceLabels } from '../../crds/contract/resources.ts';
import type { JobResource } from '../../crds/contract/resources.ts';
import { buildJob } from '../../operator/src/builders/job.ts';
import { completionFinalizer } from '../../operator/src/reconcilers/job-reconciler.ts';
import { applyCrds, kubeCluster, testNamespace } from '../support/kube-cluster.ts';
import type { KubeCluster } from '../support/kube-cluster.ts';
import { kubeNode } from '../support/kube-node.ts';
import type { KubeNode } from '../support/kube-node.ts';
import { startFaultProxy } from '../support/kube-faults.ts';
import type { FaultProxy } from '../support/kube-faults.ts';
import { installRelease, startReleaseOperator } from '../support/kube-release.ts';
import { jobsOwnedBy, metricValue, operatorEnv, putArtifactResult, resourceIn, startTestOperatorWith, submitUploadJobOn } from './operator-support.ts';
import type { TestOperator } from './operator-support.ts';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** An api and an operator on one namespace, and the admin's client configuration there. */
interface World {
  namespace: string;
  admin: KubeConfig;
  app: TestApp;
  operator: TestOperator;
}

describe('operator: custom resource → batch Job → status and completion (real API server, Job controller and node)', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let node: KubeNode;
  let proxy: FaultProxy;
  let live: World;
  let held: World;
  let dir: string;

  before(async () => {
    cluster = await kubeCluster();
    await applyCrds(cluster);
    node = await kubeNode(cluster);
    dir = await mkdtemp(join(tmpdir(), 'cutroom-operator-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  /** One world at a time: every api's and operator's outbox hands over any queued row of the database to its own namespace. */
  const leave = async (world: World | undefined) => {
    await world?.operator.stop();
    await world?.app.close();
  };
  const leading = (world: World) => eventually(async () => (world.operator.isLeader ? true : undefined), `the operator of ${world.namespace} to lead`, 10_000, 20);

  const submitArtifact = (world: World, request: { userId: string; mediaFileId?: string; timeoutSeconds?: number }) =>
    world.app.services.jobs.submit(world.app.services.orm.em.fork(), {
      program: 'artifact',
      userId: request.userId,
      ...(request.mediaFileId ? { mediaFileId: request.mediaFileId } : {}),
      ...(request.timeoutSeconds ? { timeoutSeconds: request.timeoutSeconds } : {}),
      input: { sourceKey: 'media/none/source', contentType: 'video/mp4' },
    });

  const resourceFor = (world: World, jobId: string) =>
    eventually(() => resourceIn(world.admin, 'ArtifactJob', world.namespace, `artifact-${jobId}`), `the resource of ${jobId}`, 15_000, 20);
  const whenStatus = (world: World, name: string, check: (resource: JobResource) => boolean, timeoutMs = 10_000, kind: 'ArtifactJob' | 'RenderJob' = 'ArtifactJob') =>
    eventually(async () => {
      const resource = await resourceIn(world.admin, kind, world.namespace, name);
      return resource && check(resource) ? resource : undefined;
    }, `${name}: the status awaited`, timeoutMs, 20);
  /** The only Job a resource owns, once the operator made it. */
  const jobOf = async (world: World, resource: JobResource) => {
    const owned = await eventually(async () => {
      const found = await jobsOwnedBy(world.admin, world.namespace, resource);
      return found.length > 0 ? found : undefined;
    }, `the Job of ${resource.metadata.name}`, 10_000, 20);
    expect(owned, `one Job for ${resource.metadata.name}`).to.have.length(1);
    return owned[0]!;
  };
  const eventsOf = async (world: World, name: string) =>
    (await world.admin.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: world.namespace, fieldSelector: `involvedObject.name=${name}` })).items
      .map((event) => `${event.type} ${event.reason}`)
      .sort();
  /** The resource's Events once `count` are recorded: the operator records the final one just after writing the final phase. */
  const eventsWhen = (world: World, name: string, count: number) =>
    eventually(async () => {
      const events = await eventsOf(world, name);
      return events.length >= count ? events : undefined;
    }, `${count} Events of ${name}`, 5000, 20);
  const row = (world: World, jobId: string) => world.app.services.orm.em.fork().findOneOrFail(Job, jobId);
  /** The jobs row once `check` holds (the operator writes it asynchronously); fails naming what it waited for. */
  const rowWhen = (world: World, jobId: string, check: (job: JobRow) => boolean, what: string) =>
    eventually(async () => {
      const current = await row(world, jobId);
      return check(current) ? current : undefined;
    }, `job ${jobId}: ${what}`, 10_000, 20);

  /** The held Pod of a Job, once the Job controller made it and the scheduler bound it. */
  const podOf = (jobName: string) => eventually(async () => (await node.held(held.namespace, jobName))[0], `the Pod of ${jobName}`, 10_000, 20);
  const startJob = async (jobName: string) => node.play(await podOf(jobName), 'running');
  const completeJob = async (jobName: string) => node.play(await podOf(jobName), { exitCode: 0 });
  /** The program's status report, as its Kubernetes reporter sends it (a merge patch of the status). */
  const reportProgress = (name: string, progress: number, step: string) =>
    held.admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObjectStatus(
      { group: cutroomGroup, version: cutroomVersion, namespace: held.namespace, plural: 'artifactjobs', name, body: { status: { progress, step } } },
      mergePatch,
    );


  describe('Pods held and played by the test, the operator behind the fault proxy', () => {
    before(async () => {
      const namespace = await testNamespace(cluster, 'reconcile-held');
      node.hold(namespace);
      // The job Pods' ServiceAccount, as the chart makes it: the server admits no Pod without it.
      await cluster.kubeConfig(namespace).makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'cutroom-artifact-job' } } });
      proxy = await startFaultProxy(cluster);
      held = {
        namespace,
        admin: cluster.kubeConfig(namespace),
        app: await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: namespace }, { kubeConfig: cluster.kubeConfig(namespace) }),
        operator: await startTestOperatorWith(proxy.kubeConfig(namespace), operatorEnv(namespace)),
      };
      await leading(held);
    });
    after(async () => {
      await leave(held);
      await proxy?.close();
    });

    it('an ArtifactJob gets one batch Job named after its uid, with the manifest the builder makes; status Pending with jobName', async () => {
      const job = await submitArtifact(held, { userId: randomUUID() });
      const resource = await resourceFor(held, job.id);
      const batchJob = await jobOf(held, resource);
      const expected = buildJob(resource, artifactJob, held.operator.config);
      expect(batchJob.metadata!.name).to.equal(`cutroom-${resource.metadata.uid}-artifact`);
      expect(batchJob.metadata!.labels).to.include(expected.metadata!.labels);
      expect(batchJob.metadata!.ownerReferences).to.deep.equal([
        { apiVersion: 'cutroom.dev/v1alpha1', kind: 'ArtifactJob', name: resource.metadata.name, uid: resource.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      expect(batchJob.spec).to.deep.include({ backoffLimit: 2, activeDeadlineSeconds: 3600, ttlSecondsAfterFinished: 3600 });
      // The server adds its defaults (and the Job controller's labels) to what the builder made; everything the builder set is there as it set it.
      const template = batchJob.spec!.template.spec!;
      const container = template.containers[0]!;
      const built = expected.spec!.template.spec!;
      const builtContainer = built.containers[0]!;
      expect(container).to.deep.include({ name: builtContainer.name, image: builtContainer.image, command: builtContainer.command, env: builtContainer.env, envFrom: builtContainer.envFrom, resources: builtContainer.resources });
      expect(template).to.deep.include({ serviceAccountName: built.serviceAccountName, restartPolicy: built.restartPolicy, automountServiceAccountToken: built.automountServiceAccountToken });
      const env = container.env!;
      expect(JSON.parse(env.find((entry) => entry.name === 'CUTROOM_JOB_SPEC')!.value!)).to.deep.equal(resource.spec);

      const pending = await whenStatus(held, resource.metadata.name!, (r) => r.status?.jobName !== undefined);
      expect(pending.status).to.deep.include({ jobName: batchJob.metadata!.name, observedGeneration: 1 });
      // Pending until the real Job controller counts the Job's Pod active, which it does once the Pod exists, before
      // any container runs (this Pod is held): the operator may already have seen that when the test reads the status.
      expect(pending.status!.phase).to.be.oneOf(['Pending', 'Running']);
      expect(pending.status!.conditions![0]).to.include({ type: 'JobCreated', status: 'True' });
      expect(await eventsOf(held, resource.metadata.name!)).to.deep.equal(['Normal JobCreated']);
    });

    it('a running Job → Running; the row follows (running, progress, step); progress and step the program patched are kept when the Job controller stops it at its deadline', async () => {
      const job = await submitArtifact(held, { userId: randomUUID(), timeoutSeconds: 4 });
      const resource = await resourceFor(held, job.id);
      const jobName = (await jobOf(held, resource)).metadata!.name!;
      await startJob(jobName);
      await reportProgress(resource.metadata.name!, 40, 'waveform');
      const running = await whenStatus(held, resource.metadata.name!, (r) => r.status?.phase === 'Running');
      expect(running.status).to.deep.include({ progress: 40, step: 'waveform', jobName });
      const marked = await rowWhen(held, job.id, (r) => r.progress === 40, 'progress 40');
      expect(marked).to.deep.include({ status: 'running', progress: 40, step: 'waveform' });
      expect(marked.startedAt).to.be.instanceOf(Date);
      // Later reports reach the row too, as the local runner's progress lines do.
      await reportProgress(resource.metadata.name!, 55, 'thumbnail');
      expect(await rowWhen(held, job.id, (r) => r.progress === 55, 'progress 55')).to.deep.include({ status: 'running', step: 'thumbnail' });

      // The real Job controller fails the Job at activeDeadlineSeconds: the user hears about the deadline.
      const failed = await whenStatus(held, resource.metadata.name!, (r) => r.status?.phase === 'Failed', 30_000);
      const batchJob = await held.admin.makeApiClient(BatchV1Api).readNamespacedJob({ name: jobName, namespace: held.namespace });
      expect(batchJob.status!.conditions!.find((c) => c.type === 'Failed')).to.include({ status: 'True', reason: 'DeadlineExceeded' });
      expect(failed.status).to.deep.include({ progress: 55, step: 'thumbnail', error: 'The job did not finish within its time limit of 4 s.' });
      expect(await rowWhen(held, job.id, (r) => r.status === 'failed', 'failed')).to.deep.include({ error: 'The job did not finish within its time limit of 4 s.' });
    });

    it('a Job that succeeded without writing result.json → Failed with a clear error', async () => {
      const job = await submitArtifact(held, { userId: randomUUID() });
      const resource = await resourceFor(held, job.id);
      await completeJob((await jobOf(held, resource)).metadata!.name!);
      const failed = await whenStatus(held, resource.metadata.name!, (r) => r.status?.phase === 'Failed');
      expect(failed.status!.error).to.equal('The job finished without writing its result.');
      expect(failed.status!.conditions!.find((c) => c.type === 'Failed')!.reason).to.equal('NoResult');
      expect(await rowWhen(held, job.id, (r) => r.status === 'failed', 'failed')).to.deep.include({ error: 'The job finished without writing its result.' });
    });

    it('a Job deleted before its end was recorded → Failed (JobLost), never a second Job', async () => {
      const job = await submitArtifact(held, { userId: randomUUID() });
      const resource = await resourceFor(held, job.id);
      const jobName = (await jobOf(held, resource)).metadata!.name!;
      await whenStatus(held, resource.metadata.name!, (r) => r.status?.jobName === jobName);
      const batch = held.admin.makeApiClient(BatchV1Api);
      await batch.deleteNamespacedJob({ name: jobName, namespace: held.namespace, propagationPolicy: 'Background' });
      const failed = await whenStatus(held, resource.metadata.name!, (r) => r.status?.phase === 'Failed');
      expect(failed.status!.error).to.equal(`The Job ${jobName} was deleted before its outcome was recorded.`);
      expect(await jobsOwnedBy(held.admin, held.namespace, resource)).to.deep.equal([]);
      expect((await rowWhen(held, job.id, (r) => r.status === 'failed', 'failed')).status).to.equal('failed');
    });

    it('a resource whose program belongs to another kind → Failed (InvalidJob), row failed, no Job made', async () => {
      const jobId = randomUUID();
      const userId = randomUUID();
      const em = held.app.services.orm.em.fork();
      em.create(Job, { id: jobId, kind: 'RenderJob', program: 'artifact', userId, input: {}, outputPrefix: `jobs/artifact/${jobId}`, status: 'queued' });
      await em.flush();
      const name = `misfiled-${jobId}`;
      const created = (await held.admin.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
        group: cutroomGroup, version: cutroomVersion, namespace: held.namespace, plural: 'renderjobs',
        body: { apiVersion: 'cutroom.dev/v1alpha1', kind: 'RenderJob', metadata: { name }, spec: { jobId, program: 'artifact', userId, input: {}, outputPrefix: `jobs/artifact/${jobId}` } },
      })) as JobResource;
      const failed = await whenStatus(held, name, (r) => r.status?.phase === 'Failed', 10_000, 'RenderJob');
      expect(failed.status!.error).to.equal('The program "artifact" belongs to ArtifactJob resources, not RenderJob.');
      expect(failed.status!.conditions!.map((c) => `${c.type}=${c.status}/${c.reason}`)).to.deep.equal(['Failed=True/InvalidJob']);
      expect(await jobsOwnedBy(held.admin, held.namespace, created)).to.deep.equal([]);
      expect(await rowWhen(held, jobId, (r) => r.status === 'failed', 'failed')).to.deep.include({ error: failed.status!.error });
    });

    it('the api kubernetes dispatcher creates the resource with its labels; dispatching it again is idempotent', async () => {
      const userId = randomUUID();
      const mediaFileId = randomUUID();
      const job = await submitArtifact(held, { userId, mediaFileId });
      const resource = await resourceFor(held, job.id);
      expect(resource.spec).to.deep.include({ jobId: job.id, program: 'artifact', userId, mediaFileId, outputPrefix: job.outputPrefix });
      expect(resource.metadata.labels).to.deep.equal(jobResourceLabels(resource.spec));
      expect(resource.metadata.labels).to.include({ 'cutroom.dev/job-id': job.id, 'cutroom.dev/user': userId, 'cutroom.dev/media': mediaFileId, 'cutroom.dev/program': 'artifact' });

      await held.app.services.dispatcher.dispatch({ kind: 'ArtifactJob', spec: resource.spec });
      const same = (await held.admin.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
        group: cutroomGroup, version: cutroomVersion, namespace: held.namespace, plural: 'artifactjobs', labelSelector: `cutroom.dev/job-id=${job.id}`,
      })) as { items: JobResource[] };
      expect(same.items.map((r) => r.metadata.uid)).to.deep.equal([resource.metadata.uid]);
      await jobOf(held, resource);
    });

    it('an invalid custom resource → 422 from the API server schema validation when the dispatcher creates it; the job ends failed', async () => {
      const spec = { jobId: 'not-a-uuid', program: 'artifact', userId: randomUUID(), input: {}, outputPrefix: '' };
      const refusal = await held.app.services.dispatcher.dispatch({ kind: 'ArtifactJob', spec }).then(
        () => expect.fail('the API server accepted an invalid resource'),
        (error: unknown) => error,
      );
      expect(refusal).to.be.instanceOf(ApiException);
      expect((refusal as ApiException<unknown>).code).to.equal(422);
      const status = JSON.parse(String((refusal as ApiException<unknown>).body)) as V1Status;
      const fields = status.details!.causes!.map((cause) => cause.field);
      expect(fields).to.include('spec.jobId');
      expect(fields).to.include('spec.outputPrefix');
      const listed = (await held.admin.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ group: cutroomGroup, version: cutroomVersion, namespace: held.namespace, plural: 'artifactjobs' })) as { items: JobResource[] };
      expect(listed.items.filter((r) => (r.spec as { jobId: string }).jobId === 'not-a-uuid')).to.deep.equal([]);

      // Through the job service, a refused resource settles the job as failed (job.rejected) instead of leaving it queued.
      const job = await held.app.services.jobs.submit(held.app.services.orm.em.fork(), { program: 'artifact', userId: randomUUID(), input: { sourceKey: 'missing', contentType: 'video/mp4' }, timeoutSeconds: 30 * 24 * 3600 });
      const settled = await rowWhen(held, job.id, (r) => r.status === 'failed', 'the refused job settled');
      expect(settled.error).to.match(/^The job backend refused the job: /);
    });

    it('cancelling a job (the api deletes its resource) → settled as cancelled once, MediaFile FAILED, then the resource and its Job go', async () => {
      const { upload, events, job, resource, jobName } = await submitUploadJobOn(held.admin, held.namespace, held.app.services, held.app.services.jobs, await makeCorruptFile(dir, 'cancelled.mp4', 4096, 11));
      try {
        expect((await resourceIn(held.admin, 'ArtifactJob', held.namespace, resource.metadata.name!))!.metadata.finalizers).to.deep.equal([completionFinalizer]);
        await startJob(jobName);
        await held.app.services.jobs.cancel(held.app.services.orm.em.fork(), job.id);

        const failed = await events.next('media_failed');
        expect(failed.data).to.deep.include({ media_file_uuid: upload.file.id, error: 'The job was cancelled.' });
        await eventually(async () => ((await resourceIn(held.admin, 'ArtifactJob', held.namespace, resource.metadata.name!)) ? undefined : true), 'the resource to go', 10_000, 20);
        // The real garbage collector deletes the Job its owner left.
        const batch = held.admin.makeApiClient(BatchV1Api);
        await eventually(async () => ((await batch.listNamespacedJob({ namespace: held.namespace, fieldSelector: `metadata.name=${jobName}` })).items.length === 0 ? true : undefined), 'the Job to go', 30_000, 50);
        expect(await row(held, job.id)).to.deep.include({ status: 'failed', error: 'The job was cancelled.' });
        expect((await held.app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id)).status).to.equal('FAILED');
        expect(events.events.filter((event) => event.type === 'media_failed')).to.have.length(1);
      } finally {
        await events.close();
      }
    });

    it('a Job the API server refuses (422) → Failed with the server’s message at once, not retried forever', async () => {
      const message = 'Job.batch "x" is invalid: spec.template.spec.containers[0].image: Required value';
      const fault = proxy.failNext({ method: 'POST', path: `/apis/batch/v1/namespaces/${held.namespace}/jobs`, code: 422, reason: 'Invalid', message }, 1);
      const job = await submitArtifact(held, { userId: randomUUID() });
      const resource = await resourceFor(held, job.id);
      const failed = await whenStatus(held, resource.metadata.name!, (r) => r.status?.phase === 'Failed');
      expect(fault.hits()).to.equal(1);
      expect(failed.status!.error).to.equal(`The cluster refused the Job: ${message}`);
      expect(failed.status!.conditions!.find((c) => c.type === 'Failed')!.reason).to.equal('JobRejected');
      expect(await jobsOwnedBy(held.admin, held.namespace, resource)).to.deep.equal([]);
      expect(await rowWhen(held, job.id, (r) => r.status === 'failed', 'failed')).to.deep.include({ error: `The cluster refused the Job: ${message}` });
    });

    it('an API error while concluding a job is retried with backoff (reconcile error counted), and the job settles once', async () => {
      const { operator } = held;
      const job = await submitArtifact(held, { userId: randomUUID() });
      const resource = await resourceFor(held, job.id);
      const jobName = (await jobOf(held, resource)).metadata!.name!;
      await startJob(jobName);
      await whenStatus(held, resource.metadata.name!, (r) => r.status?.phase === 'Running');
      const errorsBefore = await metricValue(operator.metrics, 'cutroom_operator_reconcile_errors_total', { kind: 'ArtifactJob' });
      // The fresh read before completing fails once: the reconcile is retried and the job still settles once.
      const fault = proxy.failNext({ method: 'GET', path: `/apis/cutroom.dev/v1alpha1/namespaces/${held.namespace}/artifactjobs/${resource.metadata.name}`, code: 503 }, 1);
      await putArtifactResult(held.app.services.storage, job.outputPrefix);
      await completeJob(jobName);
      const done = await whenStatus(held, resource.metadata.name!, (r) => r.status?.phase === 'Succeeded');
      expect(fault.hits()).to.equal(1);
      expect(done.status!.progress).to.equal(100);
      expect(await metricValue(operator.metrics, 'cutroom_operator_reconcile_errors_total', { kind: 'ArtifactJob' })).to.be.greaterThan(errorsBefore);
      expect((await rowWhen(held, job.id, (r) => r.status === 'succeeded', 'succeeded')).status).to.equal('succeeded');
    });
  });
  describe('in a release of the chart, the node running each Pod\'s real program', () => {
    before(async () => {
      const release = await installRelease(cluster, 'reconcile');
      live = {
        namespace: release.namespace,
        admin: cluster.kubeConfig(release.namespace),
        app: await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: release.namespace }, { kubeConfig: release.apiKubeConfig }),
        operator: await startReleaseOperator(release),
      };
      await leading(live);
    });
    after(() => leave(live));

    it('Job success (the real artifact program ran in its Pod) → Succeeded with progress 100, row settled, MediaFile UPLOADED, media_ready', async () => {
      const clip = await makeVideo(dir, 'ok.mp4', { seconds: 1 });
      const { upload, events, job, resource, jobName } = await submitUploadJobOn(live.admin, live.namespace, live.app.services, live.app.services.jobs, clip);
      try {
        const ready = await events.next('media_ready', 60_000);
        expect(ready.data).to.deep.equal({
          media_file_uuid: upload.file.id,
          media_item_uuid: upload.item.id,
          display_name: 'My clip',
          proxy_status: 'not_applicable',
        });
        const done = await whenStatus(live, resource.metadata.name!, (r) => r.status?.phase === 'Succeeded');
        // The program's last step stays: the operator writes progress 100 and nothing else of the program's.
        expect(done.status).to.deep.include({ phase: 'Succeeded', progress: 100, jobName });
        expect(done.status!.step, 'the step the program reported last').to.be.a('string').and.not.equal('');
        expect(done.status!.startedAt).to.be.a('string');
        expect(done.status!.finishedAt).to.be.a('string');
        expect(done.status!.conditions!.map((c) => `${c.type}=${c.status}`)).to.deep.equal(['JobCreated=True', 'Running=False', 'Complete=True']);

        const settled = await row(live, job.id);
        expect(settled).to.deep.include({ status: 'succeeded', progress: 100 });
        expect(settled.completedAt).to.be.instanceOf(Date);
        expect(settled.startedAt).to.be.instanceOf(Date);
        const file = await live.app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id);
        expect(file.status).to.equal('UPLOADED');
        expect(file.sha256Hash).to.equal(await sha256OfFile(clip));
        expect(file.thumbnailKey).to.equal(`${job.outputPrefix}/thumbnail.jpg`);
        expect(await eventsWhen(live, resource.metadata.name!, 2)).to.deep.equal(['Normal JobCreated', 'Normal JobSucceeded']);
        // Settled: the finalizer is no longer needed, so deleting the resource later takes no operator.
        await whenStatus(live, resource.metadata.name!, (r) => !r.metadata.finalizers?.includes(completionFinalizer));
      } finally {
        await events.close();
      }
    });

    it('Job failure (the real program refused the file) → Failed with the Pod\'s termination message as error, row failed, MediaFile FAILED, media_failed', async () => {
      const { upload, events, job, resource, jobName } = await submitUploadJobOn(live.admin, live.namespace, live.app.services, live.app.services.jobs, await makeCorruptFile(dir, 'corrupt.mp4'));
      try {
        const failed = await events.next('media_failed', 60_000);
        // the event shows the catalog's text of the code the program wrote to error.json; the row keeps the English message
        expect(failed.data).to.deep.include({ media_file_uuid: upload.file.id, error: 'The file is corrupt or not a media file that can be read.' });
        const pods = (await live.admin.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: live.namespace, labelSelector: `job-name=${jobName}` })).items;
        expect(pods, 'backoffLimit 0 in the release: one Pod').to.have.length(1);
        const terminated = pods[0]!.status!.containerStatuses![0]!.state!.terminated!;
        expect(terminated.exitCode).to.equal(1);
        expect(terminated.message).to.be.a('string').and.not.equal('');
        const done = await whenStatus(live, resource.metadata.name!, (r) => r.status?.phase === 'Failed');
        expect(done.status!.error).to.equal(terminated.message);
        expect(done.status!.conditions!.find((c) => c.type === 'Failed')).to.include({ status: 'True', reason: 'BackoffLimitExceeded' });
        expect(await row(live, job.id)).to.deep.include({ status: 'failed', error: terminated.message });
        const file = await live.app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id);
        expect([file.status, file.error, file.errorCode]).to.deep.equal(['FAILED', terminated.message, 'media.corrupt']);
        expect(await eventsWhen(live, resource.metadata.name!, 2)).to.deep.equal(['Normal JobCreated', 'Warning JobFailed']);
      } finally {
        await events.close();
      }
    });

    it('metrics: jobs created, succeeded and failed by kind, duration, work queue, leader; /healthz 200', async () => {
      const { operator } = live;
      const metrics = await (await fetch(`${operator.url}/metrics`)).text();
      expect(metrics).to.match(/^cutroom_jobs_created_total\{kind="ArtifactJob"\} [1-9]/m);
      expect(metrics).to.match(/^cutroom_jobs_succeeded_total\{kind="ArtifactJob"\} 1$/m);
      expect(metrics).to.match(/^cutroom_jobs_failed_total\{kind="ArtifactJob"\} [1-9]/m);
      expect(metrics).to.match(/^cutroom_job_duration_seconds_count\{kind="ArtifactJob",outcome="succeeded"\} 1$/m);
      expect(metrics).to.match(/^cutroom_operator_work_queue_depth\{kind="ArtifactJob"\} \d+$/m);
      expect(metrics).to.match(/^cutroom_operator_leader 1$/m);
      expect(metrics).to.match(/^# TYPE cutroom_operator_reconcile_errors_total counter$/m);
      expect(await metricValue(operator.metrics, 'cutroom_operator_reconciles_total', { kind: 'ArtifactJob' })).to.be.greaterThan(0);
      const health = await fetch(`${operator.url}/healthz`);
      expect(health.status).to.equal(200);
      expect(await health.json()).to.deep.equal({ status: 'ok', leader: true });
    });
  });
});
