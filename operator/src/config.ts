import { hostname } from 'node:os';
import { z } from 'zod';
import { ConfigError } from '../../api/src/config.ts';

const int = (min = 0) => z.coerce.number().int().min(min);
const seconds = z.coerce.number().positive();
const optionalName = z.preprocess((value) => (value === '' ? undefined : value), z.string().optional());

/** A JSON-valued variable (the chart renders maps and lists with toJson). */
const json = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value, ctx) => {
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be JSON' });
      return z.NEVER;
    }
  }, schema);

const toleration = z
  .object({
    key: z.string().optional(),
    operator: z.enum(['Exists', 'Equal']).optional(),
    value: z.string().optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    tolerationSeconds: z.int().optional(),
  })
  .strict();

/** A resource quantity as the chart's toJson renders it: "2Gi", "500m", or a bare number. */
const quantity = z.union([z.string().min(1), z.number().nonnegative()]).transform(String);
const resourceRequirements = z
  .object({ requests: z.record(z.string(), quantity).optional(), limits: z.record(z.string(), quantity).optional() })
  .strict();

/** Where analysis Jobs find their transcription server (docs/deploy.md, "The Whisper server"). */
export const whisperPlacements = ['shared', 'sidecar'] as const;

/** The Whisper weights baked into the server image (recognizer/cutroom_recognizer/weights.py, WEIGHTS). */
export const whisperWeights = ['base', 'tiny.en'] as const;

/**
 * The operator's own knobs, by the names docs/deploy.md gives them (the Helm chart sets
 * exactly those); database, Redis, S3 and log level come from the api's configSchema.
 * The lease timings, workers and resync period have defaults the chart leaves alone.
 */
export const operatorConfigSchema = z
  .object({
    KUBE_NAMESPACE: z.string().min(1).default('cutroom').describe('Namespace whose job custom resources are reconciled and where Jobs are created.'),
    POD_NAME: z.string().min(1).default(hostname()).describe("This replica's identity in the Lease (downward API metadata.name)."),
    OPERATOR_LEASE_NAME: z.string().min(1).default('cutroom-operator').describe('coordination.k8s.io/v1 Lease for leader election.'),
    OPERATOR_LEASE_DURATION_SECONDS: int(1).default(15).describe('How long a Lease not renewed keeps other replicas waiting.'),
    OPERATOR_LEASE_RENEW_DEADLINE_SECONDS: seconds.default(10).describe('The leader steps down when it could not renew for this long.'),
    OPERATOR_LEASE_RETRY_PERIOD_SECONDS: seconds.default(2).describe('How often the Lease is renewed or tried.'),
    OPERATOR_METRICS_HOST: z.string().default('0.0.0.0').describe('Address of the /metrics and /healthz server.'),
    OPERATOR_METRICS_PORT: int().max(65535).default(9090).describe('Port of the /metrics and /healthz server (0 picks a free one).'),
    OPERATOR_WORKERS: int(1).default(4).describe('Resources of one kind reconciled at once.'),
    OPERATOR_RETRY_BASE_MS: int(1).default(500).describe('First delay before a failed reconcile is retried; doubles each time.'),
    OPERATOR_RETRY_MAX_MS: int(1).default(60_000).describe('Longest delay between retries of a failed reconcile or a watch restart.'),
    OPERATOR_RESYNC_SECONDS: int(0).default(300).describe('Every resource is reconciled again this often (0: never), in case an event was missed.'),

    JOB_IMAGE_FFMPEG: z.string().min(1).describe('Image of render and artifact Jobs.'),
    JOB_IMAGE_WHISPER: z.string().min(1).describe('Image of analysis Jobs.'),
    JOB_GPU_COUNT: int().default(0).describe('nvidia.com/gpu limit of the Whisper sidecar in analysis Jobs (sidecar placement only); 0 means none.'),
    JOB_GPU_NODE_SELECTOR: json(z.record(z.string(), z.string())).default({}).describe('Node selector of analysis Jobs with the Whisper sidecar, as a JSON object.'),
    JOB_GPU_TOLERATIONS: json(z.array(toleration)).default([]).describe('Tolerations of analysis Jobs with the Whisper sidecar, as a JSON array.'),
    JOB_WHISPER_PLACEMENT: z
      .enum(whisperPlacements)
      .default('shared')
      .describe('shared: analysis Jobs call the Whisper Deployment (WHISPER_BASE_URL from the job ConfigMap) and hold no GPU; sidecar: each analysis Job pod runs the server as a native sidecar on its own GPU (JOB_GPU_*).'),
    JOB_WHISPER_SIDECAR_IMAGE: optionalName.describe('Image of the Whisper sidecar (sidecar placement; required there).'),
    JOB_WHISPER_SIDECAR_WEIGHTS: z.enum(whisperWeights).default('base').describe("Weights the Whisper sidecar runs (its WHISPER_WEIGHTS), from those in its image."),
    JOB_WHISPER_SIDECAR_MODEL: optionalName.describe('Model name the program sends to the Whisper sidecar (its WHISPER_MODEL; the server does not pick weights by it). Sidecar placement; required there.'),
    JOB_WHISPER_SIDECAR_PORT: int(1).max(65535).default(8000).describe('Port of the Whisper sidecar; the program calls http://127.0.0.1:<port>/v1.'),
    JOB_WHISPER_SIDECAR_RESOURCES: json(resourceRequirements).default({}).describe('CPU and memory of the Whisper sidecar, as a JSON {requests, limits}; the GPU limit comes from JOB_GPU_COUNT.'),
    JOB_BACKOFF_LIMIT: int().default(2).describe('spec.backoffLimit of every Job.'),
    JOB_TIMEOUT_SECONDS: int(1).default(3600).describe("The api's JOB_TIMEOUT_SECONDS (one setting for both backends): activeDeadlineSeconds of a Job whose resource names no timeoutSeconds (the api always names one)."),
    JOB_TTL_SECONDS_AFTER_FINISHED: int().default(3600).describe('spec.ttlSecondsAfterFinished of every Job.'),
    JOB_SERVICE_ACCOUNT_ANALYSIS: z.string().min(1).default('cutroom-analysis-job').describe('Service account of analysis Job pods.'),
    JOB_SERVICE_ACCOUNT_RENDER: z.string().min(1).default('cutroom-render-job').describe('Service account of render Job pods.'),
    JOB_SERVICE_ACCOUNT_ARTIFACT: z.string().min(1).default('cutroom-artifact-job').describe('Service account of artifact Job pods.'),
    JOB_ENV_CONFIGMAP: optionalName.describe("ConfigMap in Job pods' envFrom (S3 settings, Whisper address, log level)."),
    JOB_ENV_SECRET: optionalName.describe("Secret in Job pods' envFrom (S3 keys)."),
  })
  .refine((c) => c.OPERATOR_LEASE_RENEW_DEADLINE_SECONDS < c.OPERATOR_LEASE_DURATION_SECONDS, {
    // Otherwise a leader that cannot renew would still act after another took over.
    message: 'must be shorter than OPERATOR_LEASE_DURATION_SECONDS',
    path: ['OPERATOR_LEASE_RENEW_DEADLINE_SECONDS'],
  })
  .refine((c) => c.OPERATOR_LEASE_RETRY_PERIOD_SECONDS < c.OPERATOR_LEASE_RENEW_DEADLINE_SECONDS, {
    message: 'must be shorter than OPERATOR_LEASE_RENEW_DEADLINE_SECONDS',
    path: ['OPERATOR_LEASE_RETRY_PERIOD_SECONDS'],
  })
  .refine((c) => c.JOB_WHISPER_PLACEMENT !== 'sidecar' || c.JOB_WHISPER_SIDECAR_IMAGE !== undefined, {
    message: 'is required with JOB_WHISPER_PLACEMENT=sidecar',
    path: ['JOB_WHISPER_SIDECAR_IMAGE'],
  })
  .refine((c) => c.JOB_WHISPER_PLACEMENT !== 'sidecar' || c.JOB_WHISPER_SIDECAR_MODEL !== undefined, {
    message: 'is required with JOB_WHISPER_PLACEMENT=sidecar',
    path: ['JOB_WHISPER_SIDECAR_MODEL'],
  });

export type OperatorConfig = z.infer<typeof operatorConfigSchema>;

/** Parses the operator's variables once; a bad value stops start-up naming the variable. */
export function loadOperatorConfig(env: Record<string, string | undefined> = process.env): OperatorConfig {
  const parsed = operatorConfigSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid operator configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
