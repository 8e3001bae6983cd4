// The job programs: which custom resource kind carries each and which image runs it.
// The api requests them, the operator builds their Jobs, the images host them.
import type { JobKind } from './resources.ts';

export const jobPrograms = {
  artifact: { kind: 'ArtifactJob', image: 'ffmpeg' },
  'media-edit': { kind: 'ArtifactJob', image: 'ffmpeg' },
  'media-import': { kind: 'ArtifactJob', image: 'ffmpeg' },
  proxy: { kind: 'ArtifactJob', image: 'ffmpeg' },
  analyze: { kind: 'AnalysisJob', image: 'whisper' },
  render: { kind: 'RenderJob', image: 'ffmpeg' },
} as const satisfies Record<string, { kind: JobKind; image: string }>;

export type JobProgram = keyof typeof jobPrograms;

/**
 * Programs whose feature is not built yet: the operator can run them, but the api cannot
 * request them, so they need no completion handler until then (none at present).
 */
export const plannedPrograms = [] as const satisfies readonly JobProgram[];

/** What the api may request; each must have a completion handler (the registry is typed by it). */
export type RequestableProgram = Exclude<JobProgram, (typeof plannedPrograms)[number]>;

export function isJobProgram(name: string): name is JobProgram {
  return Object.hasOwn(jobPrograms, name);
}
