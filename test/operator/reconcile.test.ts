import { artifactJob } from '../../operator/src/job-kinds.ts';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { eventually } from '../support/wait.ts';
import type { CoreV1Event } from '@kubernetes/client-node';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { makeCorruptFile, makeVideo, sha256OfFile } from '../support/media.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { Job, type JobRow } from '../../api/src/jobs/entities.ts';
import { jobResourceLabels } from '../../crds/contract/resources.ts';
import type { JobResource } from '../../crds/contract/resources.ts';
import { buildJob } from '../../operator/src/builders/job.ts';
import { completionFinalizer } from '../../operator/src/reconcilers/job-reconciler.ts';
import { startKubeSim } from '../kube-sim/index.ts';
import type { KubeSim } from '../kube-sim/index.ts';
import { apiStatus } from '../kube-sim/samples.ts';
import { jobOf, metricValue, putArtifactResult, resourceOf, runJobPod, startTestOperator, submitUploadJob } from './operator-support.ts';
import type { TestOperator } from './operator-support.ts';

describe('operator: custom resource → batch Job → status and completion', function () {
  this.timeout(30_000);
  const namespace = 'cutroom-reconcile';
  let sim: KubeSim;
  let app: TestApp;
  let operator: TestOperator;
  let dir: string;

  before(async () => {
    sim = await startKubeSim({ bookmarkIntervalMs: 0 });
    dir = await mkdtemp(join(tmpdir(), 'cutroom-operator-'));
    // The api with the kubernetes backend: it records the job and creates the custom resource.
    app = await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: namespace }, { kubeConfig: sim.kubeConfig(namespace) });
    operator = await startTestOperator(sim, namespace);
    await sim.waitFor(() => operator.isLeader, 3000);
  });
  after(async () => {
    await operator?.stop();
    await app?.close();
    await sim?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const submitArtifact = (request: { userId: string; mediaFileId?: string; sourceKey?: string }) =>
    app.services.jobs.submit(app.services.orm.em.fork(), {
      program: 'artifact',
      userId: request.userId,
      ...(request.mediaFileId ? { mediaFileId: request.mediaFileId } : {}),
      input: { sourceKey: request.sourceKey ?? 'media/none/source', contentType: 'video/mp4' },
    });

  const resourceFor = (jobId: string) => sim.waitFor(() => resourceOf(sim, 'ArtifactJob', namespace, `artifact-${jobId}`), 3000);
  const whenStatus = (name: string, check: (resource: JobResource) => boolean, timeoutMs = 10_000) =>
    sim.waitFor(() => {
      const resource = resourceOf(sim, 'ArtifactJob', namespace, name);
      return resource && check(resource) && resource;
    }, timeoutMs);
  const eventsOf = (name: string) =>
    (sim.list('events', namespace) as unknown as CoreV1Event[]).filter((event) => event.involvedObject.name === name).map((event) => `${event.type} ${event.reason}`).sort();
  /** The resource's Events once `count` are recorded: the operator records the final one just after writing the final phase. */
  const eventsWhen = (name: string, count: number) => sim.waitFor(() => eventsOf(name).length >= count && eventsOf(name), 5000);
  const ownedBy = (resource: JobResource) =>
    sim.list('jobs', namespace).filter((job) => job.metadata.ownerReferences?.some((ref) => ref.uid === resource.metadata.uid));
  const row = (jobId: string) => app.services.orm.em.fork().findOneOrFail(Job, jobId);
  /** The jobs row once `check` holds (the operator writes it asynchronously); fails naming what it waited for. */
  const rowWhen = (jobId: string, check: (job: JobRow) => boolean, what: string) =>
    eventually(async () => {
      const current = await row(jobId);
      return check(current) ? current : undefined;
    }, `job ${jobId}: ${what}`, 5000, 20);

  it('an ArtifactJob gets one batch Job named after its uid, with the manifest the builder makes; status Pending with jobName', async () => {
    const job = await submitArtifact({ userId: randomUUID() });
    const resource = await resourceFor(job.id);
    const batchJob = await jobOf(sim, namespace, resource);
    const expected = buildJob(resource, artifactJob, operator.config);
    expect(batchJob.metadata!.name).to.equal(`cutroom-${resource.metadata.uid}-artifact`);
    expect(batchJob.metadata!.labels).to.deep.equal(expected.metadata!.labels);
    expect(batchJob.metadata!.ownerReferences).to.deep.equal([
      { apiVersion: 'cutroom.dev/v1alpha1', kind: 'ArtifactJob', name: resource.metadata.name, uid: resource.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(batchJob.spec).to.deep.include({ backoffLimit: 2, activeDeadlineSeconds: 3600, ttlSecondsAfterFinished: 3600 });
    expect(batchJob.spec!.template.spec).to.deep.equal(expected.spec!.template.spec);
    const env = batchJob.spec!.template.spec!.containers[0]!.env!;
    expect(JSON.parse(env.find((entry) => entry.name === 'CUTROOM_JOB_SPEC')!.value!)).to.deep.equal(resource.spec);

    const pending = await whenStatus(resource.metadata.name!, (r) => r.status?.jobName !== undefined);
    expect(pending.status).to.deep.include({ phase: 'Pending', jobName: batchJob.metadata!.name, observedGeneration: 1 });
    expect(pending.status!.conditions!.map((c) => `${c.type}=${c.status}`)).to.deep.equal(['JobCreated=True']);
    expect(eventsOf(resource.metadata.name!)).to.deep.equal(['Normal JobCreated']);
  });

  it('Job success (the real artifact program ran) → Succeeded with progress 100, row settled, MediaFile UPLOADED, media_ready', async () => {
    const clip = await makeVideo(dir, 'ok.mp4', { seconds: 1 });
    const { upload, events, job, resource, jobName } = await submitUploadJob(sim, namespace, app.services, app.services.jobs, clip);
    try {
      const run = await runJobPod(sim, namespace, jobName);
      expect(run.exitCode).to.equal(0);
      expect(run.progressPatches).to.not.be.empty;

      const ready = await events.next('media_ready', 10_000);
      expect(ready.data).to.deep.equal({
        media_file_uuid: upload.file.id,
        media_item_uuid: upload.item.id,
        display_name: 'My clip',
        proxy_status: 'not_applicable',
      });
      const done = await whenStatus(resource.metadata.name!, (r) => r.status?.phase === 'Succeeded');
      // The program's last step stays: the operator writes progress 100 and nothing else of the program's.
      expect(done.status).to.deep.include({ phase: 'Succeeded', progress: 100, step: run.progressPatches.at(-1)!.step, jobName });
      expect(done.status!.startedAt).to.be.a('string');
      expect(done.status!.finishedAt).to.be.a('string');
      expect(done.status!.conditions!.map((c) => `${c.type}=${c.status}`)).to.deep.equal(['JobCreated=True', 'Running=False', 'Complete=True']);

      const settled = await row(job.id);
      expect(settled).to.deep.include({ status: 'succeeded', progress: 100 });
      expect(settled.completedAt).to.be.instanceOf(Date);
      expect(settled.startedAt).to.be.instanceOf(Date);
      const file = await app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id);
      expect(file.status).to.equal('UPLOADED');
      expect(file.sha256Hash).to.equal(await sha256OfFile(clip));
      expect(file.thumbnailKey).to.equal(`${job.outputPrefix}/thumbnail.jpg`);
      expect(await eventsWhen(resource.metadata.name!, 2)).to.deep.equal(['Normal JobCreated', 'Normal JobSucceeded']);
      // Settled: the finalizer is no longer needed, so deleting the resource later takes no operator.
      await whenStatus(resource.metadata.name!, (r) => !r.metadata.finalizers?.includes(completionFinalizer));
    } finally {
      await events.close();
    }
  });

  it('Job failure → Failed with the pod termination message as error, row failed, MediaFile FAILED, media_failed', async () => {
    const { upload, events, job, resource, jobName } = await submitUploadJob(sim, namespace, app.services, app.services.jobs, await makeCorruptFile(dir, 'corrupt.mp4'));
    try {
      const run = await runJobPod(sim, namespace, jobName);
      expect(run.exitCode).to.equal(1);
      expect(run.terminationMessage).to.not.equal('');

      const failed = await events.next('media_failed', 10_000);
      // the event shows the catalog's text of the code the program wrote to error.json; the row keeps the English message
      expect(failed.data).to.deep.include({ media_file_uuid: upload.file.id, error: 'The file is corrupt or not a media file that can be read.' });
      const done = await whenStatus(resource.metadata.name!, (r) => r.status?.phase === 'Failed');
      expect(done.status!.error).to.equal(run.terminationMessage);
      expect(done.status!.conditions!.find((c) => c.type === 'Failed')).to.include({ status: 'True', reason: 'BackoffLimitExceeded' });
      expect(await row(job.id)).to.deep.include({ status: 'failed', error: run.terminationMessage });
      const file = await app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id);
      expect([file.status, file.error, file.errorCode]).to.deep.equal(['FAILED', run.terminationMessage, 'media.corrupt']);
      expect(await eventsWhen(resource.metadata.name!, 2)).to.deep.equal(['Normal JobCreated', 'Warning JobFailed']);
    } finally {
      await events.close();
    }
  });

  it('a running Job → Running; the row follows (running, progress, step); progress and step the program patched are kept, even through failure', async () => {
    const job = await submitArtifact({ userId: randomUUID() });
    const resource = await resourceFor(job.id);
    const jobName = (await jobOf(sim, namespace, resource)).metadata!.name!;
    sim.startJob(namespace, jobName);
    sim.mergePatch('artifactjobs', namespace, resource.metadata.name!, { status: { progress: 40, step: 'waveform' } }, 'status');
    const running = await whenStatus(resource.metadata.name!, (r) => r.status?.phase === 'Running');
    expect(running.status).to.deep.include({ progress: 40, step: 'waveform', jobName });
    const marked = await rowWhen(job.id, (r) => r.progress === 40, 'progress 40');
    expect(marked).to.deep.include({ status: 'running', progress: 40, step: 'waveform' });
    expect(marked.startedAt).to.be.instanceOf(Date);
    // Later reports reach the row too, as the local runner's progress lines do.
    sim.mergePatch('artifactjobs', namespace, resource.metadata.name!, { status: { progress: 55, step: 'thumbnail' } }, 'status');
    expect(await rowWhen(job.id, (r) => r.progress === 55, 'progress 55')).to.deep.include({ status: 'running', step: 'thumbnail' });

    // Killed at activeDeadlineSeconds: the user hears about the deadline, not the SIGTERM.
    sim.failJob(namespace, jobName, { reason: 'DeadlineExceeded', message: 'The job was stopped (SIGTERM) before it finished' });
    const failed = await whenStatus(resource.metadata.name!, (r) => r.status?.phase === 'Failed');
    expect(failed.status).to.deep.include({ progress: 55, step: 'thumbnail', error: 'The job did not finish within its time limit of 3600 s.' });
    expect(await row(job.id)).to.deep.include({ status: 'failed', error: 'The job did not finish within its time limit of 3600 s.' });
  });

  it('a Job that succeeded without writing result.json → Failed with a clear error', async () => {
    const job = await submitArtifact({ userId: randomUUID() });
    const resource = await resourceFor(job.id);
    sim.completeJob(namespace, (await jobOf(sim, namespace, resource)).metadata!.name!);
    const failed = await whenStatus(resource.metadata.name!, (r) => r.status?.phase === 'Failed');
    expect(failed.status!.error).to.equal('The job finished without writing its result.');
    expect(failed.status!.conditions!.find((c) => c.type === 'Failed')!.reason).to.equal('NoResult');
    expect(await row(job.id)).to.deep.include({ status: 'failed', error: 'The job finished without writing its result.' });
  });

  it('a Job deleted before its end was recorded → Failed (JobLost), never a second Job', async () => {
    const job = await submitArtifact({ userId: randomUUID() });
    const resource = await resourceFor(job.id);
    const jobName = (await jobOf(sim, namespace, resource)).metadata!.name!;
    await whenStatus(resource.metadata.name!, (r) => r.status?.jobName === jobName);
    sim.delete('jobs', namespace, jobName);
    const failed = await whenStatus(resource.metadata.name!, (r) => r.status?.phase === 'Failed');
    expect(failed.status!.error).to.equal(`The Job ${jobName} was deleted before its outcome was recorded.`);
    expect(sim.get('jobs', namespace, jobName)).to.equal(undefined);
    expect((await row(job.id)).status).to.equal('failed');
  });

  it('a resource whose program belongs to another kind → Failed (InvalidJob), row failed, no Job made', async () => {
    const jobId = randomUUID();
    const userId = randomUUID();
    const em = app.services.orm.em.fork();
    em.create(Job, { id: jobId, kind: 'RenderJob', program: 'artifact', userId, input: {}, outputPrefix: `jobs/artifact/${jobId}`, status: 'queued' });
    await em.flush();
    const name = `misfiled-${jobId}`;
    const created = sim.create('renderjobs', namespace, {
      apiVersion: 'cutroom.dev/v1alpha1',
      kind: 'RenderJob',
      metadata: { name },
      spec: { jobId, program: 'artifact', userId, input: {}, outputPrefix: `jobs/artifact/${jobId}` },
    });
    const failed = await sim.waitFor(() => {
      const resource = resourceOf(sim, 'RenderJob', namespace, name);
      return resource?.status?.phase === 'Failed' && resource;
    }, 5000);
    expect(failed.status!.error).to.equal('The program "artifact" belongs to ArtifactJob resources, not RenderJob.');
    expect(failed.status!.conditions!.map((c) => `${c.type}=${c.status}/${c.reason}`)).to.deep.equal(['Failed=True/InvalidJob']);
    expect(ownedBy(created as JobResource)).to.deep.equal([]);
    expect(await row(jobId)).to.deep.include({ status: 'failed', error: failed.status!.error });
  });

  it('the api kubernetes dispatcher creates the resource with its labels; dispatching it again is idempotent', async () => {
    const userId = randomUUID();
    const mediaFileId = randomUUID();
    const job = await submitArtifact({ userId, mediaFileId });
    const resource = await resourceFor(job.id);
    expect(resource.spec).to.deep.include({ jobId: job.id, program: 'artifact', userId, mediaFileId, outputPrefix: job.outputPrefix });
    expect(resource.metadata.labels).to.deep.equal(jobResourceLabels(resource.spec));
    expect(resource.metadata.labels).to.include({ 'cutroom.dev/job-id': job.id, 'cutroom.dev/user': userId, 'cutroom.dev/media': mediaFileId, 'cutroom.dev/program': 'artifact' });

    await app.services.dispatcher.dispatch({ kind: 'ArtifactJob', spec: resource.spec });
    const same = sim.list('artifactjobs', namespace, { labelSelector: `cutroom.dev/job-id=${job.id}` });
    expect(same.map((r) => r.metadata.uid)).to.deep.equal([resource.metadata.uid]);
    await jobOf(sim, namespace, resource);
  });

  it('an invalid custom resource → 422 from the API server schema validation when the dispatcher creates it; the job ends failed', async () => {
    const spec = { jobId: 'not-a-uuid', program: 'artifact', userId: randomUUID(), input: {}, outputPrefix: '' };
    const status = await apiStatus(app.services.dispatcher.dispatch({ kind: 'ArtifactJob', spec }), 422);
    expect(status.details!.causes!.map((cause) => cause.field)).to.include.members(['spec.jobId', 'spec.outputPrefix']);
    expect(sim.list('artifactjobs', namespace).filter((r) => (r.spec as { jobId: string }).jobId === 'not-a-uuid')).to.deep.equal([]);

    // Through the job service, a refused resource settles the job as failed (job.rejected) instead of leaving it queued.
    const job = await app.services.jobs.submit(app.services.orm.em.fork(), { program: 'artifact', userId: randomUUID(), input: { sourceKey: 'missing', contentType: 'video/mp4' }, timeoutSeconds: 30 * 24 * 3600 });
    const settled = await eventually(async () => {
      const current = await row(job.id);
      return current.status === 'failed' ? current : undefined;
    }, 'the refused job settled');
    expect(settled.error).to.match(/^The job backend refused the job: /);
  });

  it('cancelling a job (the api deletes its resource) → settled as cancelled once, MediaFile FAILED, then the resource and its Job go', async () => {
    const { upload, events, job, resource, jobName } = await submitUploadJob(sim, namespace, app.services, app.services.jobs, await makeCorruptFile(dir, 'cancelled.mp4', 4096, 11));
    try {
      expect(resourceOf(sim, 'ArtifactJob', namespace, resource.metadata.name!)!.metadata.finalizers).to.deep.equal([completionFinalizer]);
      sim.startJob(namespace, jobName);
      await app.services.jobs.cancel(app.services.orm.em.fork(), job.id);

      const failed = await events.next('media_failed');
      expect(failed.data).to.deep.include({ media_file_uuid: upload.file.id, error: 'The job was cancelled.' });
      await sim.waitFor(() => !resourceOf(sim, 'ArtifactJob', namespace, resource.metadata.name!), 5000);
      await sim.waitFor(() => !sim.get('jobs', namespace, jobName), 5000);
      expect(await row(job.id)).to.deep.include({ status: 'failed', error: 'The job was cancelled.' });
      expect((await app.services.orm.em.fork().findOneOrFail(MediaFile, upload.file.id)).status).to.equal('FAILED');
      expect(events.events.filter((event) => event.type === 'media_failed')).to.have.length(1);
    } finally {
      await events.close();
    }
  });

  it('a Job the API server refuses (422) → Failed with the server’s message at once, not retried forever', async () => {
    const message = 'Job.batch "x" is invalid: spec.template.spec.containers[0].image: Required value';
    sim.failNext({ method: 'POST', path: `/apis/batch/v1/namespaces/${namespace}/jobs`, code: 422, reason: 'Invalid', message }, 1);
    const job = await submitArtifact({ userId: randomUUID() });
    const resource = await resourceFor(job.id);
    const failed = await whenStatus(resource.metadata.name!, (r) => r.status?.phase === 'Failed');
    expect(failed.status!.error).to.equal(`The cluster refused the Job: ${message}`);
    expect(failed.status!.conditions!.find((c) => c.type === 'Failed')!.reason).to.equal('JobRejected');
    expect(ownedBy(resource)).to.deep.equal([]);
    expect(await row(job.id)).to.deep.include({ status: 'failed', error: `The cluster refused the Job: ${message}` });
  });

  it('metrics: jobs created, succeeded and failed by kind, duration, work queue, leader; /healthz 200', async () => {
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

  it('an API error while concluding a job is retried with backoff (reconcile error counted), and the job settles once', async () => {
    const job = await submitArtifact({ userId: randomUUID() });
    const resource = await resourceFor(job.id);
    const jobName = (await jobOf(sim, namespace, resource)).metadata!.name!;
    const errorsBefore = await metricValue(operator.metrics, 'cutroom_operator_reconcile_errors_total', { kind: 'ArtifactJob' });
    // The fresh read before completing fails once: the reconcile is retried and the job still settles once.
    sim.failNext({ method: 'GET', path: `/apis/cutroom.dev/v1alpha1/namespaces/${namespace}/artifactjobs/${resource.metadata.name}`, code: 503 }, 1);
    await putArtifactResult(app.services.storage, job.outputPrefix);
    sim.completeJob(namespace, jobName);
    const done = await whenStatus(resource.metadata.name!, (r) => r.status?.phase === 'Succeeded');
    expect(done.status!.progress).to.equal(100);
    expect(await metricValue(operator.metrics, 'cutroom_operator_reconcile_errors_total', { kind: 'ArtifactJob' })).to.be.greaterThan(errorsBefore);
    expect((await row(job.id)).status).to.equal('succeeded');
  });
});
