import type { JobKindProfile } from '../builders/job.ts';

/** Exports: a full ffmpeg encode, the heaviest CPU work Cutroom does. */
export const renderJob: JobKindProfile = {
  kind: 'RenderJob',
  resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '4', memory: '4Gi' } },
  gpu: false,
  serviceAccountName: (config) => config.JOB_SERVICE_ACCOUNT_RENDER,
};
