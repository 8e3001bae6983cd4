// Support for the operator's tests: an operator started in-process against a real API server
// (with the run's real PostgreSQL, Redis and S3), the api's job service on a namespace, and
// readers for metrics, resources and the Jobs they own.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ApiException, BatchV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { KubeConfig, V1Job } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { loadConfig } from '../../api/src/config.ts';
import type { ObjectStorage } from '../../api/src/storage/storage.ts';
import { KubernetesJobDispatcher } from '../../api/src/jobs/kubernetes-dispatcher.ts';
import { JobService } from '../../api/src/jobs/service.ts';
import { JobOutbox } from '../../api/src/jobs/outbox.ts';
import type { Services } from '../../api/src/app.ts';
import type { ArtifactResult } from '../../crds/contract/programs/artifact.ts';
import { cutroomGroup, cutroomVersion, jobKinds } from '../../crds/contract/resources.ts';
import type { JobKind, JobResource } from '../../crds/contract/resources.ts';
import { loadOperatorConfig } from '../../operator/src/config.ts';
import type { OperatorConfig } from '../../operator/src/config.ts';
import { startOperator } from '../../operator/src/operator.ts';
import type { RunningOperator } from '../../operator/src/operator.ts';
import type { LogLine } from '../support/harness.ts';
import { listenToUser } from '../support/events.ts';
import { eventually } from '../support/wait.ts';
import { storedUpload } from '../support/stored-upload.ts';
export { storedUpload };

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

let replicas = 0;

/** Short lease timings so that failover takes about a second; quick retries. */
export function operatorEnv(namespace: string, env: Record<string, string> = {}): Record<string, string> {
  return {
    KUBE_NAMESPACE: namespace,
    POD_NAME: `cutroom-operator-${++replicas}`,
    OPERATOR_LEASE_NAME: 'cutroom-operator',
    OPERATOR_LEASE_DURATION_SECONDS: '1',
    OPERATOR_LEASE_RENEW_DEADLINE_SECONDS: '0.6',
    OPERATOR_LEASE_RETRY_PERIOD_SECONDS: '0.15',
    OPERATOR_METRICS_HOST: '127.0.0.1',
    OPERATOR_METRICS_PORT: '0',
    OPERATOR_RETRY_BASE_MS: '100',
    OPERATOR_RETRY_MAX_MS: '2000',
    OPERATOR_RESYNC_SECONDS: '0',
    JOB_IMAGE_FFMPEG: 'registry.test/cutroom/job-ffmpeg:1.0.0',
    JOB_IMAGE_WHISPER: 'registry.test/cutroom/job-whisper:1.0.0',
    JOB_ENV_CONFIGMAP: 'cutroom-config',
    JOB_ENV_SECRET: 'cutroom-credentials',
    ...env,
  };
}

export interface TestOperator extends RunningOperator {
  config: OperatorConfig;
  logs: LogLine[];
}

/** An operator replica with these client settings and this environment, with the run's database, Redis and S3. */
export async function startTestOperatorWith(kubeConfig: KubeConfig, env: Record<string, string>): Promise<TestOperator> {
  const config = loadConfig({ ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', DATABASE_POOL_MAX: '3' });
  const operatorConfig = loadOperatorConfig(env);
  const logs: LogLine[] = [];
  const logDestination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logs.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const operator = await startOperator({ config, operatorConfig, kubeConfig, logDestination });
  return Object.assign(operator, { config: operatorConfig, logs });
}

/** The value of one metric series (0 when it was never set). */
export async function metricValue(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const matching = values.filter((value) => Object.entries(labels).every(([key, wanted]) => String((value.labels as Record<string, unknown>)[key]) === wanted));
  return matching.reduce((sum, value) => sum + value.value, 0);
}

/** An artifact job submitted for a file stored as an upload leaves it, its owner's channel listened to. */
async function submitStoredUpload(services: Services, jobs: JobService, path: string) {
  const upload = await storedUpload(services, path, 'video/mp4');
  const events = await listenToUser(services.bus, upload.userId);
  const job = await jobs.submit(services.orm.em.fork(), {
    program: 'artifact',
    userId: upload.userId,
    mediaFileId: upload.file.id,
    input: { sourceKey: upload.key, contentType: 'video/mp4' },
  });
  const name = `artifact-${job.id}`;
  return { upload, events, job, name };
}

/** The api's job service with the kubernetes backend, creating resources with these client settings. */
export function jobServiceWith(services: Services, kubeConfig: KubeConfig, namespace: string): JobService {
  const dispatcher = new KubernetesJobDispatcher(kubeConfig, namespace, services.jobMetrics);
  // Never started: it hands over what this service submits, when submitted (the operator's own outbox covers the rest).
  const outbox = new JobOutbox({
    orm: services.orm, dispatcher, completion: services.completion, storage: services.storage, logger: services.logger,
    databaseUrl: services.config.DATABASE_URL, channel: `${services.config.REDIS_KEY_PREFIX}jobs`, pollMs: 1000, recoverOnStart: false,
  });
  return new JobService({ dispatcher, completion: services.completion, outbox, billing: services.billing, defaultTimeoutSeconds: services.config.JOB_TIMEOUT_SECONDS });
}

/**
 * What the artifact program leaves in `<outputPrefix>/result.json` for a 1 s clip
 * (typed by the program's own ArtifactResult), for tests that play the program's part.
 */
export async function putArtifactResult(storage: ObjectStorage, outputPrefix: string): Promise<ArtifactResult> {
  const result: ArtifactResult = {
    sha256: randomUUID().replaceAll('-', '').repeat(2),
    size_bytes: 48_213,
    kind: 'video',
    duration_ms: 1000,
    width: 640,
    height: 360,
    has_audio: true,
    video_codec: 'h264',
    audio_codec: 'aac',
    container: 'mov,mp4,m4a,3gp,3g2,mj2',
    web_compatible: true,
    proxy_status: 'not_applicable',
    artifacts: { waveform_key: null, thumbnail_key: `${outputPrefix}/thumbnail.jpg`, audio_key: `${outputPrefix}/audio.wav`},
    waveform_peaks_count: null,
  };
  await storage.client.send(new PutObjectCommand({ Bucket: storage.bucket, Key: `${outputPrefix}/result.json`, Body: JSON.stringify(result), ContentType: 'application/json' }));
  return result;
}

/** A job resource as the API server has it now, or undefined once it is gone. */
export async function resourceIn(kubeConfig: KubeConfig, kind: JobKind, namespace: string, name: string): Promise<JobResource | undefined> {
  try {
    return (await kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ group: cutroomGroup, version: cutroomVersion, namespace, plural: jobKinds[kind].plural, name })) as JobResource;
  } catch (error) {
    if (error instanceof ApiException && error.code === 404) return undefined;
    throw error;
  }
}

/** The batch Jobs a resource owns, as the API server has them now. */
export async function jobsOwnedBy(kubeConfig: KubeConfig, namespace: string, resource: JobResource): Promise<V1Job[]> {
  const jobs = await kubeConfig.makeApiClient(BatchV1Api).listNamespacedJob({ namespace });
  return jobs.items.filter((job) => job.metadata?.ownerReferences?.some((ref) => ref.uid === resource.metadata.uid));
}

/**
 * `submitUploadJob` on a real API server: an artifact job for a file stored as an upload, its
 * resource and the operator's Job waited for, the owner's event channel listened to.
 */
export async function submitUploadJobOn(kubeConfig: KubeConfig, namespace: string, services: Services, jobs: JobService, path: string) {
  const { upload, events, job, name } = await submitStoredUpload(services, jobs, path);
  const resource = await eventually(() => resourceIn(kubeConfig, 'ArtifactJob', namespace, name), `the resource ${name}`, 15_000, 20);
  const owned = await eventually(async () => {
    const found = await jobsOwnedBy(kubeConfig, namespace, resource);
    return found.length > 0 ? found : undefined;
  }, `the Job of ${name}`, 10_000, 20);
  if (owned.length !== 1) throw new Error(`expected one Job for ${name}, found ${owned.length}`);
  return { upload, events, job, name, resource, jobName: owned[0]!.metadata!.name! };
}
