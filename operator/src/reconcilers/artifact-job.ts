import type { JobKindProfile } from '../builders/job.ts';

/** Probe, hash, waveform, thumbnail, audio and (for some video) a 480p proxy: one decode pass. */
export const artifactJob: JobKindProfile = {
  kind: 'ArtifactJob',
  resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '2', memory: '2Gi' } },
  gpu: false,
  serviceAccountName: (config) => config.JOB_SERVICE_ACCOUNT_ARTIFACT,
};
