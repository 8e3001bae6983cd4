// The render's first stage: the output's frame grid (the main footage's rate) and each
// segment on it — the source stretch snapped to the grid, its exact frames and samples.
import type { RenderInput } from '../../../../crds/contract/programs/render.ts';
import { ENCODER_PRESETS } from '../media/encode.ts';
import type { MediaProbe, Rational } from '../media/probe.ts';
import { RenderPlanError } from './render-plan-error.ts';

export const OUTPUT_SAMPLE_RATE_HZ = ENCODER_PRESETS.render.audio.sampleRateHz;
/** When the main footage's frame rate is unknown (or absurd, as in some variable-rate phone files). */
const DEFAULT_FRAME_RATE: Rational = { num: 30, den: 1 };
const MAX_FRAME_RATE = 60;

export interface PlannedSegment {
  sourceId: string;
  inserted: boolean;
  kind: 'video' | 'audio' | 'image';
  /** The output's frames this segment fills: [outFirstFrame, outFirstFrame + frameCount). */
  outFirstFrame: number;
  frameCount: number;
  /** The source stretch, snapped to the output's frame grid, in seconds. */
  sourceStartSeconds: number;
  sourceEndSeconds: number;
  /** Samples at OUTPUT_SAMPLE_RATE_HZ, from the output's cumulative frame times (so audio never drifts from video). */
  audioSamples: number;
  /** The source's own sound, or silence. */
  audio: 'source' | 'silence';
  /** The ffmpeg input this segment reads (several segments may share one, see MAX_DECODED_GAP_SECONDS). */
  inputIndex: number;
}

const rateValue = (rate: Rational): number => rate.num / rate.den;

/** The frame k of the output's grid starts at k × den / num seconds. */
export const frameTime = (frame: number, rate: Rational): number => (frame * rate.den) / rate.num;
/** The first frame of the grid at or after `seconds` (a hair of tolerance for ms rounding); the smart render snaps by it too. */
export const frameAtOrAfter = (seconds: number, rate: Rational): number => Math.max(0, Math.ceil((seconds * rate.num) / rate.den - 1e-6));
export const samplesAt = (frame: number, rate: Rational): number => Math.round((frame * OUTPUT_SAMPLE_RATE_HZ * rate.den) / rate.num);

/** The output's frame rate: the main footage's own, when it is a sane constant rate. */
export function outputFrameRate(input: RenderInput, probes: ReadonlyMap<string, MediaProbe>): Rational {
  const main = input.segments.find((segment) => !segment.inserted) ?? input.segments[0];
  const video = main ? probes.get(main.sourceId)?.video : undefined;
  const probe = main ? probes.get(main.sourceId) : undefined;
  if (!video || probe?.kind !== 'video') return DEFAULT_FRAME_RATE;
  for (const rate of [video.frameRate, video.averageFrameRate]) {
    if (rate && rateValue(rate) >= 1 && rateValue(rate) <= MAX_FRAME_RATE) return rate;
  }
  return DEFAULT_FRAME_RATE;
}

const sameRate = (a: Rational | null, b: Rational): boolean => a !== null && a.num * b.den === b.num * a.den;

/** A constant-rate source at the output's rate: its frames are the output's, one for one. */
export function playsAtRate(probe: MediaProbe, rate: Rational): boolean {
  return sameRate(probe.video?.frameRate ?? null, rate) && sameRate(probe.video?.averageFrameRate ?? null, rate);
}

export function planSegments(input: RenderInput, probes: ReadonlyMap<string, MediaProbe>, rate: Rational): PlannedSegment[] {
  const planned: PlannedSegment[] = [];
  let outFrame = 0;
  for (const segment of input.segments) {
    const probe = probes.get(segment.sourceId);
    if (!probe) throw new RenderPlanError(`segment source ${segment.sourceId} was not probed`);
    const limit = probe.kind === 'image' || probe.durationSeconds === null ? Number.POSITIVE_INFINITY : probe.durationSeconds;
    const first = frameAtOrAfter(segment.sourceStartMs / 1000, rate);
    const last = frameAtOrAfter(Math.min(segment.sourceEndMs / 1000, limit), rate);
    // A stretch shorter than a frame of the output shows nothing; it is left out.
    if (last <= first) continue;
    const frameCount = last - first;
    planned.push({
      sourceId: segment.sourceId,
      inserted: segment.inserted,
      kind: probe.kind,
      outFirstFrame: outFrame,
      frameCount,
      sourceStartSeconds: frameTime(first, rate),
      sourceEndSeconds: frameTime(last, rate),
      audioSamples: samplesAt(outFrame + frameCount, rate) - samplesAt(outFrame, rate),
      audio: probe.hasAudio ? 'source' : 'silence',
      inputIndex: 0,
    });
    outFrame += frameCount;
  }
  if (planned.length === 0) throw new RenderPlanError('nothing to render: every segment is shorter than a frame');
  return planned;
}
