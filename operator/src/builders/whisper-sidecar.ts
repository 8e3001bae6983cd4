import type { V1Container, V1EnvVar, V1ResourceRequirements, V1Volume } from '@kubernetes/client-node';
import type { OperatorConfig } from '../config.ts';

export type WhisperSidecarConfig = Pick<
  OperatorConfig,
  | 'JOB_GPU_COUNT'
  | 'JOB_WHISPER_SIDECAR_IMAGE'
  | 'JOB_WHISPER_SIDECAR_WEIGHTS'
  | 'JOB_WHISPER_SIDECAR_MODEL'
  | 'JOB_WHISPER_SIDECAR_PORT'
  | 'JOB_WHISPER_SIDECAR_RESOURCES'
>;

/** The Whisper server (recognizer/) inside an analysis pod, and what the pod needs around it. */
export interface WhisperSidecar {
  /** An init container with restartPolicy Always: a native sidecar (Kubernetes ≥ 1.29). */
  container: V1Container;
  volumes: V1Volume[];
  /** Set on the program: explicit env wins over the job ConfigMap's shared-server address. */
  programEnv: V1EnvVar[];
}

/** The server's own /tmp (uploads and their decoded audio), apart from the program's work files. */
const TMP_VOLUME = 'whisper-tmp';

/** Where the program finds the sidecar: loopback, since they share the pod's network. */
function whisperSidecarBaseUrl(config: Pick<WhisperSidecarConfig, 'JOB_WHISPER_SIDECAR_PORT'>): string {
  return `http://127.0.0.1:${config.JOB_WHISPER_SIDECAR_PORT}/v1`;
}

function sidecarResources(config: WhisperSidecarConfig): V1ResourceRequirements {
  const { requests, limits } = config.JOB_WHISPER_SIDECAR_RESOURCES;
  const gpus: Record<string, string> = config.JOB_GPU_COUNT > 0 ? { 'nvidia.com/gpu': String(config.JOB_GPU_COUNT) } : {};
  const allLimits = { ...limits, ...gpus };
  return {
    ...(requests && Object.keys(requests).length > 0 ? { requests: { ...requests } } : {}),
    ...(Object.keys(allLimits).length > 0 ? { limits: allLimits } : {}),
  };
}

/**
 * The Whisper server as a native sidecar of an analysis pod (JOB_WHISPER_PLACEMENT=sidecar):
 * it holds the pod's GPU, the program starts once its startup probe passes, and the
 * kubelet stops it when the program exits, so the Job completes and nothing idles after.
 * The weights are in the server's image: nothing is downloaded, nothing is cached.
 */
export function whisperSidecar(config: WhisperSidecarConfig): WhisperSidecar {
  const image = config.JOB_WHISPER_SIDECAR_IMAGE;
  const model = config.JOB_WHISPER_SIDECAR_MODEL;
  // loadOperatorConfig refuses sidecar placement without them; this guards hand-made configs.
  if (!image || !model) throw new Error('JOB_WHISPER_SIDECAR_IMAGE and JOB_WHISPER_SIDECAR_MODEL are required with JOB_WHISPER_PLACEMENT=sidecar');
  const port = config.JOB_WHISPER_SIDECAR_PORT;
  return {
    container: {
      name: 'whisper',
      image,
      restartPolicy: 'Always',
      // No envFrom: the server needs neither the S3 keys nor the job settings.
      env: [
        // The kubelet probes the pod's address, not loopback.
        { name: 'WHISPER_HOST', value: '0.0.0.0' },
        { name: 'WHISPER_PORT', value: String(port) },
        { name: 'WHISPER_WEIGHTS', value: config.JOB_WHISPER_SIDECAR_WEIGHTS },
        { name: 'WHISPER_DEVICE', value: config.JOB_GPU_COUNT > 0 ? 'cuda' : 'cpu' },
        // The program asks for one piece at a time: one recognizer process, one copy of the weights.
        { name: 'WHISPER_CONCURRENCY', value: '1' },
      ],
      ports: [{ name: 'whisper', containerPort: port, protocol: 'TCP' }],
      // A sidecar is "started" once its startup probe passes (readiness gates nothing here).
      // The server loads the weights from its image at start; /health is 200 once they have
      // loaded (503 before, with the reason when they cannot): seconds; two minutes covers a slow node.
      startupProbe: { httpGet: { path: '/health', port: 'whisper' }, periodSeconds: 2, failureThreshold: 60 },
      // No liveness probe: a restart mid-transcription would fail the job it serves, and
      // activeDeadlineSeconds already bounds a server that hangs.
      resources: sidecarResources(config),
      // The image runs as uid 1000 like the pod; uploads go to the OS temp dir, its own emptyDir.
      securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
      volumeMounts: [{ name: TMP_VOLUME, mountPath: '/tmp' }],
    },
    volumes: [{ name: TMP_VOLUME, emptyDir: {} }],
    programEnv: [
      { name: 'WHISPER_BASE_URL', value: whisperSidecarBaseUrl(config) },
      { name: 'WHISPER_MODEL', value: model },
    ],
  };
}
