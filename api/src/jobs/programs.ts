import type { JobKind, JobSpec } from '../../../crds/schema.ts';

/** Which custom resource kind and which job image run each program. */
export const jobPrograms = {
  artifact: { kind: 'ArtifactJob', image: 'ffmpeg' },
  'media-edit': { kind: 'ArtifactJob', image: 'ffmpeg' },
  'media-import': { kind: 'ArtifactJob', image: 'ffmpeg' },
  proxy: { kind: 'ArtifactJob', image: 'ffmpeg' },
  render: { kind: 'RenderJob', image: 'ffmpeg' },
  transcribe: { kind: 'AnalysisJob', image: 'whisper' },
} as const satisfies Record<string, { kind: JobKind; image: string }>;

export type JobProgram = keyof typeof jobPrograms;

export function isJobProgram(name: string): name is JobProgram {
  return Object.hasOwn(jobPrograms, name);
}

/** What a dispatcher receives: the CR spec plus the kind that carries it. */
export interface DispatchedJob {
  kind: JobKind;
  spec: JobSpec;
}

/** What names a job to cancel: enough to find its resource without remembering it. */
export interface CancelledJob {
  jobId: string;
  kind: JobKind;
  program: string;
}

/** Hands jobs to whoever runs them; both backends end in the same completion handlers. */
export interface JobDispatcher {
  dispatch(job: DispatchedJob): Promise<void>;
  cancel(job: CancelledJob): Promise<void>;
  close(): Promise<void>;
}
