// The source of truth for Cutroom's custom resources: the api creates them, the
// operator reconciles them, job programs report into their status, and
// hack/gen-crds.ts turns these schemas into the CRDs under crds/.
import { z } from 'zod';
import type { V1ObjectMeta } from '@kubernetes/client-node';

export const cutroomGroup = 'cutroom.dev';
export const cutroomVersion = 'v1alpha1';
export const cutroomApiVersion = `${cutroomGroup}/${cutroomVersion}`;
export const cutroomCategory = 'cutroom';

// Kubernetes names every field it rejects; descriptions also feed `kubectl explain`.
const uuid = (what: string) => z.uuid().describe(what);
const timestamp = (what: string) => z.iso.datetime().describe(what);

export const jobSpecSchema = z
  .object({
    jobId: uuid('Id of the job record; output keys derive from it so that a retry overwrites.'),
    program: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z][a-z0-9-]*$/)
      .describe('Job program to run, e.g. artifact, media-edit, render, transcribe.'),
    userId: uuid('User the job is done for (and whose credits it settles).'),
    projectId: uuid('Project the job belongs to.').optional(),
    mediaFileId: uuid('Media file the job works on.').optional(),
    input: z
      .record(z.string(), z.unknown())
      .meta({ 'x-kubernetes-preserve-unknown-fields': true })
      .describe('Program-specific input, passed to the program unchanged (empty when inputRef is set).'),
    inputRef: z
      .boolean()
      .optional()
      .describe('The input is too large for the spec: the program reads it from <outputPrefix>/input.json.'),
    outputPrefix: z
      .string()
      .min(1)
      .max(1024)
      .describe('S3 key prefix the program writes its outputs and result.json under.'),
    timeoutSeconds: z
      .int()
      .min(1)
      .max(7 * 24 * 3600)
      .optional()
      .describe('Wall-clock limit for the run (the Job activeDeadlineSeconds).'),
  })
  .describe('What to run and for whom; immutable in practice once the job started.');

const jobPhases = ['Pending', 'Running', 'Succeeded', 'Failed'] as const;
const jobPhaseSchema = z.enum(jobPhases).describe('Coarse lifecycle: Pending, Running, Succeeded or Failed.');

// metav1.Condition, with the same limits, so that standard tooling reads it.
const jobConditionSchema = z.object({
  type: z
    .string()
    .max(316)
    .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/)
    .describe('Condition type in CamelCase, e.g. Ready or Complete.'),
  status: z.enum(['True', 'False', 'Unknown']).describe('True, False or Unknown.'),
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
    .describe('Programmatic identifier of the last transition, in CamelCase.'),
  message: z.string().max(32768).describe('Human-readable details of the last transition.'),
  lastTransitionTime: timestamp('When the condition last changed status.'),
  observedGeneration: z.int().min(0).optional().describe('metadata.generation the condition was set from.'),
});

export const jobStatusSchema = z
  .object({
    phase: jobPhaseSchema.optional(),
    progress: z.number().min(0).max(100).optional().describe('Percent done, 0 to 100.'),
    step: z.string().max(256).optional().describe('What the program is doing now, e.g. transcribing.'),
    etaSeconds: z.int().min(0).optional().describe("The program's own estimate of the seconds left, when it has one."),
    conditions: z
      .array(jobConditionSchema)
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
      .optional()
      .describe('Latest observations of the job, one per type.'),
    observedGeneration: z.int().min(0).optional().describe('metadata.generation last reconciled.'),
    jobName: z.string().max(63).optional().describe('Name of the batch/v1 Job running the program.'),
    startedAt: timestamp('When the program started.').optional(),
    finishedAt: timestamp('When the program finished, either way.').optional(),
    error: z.string().max(32768).optional().describe('Why the job failed, as the program reported it.'),
  })
  .describe('Observed state, written by the operator and the job program through the status subresource.');

export type JobSpec = z.infer<typeof jobSpecSchema>;
export type JobPhase = z.infer<typeof jobPhaseSchema>;
export type JobCondition = z.infer<typeof jobConditionSchema>;
export type JobStatus = z.infer<typeof jobStatusSchema>;

export type PrinterColumn = {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
};

export type JobKindNames = {
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: readonly string[];
  // What `kubectl get` shows between PROGRESS and AGE: the thing the job is about.
  subjectColumn: PrinterColumn;
};

const projectColumn: PrinterColumn = {
  name: 'Project',
  type: 'string',
  jsonPath: '.spec.projectId',
  description: 'Project the job belongs to.',
};

// One table so that the api, the operator and the CRDs spell every name alike.
export const jobKinds = {
  AnalysisJob: {
    kind: 'AnalysisJob',
    listKind: 'AnalysisJobList',
    plural: 'analysisjobs',
    singular: 'analysisjob',
    shortNames: ['aj'],
    subjectColumn: projectColumn,
  },
  RenderJob: {
    kind: 'RenderJob',
    listKind: 'RenderJobList',
    plural: 'renderjobs',
    singular: 'renderjob',
    shortNames: ['rj'],
    subjectColumn: projectColumn,
  },
  ArtifactJob: {
    kind: 'ArtifactJob',
    listKind: 'ArtifactJobList',
    plural: 'artifactjobs',
    singular: 'artifactjob',
    shortNames: ['afj'],
    subjectColumn: {
      name: 'Media',
      type: 'string',
      jsonPath: '.spec.mediaFileId',
      description: 'Media file the artifacts are made from.',
    },
  },
} as const satisfies Record<string, JobKindNames>;

export type JobKind = keyof typeof jobKinds;
export const jobKindList: readonly (typeof jobKinds)[JobKind][] = Object.values(jobKinds);

// The shape of an AnalysisJob, RenderJob or ArtifactJob as the API server returns it.
export type JobResource = {
  apiVersion: string;
  kind: JobKind;
  metadata: V1ObjectMeta;
  spec: JobSpec;
  status?: JobStatus;
};

// Columns every kind shows, in order; the kind's subject column goes after PROGRESS.
export function printerColumns(names: JobKindNames): PrinterColumn[] {
  return [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Pending, Running, Succeeded or Failed.' },
    { name: 'Progress', type: 'number', jsonPath: '.status.progress', description: 'Percent done.' },
    names.subjectColumn,
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    {
      name: 'Job',
      type: 'string',
      jsonPath: '.status.jobName',
      description: 'batch/v1 Job running the program.',
      priority: 1,
    },
  ];
}

/** The custom resource's name of a job: deterministic, so a repeated dispatch finds the first one. */
export function jobResourceName(job: { program: string; jobId: string }): string {
  return `${job.program}-${job.jobId}`;
}

/** The labels of a job's custom resource (and, through the operator, of its batch Job). */
export function jobResourceLabels(spec: JobSpec): Record<string, string> {
  return {
    'app.kubernetes.io/part-of': 'cutroom',
    'cutroom.dev/job-id': spec.jobId,
    'cutroom.dev/program': spec.program,
    'cutroom.dev/user': spec.userId,
    ...(spec.projectId ? { 'cutroom.dev/project': spec.projectId } : {}),
    ...(spec.mediaFileId ? { 'cutroom.dev/media': spec.mediaFileId } : {}),
  };
}
