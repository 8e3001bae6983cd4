import type { JobKind } from '../../crds/contract/resources.ts';
import type { JobKindProfile } from './builders/job.ts';

/** Transcription and cut detection: the whisper image, on GPU nodes when the cluster has them. */
export const analysisJob: JobKindProfile = {
  kind: 'AnalysisJob',
  resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '2', memory: '4Gi' } },
  gpu: true,
  serviceAccountName: (config) => config.JOB_SERVICE_ACCOUNT_ANALYSIS,
};

/** Exports: a full ffmpeg encode, the heaviest CPU work Cutroom does. */
export const renderJob: JobKindProfile = {
  kind: 'RenderJob',
  resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '4', memory: '4Gi' } },
  gpu: false,
  serviceAccountName: (config) => config.JOB_SERVICE_ACCOUNT_RENDER,
};

/** Probe, hash, waveform, thumbnail, audio and (for some video) a 480p proxy: one decode pass. */
export const artifactJob: JobKindProfile = {
  kind: 'ArtifactJob',
  resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '2', memory: '2Gi' } },
  gpu: false,
  serviceAccountName: (config) => config.JOB_SERVICE_ACCOUNT_ARTIFACT,
};

/** How each custom resource kind's Jobs are sized and run; the compiler insists every kind has one. */
export const jobKindProfiles = {
  AnalysisJob: analysisJob,
  RenderJob: renderJob,
  ArtifactJob: artifactJob,
} as const satisfies Record<JobKind, JobKindProfile>;
