// The render's sound: each segment cut to exactly its samples and faded at real cuts,
// then, after the cuts, in the spec's order: volume, noise reduction, censorship, the
// assets' ducking and their mix.
import type { RenderInput } from '../../../../crds/contract/programs/render.ts';
import { secondsText } from '../media/ffmpeg-text.ts';
import { OUTPUT_SAMPLE_RATE_HZ, type PlannedSegment } from './frame-grid.ts';

/** The fade in and out at every audio cut (full and smart render): long enough that no cut clicks, too short to hear. */
export const CUT_FADE_SECONDS = 0.01;
/** The bleep over censored words: 1 kHz at the sine source's own level (−18 dBFS). */
const BLEEP_FREQUENCY_HZ = 1000;
/** Audio filters switched on and off in time (censor, duck) act per frame: 10 ms frames keep their edges exact enough. */
const TIMED_AUDIO_FRAME_SAMPLES = 480;
/** Every sound the render mixes, as the export carries it: 48 kHz stereo (float while it is worked on). */
export const OUTPUT_AUDIO_FORMAT = `aresample=${OUTPUT_SAMPLE_RATE_HZ},aformat=sample_fmts=fltp:sample_rates=${OUTPUT_SAMPLE_RATE_HZ}:channel_layouts=stereo`;

/** A stretch of the output, in ms. */
interface OutputRange {
  outStartMs: number;
  outEndMs: number;
}

/** The main sound at `gain` over these ranges (0 while an asset replaces it, lower while one ducks it). */
export interface MainSoundWindow {
  gain: number;
  ranges: OutputRange[];
}

/** `between(t,a,b)+…` for a set of output ranges (ms). */
function betweenAny(ranges: readonly OutputRange[]): string {
  return ranges.map((range) => `between(t,${secondsText(range.outStartMs / 1000)},${secondsText(range.outEndMs / 1000)})`).join('+');
}

/** Two segments that continue each other in the same source are no cut: no fade between them. */
const continues = (before: PlannedSegment | undefined, after: PlannedSegment | undefined): boolean =>
  before !== undefined && after !== undefined && before.sourceId === after.sourceId && Math.abs(before.sourceEndSeconds - after.sourceStartSeconds) < 1e-6;

/** Segment `index`'s sound filters: exactly its audioSamples (`offset`: source seconds at its input's time 0), faded at real cuts. */
export function segmentSound(segments: readonly PlannedSegment[], index: number, offset: number): string {
  const segment = segments[index] as PlannedSegment;
  const from = secondsText(segment.sourceStartSeconds - offset);
  const to = secondsText(segment.sourceEndSeconds - offset);
  const sound: string[] = [];
  const samples = segment.audioSamples;
  // A source a hair short is padded with silence, a long one cut: audio length is video length.
  if (segment.audio === 'source') sound.push(`atrim=start=${from}:end=${to}`, 'asetpts=PTS-STARTPTS', OUTPUT_AUDIO_FORMAT, `apad=whole_len=${samples}`);
  else sound.push(`anullsrc=r=${OUTPUT_SAMPLE_RATE_HZ}:cl=stereo`, 'aformat=sample_fmts=fltp');
  sound.push(`atrim=end_sample=${samples}`);
  const lengthSeconds = samples / OUTPUT_SAMPLE_RATE_HZ;
  const fade = Math.min(CUT_FADE_SECONDS, lengthSeconds / 4);
  if (segment.audio === 'source' && index > 0 && !continues(segments[index - 1], segment)) sound.push(`afade=t=in:d=${secondsText(fade)}`);
  if (segment.audio === 'source' && index < segments.length - 1 && !continues(segment, segments[index + 1])) {
    sound.push(`afade=t=out:st=${secondsText(lengthSeconds - fade)}:d=${secondsText(fade)}`);
  }
  return sound.join(',');
}

/**
 * The sound after the cuts, from the concat's [acat] to [aout]: volume, noise reduction,
 * censorship (muted, or a bleep mixed in), the assets' windows on the main sound, then
 * the bleep and the assets' sounds mixed at full level.
 */
export function mainSoundChains(input: RenderInput, assetSounds: readonly string[], mainWindows: readonly MainSoundWindow[], totalSamples: number): string[] {
  const { settings } = input;
  const { audio } = settings;
  const chains: string[] = [];
  const sound: string[] = [];
  if (audio.mainVolumePercent !== 100) sound.push(`volume=${audio.mainVolumePercent / 100}`);
  if (audio.noiseReduction) sound.push(`afftdn=nf=${audio.noiseFloorDb}`);
  const censored = settings.censorship === 'none' ? [] : input.censored.filter((range) => range.outEndMs > range.outStartMs);
  if (censored.length > 0 || mainWindows.length > 0) sound.push(`asetnsamples=n=${TIMED_AUDIO_FRAME_SAMPLES}:p=0`);
  if (censored.length > 0) sound.push(`volume=0:enable='${betweenAny(censored)}'`);
  for (const window of mainWindows) sound.push(`volume=${window.gain}:enable='${betweenAny(window.ranges)}'`);
  const mixed = [...(settings.censorship === 'bleep' && censored.length > 0 ? ['[bleep]'] : []), ...assetSounds];
  const mainLabel = mixed.length > 0 ? 'amain' : 'aout';
  chains.push(`[acat]${sound.length > 0 ? sound.join(',') : 'anull'}[${mainLabel}]`);
  if (settings.censorship === 'bleep' && censored.length > 0) {
    chains.push(
      `sine=frequency=${BLEEP_FREQUENCY_HZ}:sample_rate=${OUTPUT_SAMPLE_RATE_HZ}:samples_per_frame=${TIMED_AUDIO_FRAME_SAMPLES},${OUTPUT_AUDIO_FORMAT},` +
        `atrim=end_sample=${totalSamples},volume=0:enable='not(${betweenAny(censored)})'[bleep]`,
    );
  }
  if (mixed.length > 0) {
    chains.push(`[amain]${mixed.join('')}amix=inputs=${mixed.length + 1}:duration=first:dropout_transition=0:normalize=0,atrim=end_sample=${totalSamples}[aout]`);
  }
  return chains;
}
