import type { V1EnvFromSource, V1EnvVar, V1Job, V1OwnerReference, V1PodSpec, V1ResourceRequirements } from '@kubernetes/client-node';
import { cutroomApiVersion, cutroomGroup, cutroomVersion, jobKinds, jobResourceLabels } from '../../../crds/contract/resources.ts';
import type { JobKind, JobResource } from '../../../crds/contract/resources.ts';
import { isProgramName, jobPrograms } from '../../../crds/contract/programs.ts';
import type { OperatorConfig } from '../config.ts';
import { whisperSidecar } from './whisper-sidecar.ts';
import type { WhisperSidecar, WhisperSidecarConfig } from './whisper-sidecar.ts';

/** Marks the Jobs this operator made; its Job informer selects on it. */
const managedByLabel = { 'app.kubernetes.io/managed-by': 'cutroom-operator' } as const;
export const managedBySelector = Object.entries(managedByLabel).map(([key, value]) => `${key}=${value}`).join(',');

/** What differs between the kinds: everything else about their Jobs is the same. */
export interface JobKindProfile {
  kind: JobKind;
  /** CPU and memory of one run of the kind's programs. */
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  /**
   * Whether the kind transcribes: with JOB_WHISPER_PLACEMENT=sidecar its pods run the
   * Whisper server beside the program and hold its GPU (JOB_GPU_*); with shared they call
   * the Whisper Deployment and hold no GPU.
   */
  gpu: boolean;
  serviceAccountName(config: JobBuildConfig): string;
}

export type JobBuildConfig = WhisperSidecarConfig &
  Pick<
    OperatorConfig,
    | 'JOB_IMAGE_FFMPEG'
    | 'JOB_IMAGE_WHISPER'
    | 'JOB_WHISPER_PLACEMENT'
    | 'JOB_GPU_NODE_SELECTOR'
    | 'JOB_GPU_TOLERATIONS'
    | 'JOB_BACKOFF_LIMIT'
    | 'JOB_TIMEOUT_SECONDS'
    | 'JOB_TTL_SECONDS_AFTER_FINISHED'
    | 'JOB_SERVICE_ACCOUNT_ANALYSIS'
    | 'JOB_SERVICE_ACCOUNT_RENDER'
    | 'JOB_SERVICE_ACCOUNT_ARTIFACT'
    | 'JOB_ENV_CONFIGMAP'
    | 'JOB_ENV_SECRET'
  >;

/** A resource no Job can be made for; the job fails with this message instead. */
export class InvalidJobResource extends Error {}

const JOB_NAME_MAX = 63;
/** Job images run their program as this uid, like the api and operator images. */
const JOB_USER_ID = 1000;

/** Short word of a kind in Job names: AnalysisJob → analysis. */
function kindWord(kind: JobKind): string {
  return kind.replace(/Job$/, '').toLowerCase();
}

/**
 * The Job's name comes from the resource's uid, so every replica and every restart
 * computes the same one: a second create is AlreadyExists, never a second Job.
 */
export function jobNameFor(resource: Pick<JobResource, 'kind' | 'metadata'>): string {
  const uid = resource.metadata.uid;
  if (!uid) throw new Error(`${resource.kind} ${resource.metadata.name ?? ''} has no uid yet`);
  const suffix = `-${kindWord(resource.kind)}`;
  return `cutroom-${uid.toLowerCase().slice(0, JOB_NAME_MAX - 'cutroom-'.length - suffix.length)}${suffix}`;
}

/** The image that hosts a resource's program, or why there is none. */
function jobImageFor(resource: Pick<JobResource, 'kind' | 'spec'>, config: Pick<JobBuildConfig, 'JOB_IMAGE_FFMPEG' | 'JOB_IMAGE_WHISPER'>): { image: string; imageName: string } {
  const { program } = resource.spec;
  if (!isProgramName(program)) throw new InvalidJobResource(`Unknown job program "${program}".`);
  const entry = jobPrograms[program];
  if (entry.kind !== resource.kind) throw new InvalidJobResource(`The program "${program}" belongs to ${entry.kind} resources, not ${resource.kind}.`);
  return { imageName: entry.image, image: entry.image === 'whisper' ? config.JOB_IMAGE_WHISPER : config.JOB_IMAGE_FFMPEG };
}

function controllerReference(resource: Pick<JobResource, 'kind' | 'metadata'>): V1OwnerReference {
  return {
    apiVersion: cutroomApiVersion,
    kind: resource.kind,
    name: resource.metadata.name!,
    uid: resource.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** What a job program reads from its environment, beyond the envFrom ConfigMap and Secret. */
function programEnv(resource: JobResource): V1EnvVar[] {
  return [
    { name: 'CUTROOM_JOB_SPEC', value: JSON.stringify(resource.spec) },
    { name: 'CUTROOM_PROGRESS', value: 'kubernetes' },
    { name: 'CUTROOM_CR_GROUP', value: cutroomGroup },
    { name: 'CUTROOM_CR_VERSION', value: cutroomVersion },
    { name: 'CUTROOM_CR_PLURAL', value: jobKinds[resource.kind].plural },
    { name: 'CUTROOM_CR_NAME', value: resource.metadata.name! },
    { name: 'CUTROOM_CR_NAMESPACE', value: resource.metadata.namespace! },
  ];
}

function envFrom(config: JobBuildConfig): V1EnvFromSource[] {
  return [
    ...(config.JOB_ENV_CONFIGMAP ? [{ configMapRef: { name: config.JOB_ENV_CONFIGMAP } }] : []),
    ...(config.JOB_ENV_SECRET ? [{ secretRef: { name: config.JOB_ENV_SECRET } }] : []),
  ];
}

/** The program's own CPU and memory; a GPU, when there is one, belongs to the Whisper server. */
function resourcesOf(profile: JobKindProfile): V1ResourceRequirements {
  return { requests: { ...profile.resources.requests }, limits: { ...profile.resources.limits } };
}

/** The pod's own transcription server, for a kind that transcribes under sidecar placement. */
function sidecarOf(profile: JobKindProfile, config: JobBuildConfig): WhisperSidecar | undefined {
  return profile.gpu && config.JOB_WHISPER_PLACEMENT === 'sidecar' ? whisperSidecar(config) : undefined;
}

/** GPU nodes, for a pod that runs the Whisper server. */
function gpuPlacement(config: JobBuildConfig): Pick<V1PodSpec, 'nodeSelector' | 'tolerations'> {
  return {
    ...(Object.keys(config.JOB_GPU_NODE_SELECTOR).length > 0 ? { nodeSelector: { ...config.JOB_GPU_NODE_SELECTOR } } : {}),
    ...(config.JOB_GPU_TOLERATIONS.length > 0 ? { tolerations: config.JOB_GPU_TOLERATIONS.map((t) => ({ ...t })) } : {}),
  };
}

/**
 * The batch/v1 Job that runs a custom resource's program: pure, so that the manifest is
 * tested as data. Throws InvalidJobResource when the resource names no runnable program.
 */
export function buildJob(resource: JobResource, profile: JobKindProfile, config: JobBuildConfig): V1Job {
  const { image, imageName } = jobImageFor(resource, config);
  const name = jobNameFor(resource);
  const labels = { ...jobResourceLabels(resource.spec), ...managedByLabel, 'cutroom.dev/kind': resource.kind };
  const sidecar = sidecarOf(profile, config);
  const from = envFrom(config);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: resource.metadata.namespace!,
      labels,
      ownerReferences: [controllerReference(resource)],
    },
    spec: {
      backoffLimit: config.JOB_BACKOFF_LIMIT,
      activeDeadlineSeconds: resource.spec.timeoutSeconds ?? config.JOB_TIMEOUT_SECONDS,
      ttlSecondsAfterFinished: config.JOB_TTL_SECONDS_AFTER_FINISHED,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          serviceAccountName: profile.serviceAccountName(config),
          // The program patches its resource's status with this account's token.
          automountServiceAccountToken: true,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: JOB_USER_ID,
            runAsGroup: JOB_USER_ID,
            fsGroup: JOB_USER_ID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          ...(sidecar ? { initContainers: [sidecar.container] } : {}),
          containers: [
            {
              name: 'program',
              image,
              command: ['node', `job-images/${imageName}/src/main.ts`],
              env: [...programEnv(resource), ...(sidecar?.programEnv ?? [])],
              ...(from.length > 0 ? { envFrom: from } : {}),
              resources: resourcesOf(profile),
              // A program that dies before writing its message still leaves its last log lines.
              terminationMessagePolicy: 'FallbackToLogsOnError',
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          // Work files (downloaded media, encodes) live in the pod's scratch space.
          volumes: [{ name: 'tmp', emptyDir: {} }, ...(sidecar?.volumes ?? [])],
          ...(sidecar ? gpuPlacement(config) : {}),
        },
      },
    },
  };
}
