import type { JobKindProfile } from '../builders/job.ts';

/** Transcription and cut detection: the whisper image, on GPU nodes when the cluster has them. */
export const analysisJob: JobKindProfile = {
  kind: 'AnalysisJob',
  resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '2', memory: '4Gi' } },
  gpu: true,
  serviceAccountName: (config) => config.JOB_SERVICE_ACCOUNT_ANALYSIS,
};
