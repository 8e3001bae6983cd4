// The program registry: for each job program, the custom resource kind that carries it,
// the image that runs it, its input and result schemas and its progress steps. The api
// requests programs and reads their results by it, the operator builds their Jobs by it,
// the images host them by it: a program's types all derive from its entry here.
import type { z } from 'zod';
import type { JobKind } from './resources.ts';
import { analyzeInputSchema, analyzeResultSchema } from './programs/analyze.ts';
import { artifactInputSchema, artifactResultSchema } from './programs/artifact.ts';
import { mediaEditInputSchema, mediaEditResultSchema } from './programs/media-edit.ts';
import { mediaImportInputSchema, mediaImportResultSchema } from './programs/media-import.ts';
import { proxyInputSchema, proxyResultSchema } from './programs/proxy.ts';
import { renderInputSchema, renderResultSchema } from './programs/render.ts';

/**
 * A program's steps in the order it runs them, each with its slice [from, to] of the job's
 * percentage: the program's own estimate of where its time goes, nothing the api's events
 * are tuned to (the api maps steps to the spec's marks itself).
 */
type ProgressSteps = Readonly<Record<string, readonly [from: number, to: number]>>;

export interface ProgramEntry {
  kind: JobKind;
  image: 'ffmpeg' | 'whisper';
  input: z.ZodType<object>;
  result: z.ZodType<object>;
  steps: ProgressSteps;
}

export const jobPrograms = {
  artifact: {
    kind: 'ArtifactJob',
    image: 'ffmpeg',
    input: artifactInputSchema,
    result: artifactResultSchema,
    steps: { download: [0, 20], probe: [20, 25], process: [25, 90], upload: [90, 100] },
  },
  'media-edit': {
    kind: 'ArtifactJob',
    image: 'ffmpeg',
    input: mediaEditInputSchema,
    result: mediaEditResultSchema,
    // `describe`: the artifact program run on the stored output, in the same job
    steps: { download: [0, 15], probe: [15, 20], edit: [20, 60], upload: [60, 70], describe: [70, 100] },
  },
  'media-import': {
    kind: 'ArtifactJob',
    image: 'ffmpeg',
    input: mediaImportInputSchema,
    result: mediaImportResultSchema,
    steps: { download: [0, 50], upload: [50, 60], describe: [60, 100] },
  },
  proxy: {
    kind: 'ArtifactJob',
    image: 'ffmpeg',
    input: proxyInputSchema,
    result: proxyResultSchema,
    steps: { download: [0, 15], probe: [15, 20], process: [20, 95], upload: [95, 100] },
  },
  analyze: {
    kind: 'AnalysisJob',
    image: 'whisper',
    input: analyzeInputSchema,
    result: analyzeResultSchema,
    steps: { preparing: [0, 10], detecting_speech: [10, 20], transcribing: [20, 85], finding_cuts: [85, 95], saving: [95, 100] },
  },
  render: {
    kind: 'RenderJob',
    image: 'ffmpeg',
    input: renderInputSchema,
    result: renderResultSchema,
    // `loudness` runs only when the export normalises; the encode is most of the work
    steps: { download: [0, 5], probe: [5, 7], encode: [7, 87], loudness: [87, 92], mux: [92, 95], upload: [95, 100] },
  },
} as const satisfies Record<string, ProgramEntry>;

export type ProgramName = keyof typeof jobPrograms;

/** What the api writes as the input of program `P` (defaults may be left out). */
export type InputOf<P extends ProgramName> = z.input<(typeof jobPrograms)[P]['input']>;
/** What program `P` reads as its input (defaults applied). */
export type ParsedInputOf<P extends ProgramName> = z.output<(typeof jobPrograms)[P]['input']>;
/** What program `P` writes as result.json and its completion reads. */
export type ResultOf<P extends ProgramName> = z.output<(typeof jobPrograms)[P]['result']>;
/** The names of program `P`'s progress steps. */
export type StepOf<P extends ProgramName> = keyof (typeof jobPrograms)[P]['steps'] & string;

export function isProgramName(name: string): name is ProgramName {
  return Object.hasOwn(jobPrograms, name);
}

/** Where a step's fraction (0..1) puts the whole job, in percent. */
export function percentOf(program: ProgramName, step: string, fraction: number): number {
  const slice = (jobPrograms[program].steps as ProgressSteps)[step];
  if (!slice) return 0;
  const [from, to] = slice;
  return from + (to - from) * Math.min(1, Math.max(0, fraction));
}

/** How far into `step` a job's percentage is (0..1); 0 for a step the program does not have. */
export function fractionOf(program: ProgramName, step: string, percent: number): number {
  const slice = (jobPrograms[program].steps as ProgressSteps)[step];
  if (!slice) return 0;
  const [from, to] = slice;
  return to === from ? 1 : Math.min(1, Math.max(0, (percent - from) / (to - from)));
}

/** Whether `step` comes after `than` in the program's order (false for unknown steps). */
export function isStepAfter(program: ProgramName, step: string, than: string): boolean {
  const order = Object.keys(jobPrograms[program].steps);
  const at = order.indexOf(step);
  return at >= 0 && at > order.indexOf(than);
}
