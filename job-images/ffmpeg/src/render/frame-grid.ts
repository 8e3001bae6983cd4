// The render's first stage: the output's frame grid (the rate the editing core chose) and
// each segment on it — the frames the core placed, read by the contract's one frame rule
// (crds/contract/editing/frame-grid.ts), and their exact samples.
import { frameAt, isOutputRate, outputRateOf } from '../../../../crds/contract/editing/frame-grid.ts';
import type { RenderInput } from '../../../../crds/contract/programs/render.ts';
import { ENCODER_PRESETS } from '../media/encode.ts';
import type { MediaProbe, Rational } from '../media/probe.ts';
import { RenderPlanError } from './render-plan-error.ts';

export const OUTPUT_SAMPLE_RATE_HZ = ENCODER_PRESETS.render.audio.sampleRateHz;

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

/** The frame k of the output's grid starts at k × den / num seconds. */
export const frameTime = (frame: number, rate: Rational): number => (frame * rate.den) / rate.num;
/** The frame edge a request's millisecond time names (the contract's rule: the nearest edge); the smart render reads ranges by it too. */
export const frameOfMs = (ms: number, rate: Rational): number => frameAt(ms, rate);
export const samplesAt = (frame: number, rate: Rational): number => Math.round((frame * OUTPUT_SAMPLE_RATE_HZ * rate.den) / rate.num);

/**
 * The output's frame rate: the one the editing core chose (the request's). A request from
 * before the core chose it: the main footage's probed rate by the same rule (its stated
 * rate, else its average one, when sane; else 30).
 */
export function outputFrameRate(input: RenderInput, probes: ReadonlyMap<string, MediaProbe>): Rational {
  if (input.frameRate) return input.frameRate;
  const main = input.segments.find((segment) => !segment.inserted) ?? input.segments[0];
  const probe = main ? probes.get(main.sourceId) : undefined;
  const video = probe?.kind === 'video' ? probe.video : undefined;
  return outputRateOf([video?.frameRate, video?.averageFrameRate].find(isOutputRate));
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
    const first = frameOfMs(segment.sourceStartMs, rate);
    const last = frameOfMs(Math.min(segment.sourceEndMs, limit * 1000), rate);
    // The core never places a segment of no frame; one that names none (an older request) is left out.
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
