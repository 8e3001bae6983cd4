import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatchV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { KubeConfig, V1Job } from '@kubernetes/client-node';
import { expect } from 'chai';
import type { Services } from '../../api/src/app.ts';
import { failureText } from '../../api/src/i18n/job-texts.ts';
import { translate, type MessageKey } from '../../api/src/i18n/index.ts';
import { Job, type JobRow } from '../../api/src/jobs/entities.ts';
import { LocalJobRunner } from '../../api/src/jobs/local-runner.ts';
import { JobOutbox } from '../../api/src/jobs/outbox.ts';
import { JobService } from '../../api/src/jobs/service.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { ERROR_FILE_NAME, outputKey, RESULT_FILE_NAME, type ErrorFile, type FailureParams } from '../../crds/contract/outcome.ts';
import { cutroomGroup, cutroomVersion } from '../../crds/contract/resources.ts';
import type { JobResource } from '../../crds/contract/resources.ts';
import { applyCrds, kubeCluster, testNamespace } from '../support/kube-cluster.ts';
import type { KubeCluster } from '../support/kube-cluster.ts';
import { kubeNode } from '../support/kube-node.ts';
import type { KubeNode } from '../support/kube-node.ts';
import { startFaultProxy } from '../support/kube-faults.ts';
import type { FaultProxy } from '../support/kube-faults.ts';
import { jobsOwnedBy, operatorEnv, resourceIn, startTestOperatorWith, storedUpload, type TestOperator } from '../operator/operator-support.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { eventually } from '../support/wait.ts';
import type { Behaviour } from './misbehaving-program.ts';

const misbehavingProgram = fileURLToPath(new URL('./misbehaving-program.ts', import.meta.url));

/** How a job ended, as the rows and the read models keep it. */
interface Ending {
  job: string;
  /** jobs.error: the English text (logs, fallback). */
  error: string | null;
  file: string;
  code: string | null;
  params: FailureParams | null;
  en: string;
  pt: string;
}

/** What the stand-in program is told to do, or which start the runner is told to attempt. */
type ProgramInput = { behaviour: Behaviour | 'unspawnable' | 'refused-arguments'; failure?: ErrorFile };

/** One run on the cluster: the resource the api created and the batch Job the operator made for it. */
interface ClusterRun {
  job: JobRow;
  resource: JobResource;
  batchJob: V1Job;
  jobName: string;
}

/**
 * A local backend of its own, beside the test app's kubernetes one: a LocalJobRunner that
 * starts the stand-in program (or nothing that can start), and a job service whose outbox
 * is kicked by each submit (never started: it polls nothing).
 */
function localBackend(services: Services, dir: string): { jobs: JobService; runner: LocalJobRunner; outbox: JobOutbox } {
  const runner = new LocalJobRunner({
    concurrency: 4,
    s3: services.storage.settings,
    storage: services.storage,
    completion: services.completion,
    logger: services.logger,
    metrics: services.jobMetrics,
    onSlotFree: () => outbox.kick(),
    command: ({ spec }) => {
      const { behaviour } = spec.input as ProgramInput;
      if (behaviour === 'unspawnable') return { file: join(dir, 'no-such-node'), args: [] };
      // Node refuses it before any process exists (spawn throws instead of emitting 'error').
      if (behaviour === 'refused-arguments') return { file: process.execPath, args: ['\0'] };
      return { file: process.execPath, args: [misbehavingProgram] };
    },
  });
  const outbox: JobOutbox = new JobOutbox({
    orm: services.orm, dispatcher: runner, completion: services.completion, storage: services.storage, logger: services.logger,
    databaseUrl: services.config.DATABASE_URL, channel: `${services.config.REDIS_KEY_PREFIX}jobs`, pollMs: 1000, recoverOnStart: false,
  });
  const jobs = new JobService({ dispatcher: runner, completion: services.completion, outbox, billing: services.billing, defaultTimeoutSeconds: services.config.JOB_TIMEOUT_SECONDS });
  return { jobs, runner, outbox };
}

/** The catalog's text of a code in a language, with its params. */
const catalogText = (locale: 'en' | 'pt', code: string, params: FailureParams | null) => translate(locale, `failure.${code}` as MessageKey, params ?? {});

describe('job failures: one code and one message whichever backend ran the job (the kubernetes one a real API server, Job controller and node)', function () {
  this.timeout(60_000);
  let cluster: KubeCluster;
  let node: KubeNode;
  let proxy: FaultProxy;
  let namespace: string;
  let admin: KubeConfig;
  let app: TestApp;
  let operator: TestOperator;
  let local: ReturnType<typeof localBackend>;
  let dir: string;
  let source: string;

  before(async () => {
    cluster = await kubeCluster();
    await applyCrds(cluster);
    node = await kubeNode(cluster);
    // The node holds this namespace's Pods: each case plays the container's end the failure needs.
    namespace = await testNamespace(cluster, 'failure-table');
    node.hold(namespace);
    admin = cluster.kubeConfig(namespace);
    // The job Pods' ServiceAccount, as the chart makes it: the server admits no Pod without it.
    await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'cutroom-artifact-job' } } });
    proxy = await startFaultProxy(cluster);
    dir = await mkdtemp(join(tmpdir(), 'cutroom-failure-table-'));
    source = join(dir, 'source.mp4');
    await writeFile(source, randomBytes(2048));
    // The app's backend is kubernetes (its outbox takes only those rows); the local rows are this test's runner's.
    app = await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: namespace }, { kubeConfig: admin });
    local = localBackend(app.services, dir);
    // One Pod per Job, as the chart's release has it (jobs.backoffLimit): the Pod's failure is the Job's.
    operator = await startTestOperatorWith(proxy.kubeConfig(namespace), operatorEnv(namespace, { JOB_BACKOFF_LIMIT: '0' }));
    await eventually(async () => (operator.isLeader ? true : undefined), 'the operator to lead', 5000, 20);
  });
  after(async () => {
    await local?.outbox.close();
    await local?.runner.close();
    await operator?.stop();
    await app?.close();
    await proxy?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const em = () => app.services.orm.em.fork();
  const putObject = (prefix: string, name: string, body: unknown) => app.services.storage.putJson(outputKey(prefix, name), body);

  /** An artifact job for a stored upload, through a backend's job service. */
  async function submit(jobs: JobService, input: ProgramInput, request: { timeoutSeconds?: number } = {}) {
    const upload = await storedUpload(app.services, source, 'video/mp4');
    const job = await jobs.submit(em(), {
      program: 'artifact',
      userId: upload.userId,
      mediaFileId: upload.file.id,
      input: { sourceKey: upload.key, contentType: 'video/mp4', ...input },
      ...request,
    });
    return { job, upload };
  }

  /** The settled job row and its media file, with the failure's text in en and pt as the read models show it. */
  async function endingOf(jobId: string, mediaFileId: string): Promise<Ending> {
    const job = await eventually(async () => {
      const row = await em().findOneOrFail(Job, jobId);
      return row.completedAt ? row : undefined;
    }, `job ${jobId} settled`, 15_000);
    const file = await em().findOneOrFail(MediaFile, mediaFileId);
    const text = (locale: 'en' | 'pt') => failureText(locale, file.errorCode, file.errorParams, file.error ?? '');
    // the job row keeps the same code as the file it was for
    expect(job.errorCode ?? null, 'jobs.error_code').to.equal(file.errorCode ?? null);
    expect(job.errorParams ?? null, 'jobs.error_params').to.deep.equal(file.errorCode ? (file.errorParams ?? null) : null);
    return { job: job.status, error: job.error ?? null, file: file.status, code: file.errorCode ?? null, params: file.errorParams ?? null, en: text('en'), pt: text('pt') };
  }

  /** Runs the job on the local backend: a real child process, stopped or cancelled as `whileRunning` says. */
  async function runLocally(input: ProgramInput, options: { timeoutSeconds?: number; whileRunning?: (job: JobRow) => Promise<void> } = {}): Promise<Ending> {
    const { job, upload } = await submit(local.jobs, input, options.timeoutSeconds ? { timeoutSeconds: options.timeoutSeconds } : {});
    await options.whileRunning?.(job);
    return endingOf(job.id, upload.file.id);
  }

  /**
   * Runs the job on the cluster: the api creates the resource, the operator its batch Job, the
   * Job controller its Pod, and `play` does what the container and the program would (outcome
   * files in S3, the container's end); the Job controller concludes the Job from the Pod.
   */
  async function runOnCluster(input: ProgramInput, options: { timeoutSeconds?: number; beforeSubmit?: () => void; play?: (run: ClusterRun) => Promise<void> | void } = {}): Promise<Ending> {
    options.beforeSubmit?.();
    const { job, upload } = await submit(app.services.jobs, input, options.timeoutSeconds ? { timeoutSeconds: options.timeoutSeconds } : {});
    if (options.play) {
      const resource = await eventually(() => resourceIn(admin, 'ArtifactJob', namespace, `artifact-${job.id}`), `the resource of ${job.id}`, 5000, 20);
      const owned = await eventually(async () => {
        const found = await jobsOwnedBy(admin, namespace, resource);
        return found.length > 0 ? found : undefined;
      }, `the Job of ${job.id}`, 10_000, 20);
      expect(owned).to.have.length(1);
      await options.play({ job, resource, batchJob: owned[0]!, jobName: owned[0]!.metadata!.name! });
    }
    return endingOf(job.id, upload.file.id);
  }

  /** The resource once the operator has written `phase` (its own record that it saw the Job there). */
  const whenPhase = (name: string, phase: string) =>
    eventually(async () => ((await resourceIn(admin, 'ArtifactJob', namespace, name))?.status?.phase === phase ? true : undefined), `${name} ${phase}`, 10_000, 20);
  /** The held Pod of a Job, once the Job controller made it and the scheduler bound it. */
  const podOf = (jobName: string) => eventually(async () => (await node.held(namespace, jobName))[0], `the Pod of ${jobName}`, 10_000, 20);
  const startJob = async (jobName: string) => node.play(await podOf(jobName), 'running');
  const endJob = async (jobName: string, end: { exitCode: number; message?: string; reason?: string }) => node.play(await podOf(jobName), end);

  /** A failed job as both backends must leave it: row failed, file FAILED, the code and the catalog's text. */
  function expectFailure(ending: Ending, code: string, params: FailureParams | null | 'detail') {
    expect(ending).to.deep.include({ job: 'failed', file: 'FAILED', code });
    if (params === 'detail') expect(Object.keys(ending.params ?? {}), 'a backend detail only (not in the message)').to.deep.equal(['detail']);
    else expect(ending.params).to.deep.equal(params);
    const shown = params === 'detail' ? ending.params : params;
    expect({ en: ending.en, pt: ending.pt }).to.deep.equal({ en: catalogText('en', code, shown), pt: catalogText('pt', code, shown) });
  }

  /** A program's own failure, with params, as job-images/lib writes it to error.json. */
  const coded: ErrorFile = {
    code: 'media.unsupported_type',
    params: { content_type: 'application/x-cutroom-test' },
    message: 'Unsupported content type "application/x-cutroom-test"',
  };
  /** What a program stopped by SIGTERM leaves: the backend's own cause must win over it. */
  const sigtermed: ErrorFile = { code: 'job.cancelled', params: null, message: 'The job was stopped (SIGTERM) before it finished' };
  /**
   * The failures either backend can meet. `input` is what the stand-in program does, `local`
   * what the test does to the local run meanwhile; `cluster` plays what Kubernetes would show
   * for the same failure. `params` null: none; 'detail': a backend-specific detail the
   * message leaves out.
   */
  const sharedRows: {
    failure: string;
    code: string;
    params: FailureParams | null | 'detail';
    input: ProgramInput;
    timeoutSeconds?: number;
    local?: (job: JobRow) => Promise<void>;
    cluster: (run: ClusterRun) => Promise<void> | void;
  }[] = [
    {
      failure: 'the program fails with its own coded failure (error.json with code and params)',
      code: coded.code!,
      params: coded.params,
      input: { behaviour: 'coded', failure: coded },
      cluster: async ({ job, jobName }) => {
        await startJob(jobName);
        await putObject(job.outputPrefix, ERROR_FILE_NAME, coded);
        await endJob(jobName, { exitCode: 1, message: coded.message });
      },
    },
    {
      failure: 'the program exits non-zero leaving neither result.json nor error.json (crash)',
      code: 'job.crashed',
      params: 'detail',
      input: { behaviour: 'crash' },
      cluster: async ({ jobName }) => {
        await startJob(jobName);
        // FallbackToLogsOnError: the termination message is the log tail.
        await endJob(jobName, { exitCode: 3, message: 'Segmentation fault (core dumped)' });
      },
    },
    {
      failure: 'the program exits 0 without result.json',
      code: 'job.no_result',
      params: null,
      input: { behaviour: 'no-result' },
      cluster: async ({ jobName }) => {
        await startJob(jobName);
        await endJob(jobName, { exitCode: 0 });
      },
    },
    {
      failure: 'the program exits 0 with a result.json that is not a JSON object',
      code: 'job.invalid_result',
      params: null,
      input: { behaviour: 'unreadable-result' },
      cluster: async ({ job, jobName }) => {
        await startJob(jobName);
        await putObject(job.outputPrefix, RESULT_FILE_NAME, ['not', 'an', 'object']);
        await endJob(jobName, { exitCode: 0 });
      },
    },
    {
      // Local: the runner's timer (the spec's timeoutSeconds) stops a program that ignores its own deadline.
      // Cluster: the Job's activeDeadlineSeconds is the same setting; the killed program's error.json says SIGTERM.
      failure: 'the job runs past its timeout (timeoutSeconds; the Job past activeDeadlineSeconds)',
      code: 'job.timed_out',
      params: { seconds: 1 },
      input: { behaviour: 'hang' },
      timeoutSeconds: 1,
      cluster: async ({ job, batchJob, jobName }) => {
        expect(batchJob.spec!.activeDeadlineSeconds, 'one timeout setting: the spec carries it to the Job').to.equal(1);
        // What a program stopped at the deadline leaves; the real Job controller fails the Job (DeadlineExceeded) a second after it started.
        await putObject(job.outputPrefix, ERROR_FILE_NAME, sigtermed);
        await startJob(jobName).catch(() => undefined);
        const batch = admin.makeApiClient(BatchV1Api);
        const failed = await eventually(async () => {
          const current = await batch.readNamespacedJob({ name: jobName, namespace });
          return current.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
        }, `${jobName} failed`, 15_000, 50);
        expect(failed.reason).to.equal('DeadlineExceeded');
      },
    },
    {
      failure: 'the job is cancelled while it runs',
      code: 'job.cancelled',
      params: null,
      input: { behaviour: 'wait' },
      local: async (job) => {
        // Cancelled once the program runs, so the runner's SIGTERM reaches it.
        await eventually(async () => ((await em().findOneOrFail(Job, job.id)).step === 'process' ? true : undefined), 'the program running', 15_000);
        await local.jobs.cancel(em(), job.id);
      },
      cluster: async ({ job, resource, jobName }) => {
        await startJob(jobName);
        await whenPhase(resource.metadata.name!, 'Running');
        await app.services.jobs.cancel(em(), job.id);
      },
    },
  ];

  for (const row of sharedRows) {
    it(`${row.failure} → ${row.code}, the same code and message (en, pt) on the local and the kubernetes backend`, async () => {
      const timeout = row.timeoutSeconds ? { timeoutSeconds: row.timeoutSeconds } : {};
      const onLocal = await runLocally(row.input, { ...timeout, ...(row.local ? { whileRunning: row.local } : {}) });
      const onCluster = await runOnCluster(row.input, { ...timeout, play: row.cluster });
      expectFailure(onLocal, row.code, row.params);
      expectFailure(onCluster, row.code, row.params);
      expect({ code: onCluster.code, en: onCluster.en, pt: onCluster.pt }).to.deep.equal({ code: onLocal.code, en: onLocal.en, pt: onLocal.pt });
      // The English text too, but where it carries what only one backend saw (exit code, pod message).
      if (row.params !== 'detail') expect(onCluster.error).to.equal(onLocal.error);
    });
  }

  describe('local backend only', () => {
    it('the program cannot be started (no such executable) → job.spawn_failed', async () => {
      expectFailure(await runLocally({ behaviour: 'unspawnable' }), 'job.spawn_failed', 'detail');
    });

    it('the start is refused before any process exists (spawn throws) → job.spawn_failed, and the runner takes the next job', async () => {
      expectFailure(await runLocally({ behaviour: 'refused-arguments' }), 'job.spawn_failed', 'detail');
      expectFailure(await runLocally({ behaviour: 'no-result' }), 'job.no_result', null);
    });
  });

  describe('kubernetes backend only', () => {
    it('the pod is OOMKilled → job.out_of_memory, whatever the program wrote', async () => {
      const ending = await runOnCluster({ behaviour: 'wait' }, {
        play: async ({ job, jobName }) => {
          await startJob(jobName);
          await putObject(job.outputPrefix, ERROR_FILE_NAME, sigtermed);
          // As on a cluster: the kubelet records the container's end (killed for its memory), then the Job controller fails the Job.
          await endJob(jobName, { exitCode: 137, reason: 'OOMKilled' });
        },
      });
      expectFailure(ending, 'job.out_of_memory', null);
    });

    it('the Job disappears before its outcome was read → job.lost', async () => {
      const ending = await runOnCluster({ behaviour: 'wait' }, {
        play: async ({ resource, jobName }) => {
          await eventually(async () => ((await resourceIn(admin, 'ArtifactJob', namespace, resource.metadata.name!))?.status?.jobName === jobName ? true : undefined), 'the Job recorded', 5000, 20);
          await admin.makeApiClient(BatchV1Api).deleteNamespacedJob({ name: jobName, namespace, propagationPolicy: 'Background' });
        },
      });
      expectFailure(ending, 'job.lost', 'detail');
    });

    it('the cluster refuses the Job (422) → job.rejected', async () => {
      const message = 'Job.batch "x" is invalid: spec.template.spec.containers[0].image: Required value';
      const ending = await runOnCluster({ behaviour: 'wait' }, {
        beforeSubmit: () => void proxy.failNext({ method: 'POST', path: `/apis/batch/v1/namespaces/${namespace}/jobs`, code: 422, reason: 'Invalid', message }, 1),
      });
      expectFailure(ending, 'job.rejected', 'detail');
    });

    it('a resource no Job can be made for (its program belongs to another kind) → job.invalid_spec', async () => {
      const upload = await storedUpload(app.services, source, 'video/mp4');
      const jobId = randomUUID();
      const outputPrefix = `jobs/artifact/${jobId}`;
      const rows = em();
      // Dispatched already, so that no outbox hands the row over: only the misfiled resource runs it.
      rows.create(Job, {
        id: jobId, kind: 'RenderJob', program: 'artifact', userId: upload.userId, mediaFileId: upload.file.id, input: {}, outputPrefix,
        status: 'queued', backend: 'kubernetes', dispatchedAt: new Date(),
      });
      await rows.flush();
      await admin.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
        group: cutroomGroup, version: cutroomVersion, namespace, plural: 'renderjobs',
        body: {
          apiVersion: 'cutroom.dev/v1alpha1',
          kind: 'RenderJob',
          metadata: { name: `misfiled-${jobId}` },
          spec: { jobId, program: 'artifact', userId: upload.userId, mediaFileId: upload.file.id, input: {}, outputPrefix },
        },
      });
      expectFailure(await endingOf(jobId, upload.file.id), 'job.invalid_spec', 'detail');
    });
  });
});
