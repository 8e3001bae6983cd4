// The full render as data: a RenderInput and the probes of its sources → the output's
// frame grid, every segment's exact frames and samples, the ffmpeg inputs, the one
// -filter_complex graph and the encoder and loudness arguments. Nothing here runs
// anything; the render program executes what this says.
import { outputFrameSize } from '../../../../crds/contract/programs/render.ts';
import type { RenderAsset, RenderInput, RenderSettings } from '../../../../crds/contract/programs/render.ts';
import { audioEncoderArgs, ENCODER_PRESETS, even, evenDown, faststartMp4, videoEncoderArgs } from '../media/encode.ts';
import { ffmpegColour, filterPath, rateText, secondsText } from '../media/ffmpeg-text.ts';
import type { MediaProbe, Rational } from '../media/probe.ts';
import { commonArgs, commonArgsAt } from '../media/tools.ts';
import { captionsAss } from './captions-ass.ts';

export const OUTPUT_SAMPLE_RATE_HZ = ENCODER_PRESETS.render.audio.sampleRateHz;
/** When the main footage's frame rate is unknown (or absurd, as in some variable-rate phone files). */
export const DEFAULT_FRAME_RATE: Rational = { num: 30, den: 1 };
export const MAX_FRAME_RATE = 60;
/** The fade in and out at every audio cut: long enough that no cut clicks, too short to hear. */
export const CUT_FADE_SECONDS = 0.01;
/** Ducking lowers the main audio by 12 dB while an asset plays. */
export const DUCK_GAIN = 0.25;
/** The bleep over censored words: 1 kHz at the sine source's own level (−18 dBFS). */
export const BLEEP_FREQUENCY_HZ = 1000;
/** Audio filters switched on and off in time (censor, duck) act per frame: 10 ms frames keep their edges exact enough. */
export const TIMED_AUDIO_FRAME_SAMPLES = 480;
/** Overlays keep this fraction of the frame's short side from the edges they are placed against. */
export const OVERLAY_MARGIN_FRACTION = 0.03;
export const WATERMARK = { text: 'Cutroom', font: 'DejaVuSans-Bold.ttf', heightFraction: 0.045, opacity: 0.55 } as const;
/** Loudness range and true-peak ceiling of the second loudnorm pass (EBU R128 streaming practice). */
export const LOUDNESS = { loudnessRange: 11, truePeakDb: -1.5 } as const;
/**
 * Kept stretches of a source this close together (in order) are read in one pass, the
 * gap decoded and dropped; farther apart, the next is its own input, reached by seeking.
 * One pass per source keeps ffmpeg's open decoders (and memory) few when an export has
 * dozens of cuts; a seek costs decoding from the keyframe before it anyway.
 */
export const MAX_DECODED_GAP_SECONDS = 10;
/** How far past a segment's end its input reads (the trims cut exactly; this only bounds decoding). */
const INPUT_END_MARGIN_SECONDS = 0.1;
/** An intermediate render loses nothing the final AAC keeps. */
const INTERMEDIATE_AUDIO = ['-c:a', 'pcm_f32le', '-f', 'wav'];

/** Paths the plan names; the program owns the files. */
export interface RenderFiles {
  /** Local path of each source, by source id. */
  sources: ReadonlyMap<string, string>;
  /** Where the captions' ASS script is written (when there are captions). */
  captions: string;
  /** The shipped fonts (fonts-dejavu-core). */
  fontsDir: string;
  output: string;
  /** With loudness normalisation: the picture and the sound rendered apart, then measured and muxed. */
  intermediateVideo: string;
  intermediateAudio: string;
}

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

export interface LoudnessPlan {
  targetLufs: number;
  loudnessRange: number;
  truePeakDb: number;
}

export interface RenderPlan {
  width: number;
  height: number;
  frameRate: Rational;
  frameCount: number;
  durationSeconds: number;
  audioSamples: number;
  segments: PlannedSegment[];
  /** Every ffmpeg input, in order, with its own options (-ss/-t/-loop) and -i. */
  inputs: string[][];
  filterGraph: string;
  /** The ASS script to write to files.captions; null without captions. */
  captionsScript: string | null;
  /** Null: no normalisation, the render pass writes the final MP4. */
  loudness: LoudnessPlan | null;
  /** The render pass: the final MP4, or (with loudness) the intermediate picture and sound. */
  renderArgs: string[];
}

/** A plan that cannot be made (e.g. a segment names a source that was not given). */
export class RenderPlanError extends Error {
  override name = 'RenderPlanError';
}

// ---------------------------------------------------------------------------- numbers

const rateValue = (rate: Rational): number => rate.num / rate.den;
/** The frame k of the output's grid starts at k × den / num seconds. */
const frameTime = (frame: number, rate: Rational): number => (frame * rate.den) / rate.num;
/** The first frame of the grid at or after `seconds` (a hair of tolerance for ms rounding). */
const frameAtOrAfter = (seconds: number, rate: Rational): number => Math.max(0, Math.ceil((seconds * rate.num) / rate.den - 1e-6));
const samplesAt = (frame: number, rate: Rational): number => Math.round((frame * OUTPUT_SAMPLE_RATE_HZ * rate.den) / rate.num);

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
function playsAtRate(probe: MediaProbe, rate: Rational): boolean {
  return sameRate(probe.video?.frameRate ?? null, rate) && sameRate(probe.video?.averageFrameRate ?? null, rate);
}

/** A work file as a filter option value; a plan cannot name one whose path holds a quote. */
function fileOption(path: string): string {
  const quoted = filterPath(path);
  if (quoted === null) throw new RenderPlanError(`a path with a quote cannot be passed to a filter: ${path}`);
  return quoted;
}

/** `between(t,a,b)+…` for a set of output ranges (ms). */
function betweenAny(ranges: readonly { outStartMs: number; outEndMs: number }[]): string {
  return ranges.map((range) => `between(t,${secondsText(range.outStartMs / 1000)},${secondsText(range.outEndMs / 1000)})`).join('+');
}

// ---------------------------------------------------------------------------- segments

interface Geometry {
  /** The decoded frame's size (after ffmpeg's autorotation) and the size a viewer sees. */
  frame: { width: number; height: number };
  display: { width: number; height: number };
}

function geometryOf(probe: MediaProbe): Geometry {
  const display = { width: probe.width ?? 0, height: probe.height ?? 0 };
  const video = probe.video;
  if (!video || !video.storedWidth || !video.storedHeight) return { frame: display, display };
  const quarterTurns = Math.round(video.rotationDeg / 90);
  const frame = quarterTurns % 2 === 0 ? { width: video.storedWidth, height: video.storedHeight } : { width: video.storedHeight, height: video.storedWidth };
  return { frame, display };
}

/** Fit inside the output, centred, the rest in the letterbox colour. */
export function letterboxFilters(geometry: Geometry, output: { width: number; height: number }, colour: string): string[] {
  const { display } = geometry;
  const scale = Math.min(output.width / display.width, output.height / display.height);
  const width = Math.min(output.width, even(display.width * scale));
  const height = Math.min(output.height, even(display.height * scale));
  const filters = [`scale=${width}:${height}`, 'setsar=1'];
  if (width !== output.width || height !== output.height) {
    filters.push(`pad=${output.width}:${output.height}:${Math.floor((output.width - width) / 2)}:${Math.floor((output.height - height) / 2)}:color=${ffmpegColour(colour)}`);
  }
  return filters;
}

/**
 * A draft's crop: a window of the output's aspect, the largest that fits the source
 * divided by the zoom, moved by the pan (−1 = against the left/top edge, 1 = the right/bottom),
 * then scaled to fill the output (no letterbox: the crop chose what fills it).
 */
export function cropFilters(geometry: Geometry, output: { width: number; height: number }, crop: NonNullable<RenderSettings['crop']>): string[] {
  const { frame, display } = geometry;
  const outputAspect = output.width / output.height;
  const fitsWidth = display.width / display.height <= outputAspect;
  const baseWidth = fitsWidth ? display.width : display.height * outputAspect;
  const baseHeight = fitsWidth ? display.width / outputAspect : display.height;
  // Work in decoded pixels: a non-square-pixel source is wider on screen than in memory.
  const pixelsPerDisplay = frame.width / display.width;
  const width = Math.min(frame.width, evenDown((baseWidth / crop.zoom) * pixelsPerDisplay));
  const height = Math.min(frame.height, evenDown(baseHeight / crop.zoom));
  const x = Math.round(((frame.width - width) / 2) * (1 + crop.panX));
  const y = Math.round(((frame.height - height) / 2) * (1 + crop.panY));
  return [`crop=${width}:${height}:${x}:${y}`, `scale=${output.width}:${output.height}`, 'setsar=1'];
}

interface SegmentInput {
  args: string[];
  /** Seconds of the source at the input's time 0 (its -ss). */
  offsetSeconds: number;
}

/** Input seeking decodes only the stretch a segment plays; ffmpeg's accurate seek drops what comes before. */
function segmentInput(kind: PlannedSegment['kind'], path: string, start: number, end: number, rate: Rational): SegmentInput {
  const halfFrame = frameTime(0.5, rate);
  if (kind === 'image') {
    return { args: ['-loop', '1', '-framerate', rateText(rate), '-t', secondsText(end - start + halfFrame), '-i', path], offsetSeconds: start };
  }
  const seek = Math.max(0, Math.floor((start - halfFrame) * 1000) / 1000);
  // A little past the end: the trims below cut exactly, the input only stops the reading.
  const length = Math.round((end - seek + INPUT_END_MARGIN_SECONDS) * 1000) / 1000;
  return { args: [...(seek > 0 ? ['-ss', secondsText(seek)] : []), '-t', secondsText(length), '-i', path], offsetSeconds: seek };
}

function planSegments(input: RenderInput, probes: ReadonlyMap<string, MediaProbe>, rate: Rational): PlannedSegment[] {
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

/** One ffmpeg input: a stretch of a source that one or more consecutive segments play from. */
interface SourceRead {
  sourceId: string;
  kind: PlannedSegment['kind'];
  startSeconds: number;
  endSeconds: number;
  segments: PlannedSegment[];
}

/** Groups consecutive segments moving forward through one source into reads; sets each segment's input. */
function planReads(segments: readonly PlannedSegment[]): SourceRead[] {
  const reads: SourceRead[] = [];
  for (const segment of segments) {
    const last = reads.at(-1);
    const gap = last ? segment.sourceStartSeconds - last.endSeconds : Number.NaN;
    // a still image loops from its own input; going backwards in a source needs a new read
    if (last && segment.kind !== 'image' && last.sourceId === segment.sourceId && gap >= -1e-9 && gap <= MAX_DECODED_GAP_SECONDS) {
      last.endSeconds = segment.sourceEndSeconds;
      last.segments.push(segment);
    } else {
      reads.push({ sourceId: segment.sourceId, kind: segment.kind, startSeconds: segment.sourceStartSeconds, endSeconds: segment.sourceEndSeconds, segments: [segment] });
    }
    segment.inputIndex = reads.length - 1;
  }
  return reads;
}

/** Two segments that continue each other in the same source are no cut: no fade between them. */
const continues = (before: PlannedSegment | undefined, after: PlannedSegment | undefined): boolean =>
  before !== undefined && after !== undefined && before.sourceId === after.sourceId && Math.abs(before.sourceEndSeconds - after.sourceStartSeconds) < 1e-6;

function audioFormat(): string {
  return `aresample=${OUTPUT_SAMPLE_RATE_HZ},aformat=sample_fmts=fltp:sample_rates=${OUTPUT_SAMPLE_RATE_HZ}:channel_layouts=stereo`;
}

// ---------------------------------------------------------------------------- assets

function overlayPosition(asset: RenderAsset, margin: number): { x: string; y: string } {
  switch (asset.position) {
    case 'top_left':
      return { x: `${margin}`, y: `${margin}` };
    case 'top_right':
      return { x: `W-w-${margin}`, y: `${margin}` };
    case 'bottom_left':
      return { x: `${margin}`, y: `H-h-${margin}` };
    case 'bottom_right':
      return { x: `W-w-${margin}`, y: `H-h-${margin}` };
    case 'center':
      return { x: '(W-w)/2', y: '(H-h)/2' };
    case 'custom':
      return { x: `W*${asset.x}-w/2`, y: `H*${asset.y}-h/2` };
  }
}

/** The asset's picture: from its offset, on the output's clock from its start, shaped as its edit says. */
function assetPictureChain(asset: RenderAsset, geometry: Geometry, output: { width: number; height: number }, settings: RenderSettings): string[] {
  const start = secondsText(asset.outStartMs / 1000);
  const filters = ['setpts=PTS-STARTPTS+' + start + '/TB'];
  if (asset.visualMode === 'replace') return [...filters, ...letterboxFilters(geometry, output, settings.letterboxColor), 'format=yuv420p'];
  const width = even((output.width * asset.sizePercent) / 100);
  filters.push(`scale=${width}:-2`, 'setsar=1');
  if (asset.flipH) filters.push('hflip');
  if (asset.flipV) filters.push('vflip');
  filters.push('format=rgba');
  if (asset.rotationDeg % 360 !== 0) {
    const radians = String(Math.round(((asset.rotationDeg * Math.PI) / 180) * 1e6) / 1e6);
    filters.push(`rotate=${radians}:ow=rotw(${radians}):oh=roth(${radians}):c=none`);
  }
  if (asset.opacityPercent < 100) filters.push(`colorchannelmixer=aa=${asset.opacityPercent / 100}`);
  return filters;
}

// ---------------------------------------------------------------------------- the plan

/** What the api and the program agree on for every input; the render plan as data. */
export function planRender(input: RenderInput, probes: ReadonlyMap<string, MediaProbe>, files: RenderFiles): RenderPlan {
  const { settings } = input;
  const output = outputFrameSize(settings.resolution, settings.aspectRatio);
  const rate = outputFrameRate(input, probes);
  const segments = planSegments(input, probes, rate);
  const frameCount = segments.reduce((sum, segment) => sum + segment.frameCount, 0);
  const durationSeconds = frameTime(frameCount, rate);
  const totalSamples = samplesAt(frameCount, rate);
  const pathOf = (sourceId: string): string => {
    const path = files.sources.get(sourceId);
    if (!path) throw new RenderPlanError(`no local file for source ${sourceId}`);
    return path;
  };

  const inputs: string[][] = [];
  const chains: string[] = [];
  const concatPads: string[] = [];

  // Fitting a picture to the output (crop or letterbox) is done once after the concat when every
  // segment needs the same; only mixed sources or inserts shape each segment before it.
  const shapeFilters = (segment: PlannedSegment): string[] => {
    const geometry = geometryOf(probes.get(segment.sourceId) as MediaProbe);
    const crop = segment.inserted ? null : settings.crop;
    return crop ? cropFilters(geometry, output, crop) : letterboxFilters(geometry, output, settings.letterboxColor);
  };
  // concat needs equal frames on its inputs, so the shape is shared only by sources of one size
  const shapeKey = (segment: PlannedSegment): string => {
    if (segment.kind === 'audio') return 'none';
    const { frame } = geometryOf(probes.get(segment.sourceId) as MediaProbe);
    return `${frame.width}x${frame.height} ${shapeFilters(segment).join(',')}`;
  };
  const shapes = new Set(segments.map(shapeKey));
  const [onlyShape] = shapes;
  const sharedShape = shapes.size === 1 && onlyShape !== 'none' && segments[0] ? shapeFilters(segments[0]).join(',') : null;

  // Each read is one input; a read several segments share is split, each branch trimmed to its segment.
  const reads = planReads(segments);
  const readOffsets: number[] = [];
  const pads = new Map<PlannedSegment, { video: string; audio: string }>();
  reads.forEach((read, inputIndex) => {
    const source = segmentInput(read.kind, pathOf(read.sourceId), read.startSeconds, read.endSeconds, rate);
    inputs.push(source.args);
    readOffsets.push(source.offsetSeconds);
    const count = read.segments.length;
    const hasPicture = read.kind !== 'audio';
    const hasSound = read.segments[0]?.audio === 'source';
    if (count > 1 && hasPicture) chains.push(`[${inputIndex}:v:0]split=${count}${read.segments.map((_, branch) => `[in${inputIndex}v${branch}]`).join('')}`);
    if (count > 1 && hasSound) chains.push(`[${inputIndex}:a:0]asplit=${count}${read.segments.map((_, branch) => `[in${inputIndex}a${branch}]`).join('')}`);
    read.segments.forEach((segment, branch) => {
      pads.set(segment, {
        video: !hasPicture ? '' : count > 1 ? `[in${inputIndex}v${branch}]` : `[${inputIndex}:v:0]`,
        audio: !hasSound ? '' : count > 1 ? `[in${inputIndex}a${branch}]` : `[${inputIndex}:a:0]`,
      });
    });
  });

  segments.forEach((segment, index) => {
    const probe = probes.get(segment.sourceId) as MediaProbe;
    const offset = readOffsets[segment.inputIndex] ?? 0;
    const pad = pads.get(segment) ?? { video: '', audio: '' };
    const from = secondsText(segment.sourceStartSeconds - offset);
    const to = secondsText(segment.sourceEndSeconds - offset);
    // Frame times sit on the grid; half-frame bounds select exactly those frames whatever the rounding.
    const halfFrame = frameTime(0.5, rate);
    const videoFrom = secondsText(Math.max(0, segment.sourceStartSeconds - offset - halfFrame));
    const videoTo = secondsText(segment.sourceEndSeconds - offset - halfFrame);

    // picture
    const picture: string[] = [];
    if (segment.kind === 'audio') {
      picture.push(`color=c=${ffmpegColour(settings.letterboxColor)}:s=${output.width}x${output.height}:r=${rateText(rate)}`, 'setsar=1');
    } else {
      if (segment.kind === 'video') picture.push(`trim=start=${videoFrom}:end=${videoTo}`, 'setpts=PTS-STARTPTS', `fps=${rateText(rate)}`);
      else picture.push('setpts=PTS-STARTPTS');
      if (!sharedShape) picture.push(...shapeFilters(segment));
    }
    // Exactly frameCount frames: a long stretch is cut; one resampled from another rate may come
    // out a frame short and repeats its last (tpad holds a frame, so only where it can happen).
    picture.push('format=yuv420p');
    if (segment.kind === 'video' && !playsAtRate(probe, rate)) picture.push(`tpad=stop_mode=clone:stop=${segment.frameCount}`);
    picture.push(`trim=end_frame=${segment.frameCount}`, 'setpts=PTS-STARTPTS');
    chains.push(`${pad.video}${picture.join(',')}[v${index}]`);

    // sound: exactly audioSamples, faded at real cuts
    const sound: string[] = [];
    const samples = segment.audioSamples;
    // A source a hair short is padded with silence, a long one cut: audio length is video length.
    if (segment.audio === 'source') sound.push(`atrim=start=${from}:end=${to}`, 'asetpts=PTS-STARTPTS', audioFormat(), `apad=whole_len=${samples}`);
    else sound.push(`anullsrc=r=${OUTPUT_SAMPLE_RATE_HZ}:cl=stereo`, 'aformat=sample_fmts=fltp');
    sound.push(`atrim=end_sample=${samples}`);
    const lengthSeconds = samples / OUTPUT_SAMPLE_RATE_HZ;
    const fade = Math.min(CUT_FADE_SECONDS, lengthSeconds / 4);
    if (segment.audio === 'source' && index > 0 && !continues(segments[index - 1], segment)) sound.push(`afade=t=in:d=${secondsText(fade)}`);
    if (segment.audio === 'source' && index < segments.length - 1 && !continues(segment, segments[index + 1])) {
      sound.push(`afade=t=out:st=${secondsText(lengthSeconds - fade)}:d=${secondsText(fade)}`);
    }
    chains.push(`${pad.audio}${sound.join(',')}[a${index}]`);
    concatPads.push(`[v${index}][a${index}]`);
  });
  // -------- picture after the cuts: flips, assets, captions, watermark (each step reads the one before)
  const pictureSteps: string[] = sharedShape ? [`${sharedShape},format=yuv420p`] : [];
  const flips = [settings.flipH ? 'hflip' : null, settings.flipV ? 'vflip' : null].filter((filter) => filter !== null);
  if (flips.length > 0) pictureSteps.push(flips.join(','));

  const margin = Math.round(Math.min(output.width, output.height) * OVERLAY_MARGIN_FRACTION);
  const assetSounds: string[] = [];
  const mainWindows: { gain: number; ranges: { outStartMs: number; outEndMs: number }[] }[] = [];
  input.assets.forEach((asset, index) => {
    const probe = probes.get(asset.sourceId);
    if (!probe) throw new RenderPlanError(`asset source ${asset.sourceId} was not probed`);
    const start = asset.outStartMs / 1000;
    const end = Math.min(asset.outEndMs / 1000, durationSeconds);
    if (end <= start) return;
    const span = end - start;
    const window = `between(t,${secondsText(start)},${secondsText(end)})`;
    const showsPicture = asset.visualMode !== 'none' && probe.kind !== 'audio';
    const playsSound = asset.audioMode !== 'mute' && probe.hasAudio;
    if (showsPicture || playsSound) {
      const inputIndex = inputs.length;
      inputs.push(
        probe.kind === 'image'
          ? ['-loop', '1', '-framerate', rateText(rate), '-t', secondsText(span), '-i', pathOf(asset.sourceId)]
          : [...(asset.assetOffsetMs > 0 ? ['-ss', secondsText(asset.assetOffsetMs / 1000)] : []), '-t', secondsText(span), '-i', pathOf(asset.sourceId)],
      );
      if (showsPicture) {
        chains.push(`[${inputIndex}:v:0]${assetPictureChain(asset, geometryOf(probe), output, settings).join(',')}[asset${index}v]`);
        const position = asset.visualMode === 'replace' ? { x: '0', y: '0' } : overlayPosition(asset, margin);
        pictureSteps.push(`[asset${index}v]overlay=x=${position.x}:y=${position.y}:eof_action=repeat:enable='${window}'`);
      }
      if (playsSound) {
        const delayMs = Math.round(start * 1000);
        chains.push(
          `[${inputIndex}:a:0]atrim=end=${secondsText(span)},asetpts=PTS-STARTPTS,${audioFormat()},volume=${asset.volumePercent / 100},` +
            `adelay=delays=${delayMs}:all=1[asset${index}a]`,
        );
        assetSounds.push(`[asset${index}a]`);
      }
    }
    const range = { outStartMs: asset.outStartMs, outEndMs: Math.round(end * 1000) };
    if (asset.audioMode === 'replace') mainWindows.push({ gain: 0, ranges: [range] });
    else if (asset.audioMode === 'duck' || asset.duckMain) mainWindows.push({ gain: DUCK_GAIN, ranges: [range] });
  });

  let captionsScript: string | null = null;
  if (settings.captions && input.captions.length > 0) {
    captionsScript = captionsAss({ ...output, style: settings.captions.style, fontSize: settings.captions.fontSize }, input.captions);
    pictureSteps.push(`ass=filename=${fileOption(files.captions)}:fontsdir=${fileOption(files.fontsDir)}`);
  }
  if (input.watermark) {
    const size = Math.round(output.height * WATERMARK.heightFraction);
    pictureSteps.push(
      `drawtext=fontfile=${fileOption(`${files.fontsDir}/${WATERMARK.font}`)}:text=${WATERMARK.text}:fontsize=${size}:` +
        `fontcolor=white@${WATERMARK.opacity}:shadowcolor=black@${WATERMARK.opacity / 2}:shadowx=2:shadowy=2:x=w-tw-${margin}:y=h-th-${margin}`,
    );
  }
  chains.push(`${concatPads.join('')}concat=n=${segments.length}:v=1:a=1[${pictureSteps.length > 0 ? 'vcat' : 'vout'}][acat]`);
  pictureSteps.forEach((step, index) => {
    chains.push(`[${index === 0 ? 'vcat' : `vpost${index - 1}`}]${step}[${index === pictureSteps.length - 1 ? 'vout' : `vpost${index}`}]`);
  });

  // -------- sound after the cuts, in the spec's order: volume, noise reduction, censorship, then the assets
  const sound: string[] = [];
  const { audio } = settings;
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
      `sine=frequency=${BLEEP_FREQUENCY_HZ}:sample_rate=${OUTPUT_SAMPLE_RATE_HZ}:samples_per_frame=${TIMED_AUDIO_FRAME_SAMPLES},${audioFormat()},` +
        `atrim=end_sample=${totalSamples},volume=0:enable='not(${betweenAny(censored)})'[bleep]`,
    );
  }
  if (mixed.length > 0) {
    chains.push(`[amain]${mixed.join('')}amix=inputs=${mixed.length + 1}:duration=first:dropout_transition=0:normalize=0,atrim=end_sample=${totalSamples}[aout]`);
  }

  const loudness: LoudnessPlan | null = audio.normalize ? { targetLufs: audio.targetLufs, ...LOUDNESS } : null;
  const filterGraph = chains.join(';');
  const preset = ENCODER_PRESETS.render;
  const picturesOut = ['-map', '[vout]', ...videoEncoderArgs(preset), '-r', rateText(rate)];
  const renderArgs = [
    ...commonArgs,
    ...inputs.flat(),
    '-filter_complex', filterGraph,
    ...(loudness
      ? [...picturesOut, '-an', '-f', 'mp4', files.intermediateVideo, '-map', '[aout]', ...INTERMEDIATE_AUDIO, files.intermediateAudio]
      : [...picturesOut, '-map', '[aout]', ...audioEncoderArgs(preset), ...faststartMp4(files.output)]),
  ];

  return {
    width: output.width,
    height: output.height,
    frameRate: rate,
    frameCount,
    durationSeconds,
    audioSamples: totalSamples,
    segments,
    inputs,
    filterGraph,
    captionsScript,
    loudness,
    renderArgs,
  };
}

// ---------------------------------------------------------------------------- loudness

/** What loudnorm's first pass measured (its print_format=json block). */
export interface LoudnessMeasurement {
  input_i: string;
  input_tp: string;
  input_lra: string;
  input_thresh: string;
  target_offset: string;
}

const loudnormTarget = (loudness: LoudnessPlan): string => `loudnorm=I=${loudness.targetLufs}:TP=${loudness.truePeakDb}:LRA=${loudness.loudnessRange}`;

/** First pass: measure the rendered sound (audio only, fast). loudnorm prints its JSON at info level. */
export function loudnessMeasureArgs(loudness: LoudnessPlan, audioPath: string): string[] {
  return [
    ...commonArgsAt('info'),
    '-i', audioPath,
    '-af', `${loudnormTarget(loudness)}:print_format=json`,
    '-f', 'null', '-',
  ];
}

/**
 * Second pass: the measured values and linear=true, so the whole programme gets one gain
 * (loudnorm falls back to dynamic on its own when that gain would break the true-peak
 * ceiling or the measured range exceeds the target's). The range target is widened to
 * the measured one so that only the peak can force dynamic mode. Then AAC, the picture
 * copied, index at the front.
 */
export function loudnessApplyArgs(
  loudness: LoudnessPlan,
  measured: LoudnessMeasurement | null,
  files: Pick<RenderFiles, 'intermediateVideo' | 'intermediateAudio' | 'output'>,
): string[] {
  // Silence measures -inf: there is nothing to normalise, the sound is only encoded and muxed.
  let filter = audioFormat();
  if (measured) {
    const range = Math.min(50, Math.max(loudness.loudnessRange, Math.ceil(Number(measured.input_lra) || 0)));
    filter =
      `loudnorm=I=${loudness.targetLufs}:TP=${loudness.truePeakDb}:LRA=${range}:` +
      `measured_I=${measured.input_i}:measured_TP=${measured.input_tp}:measured_LRA=${measured.input_lra}:measured_thresh=${measured.input_thresh}:` +
      `offset=${measured.target_offset}:linear=true:print_format=json,${filter}`;
  }
  return [
    ...commonArgsAt('info'),
    '-i', files.intermediateVideo,
    '-i', files.intermediateAudio,
    '-map', '0:v:0', '-map', '1:a:0',
    '-af', filter,
    '-c:v', 'copy',
    ...audioEncoderArgs(ENCODER_PRESETS.render),
    ...faststartMp4(files.output),
  ];
}

/** A first-pass report the second pass can use: every measured value a finite number (silence is -inf). */
export function usableMeasurement(report: Record<string, string> | null): LoudnessMeasurement | null {
  if (!report) return null;
  const fields = ['input_i', 'input_tp', 'input_lra', 'input_thresh', 'target_offset'] as const;
  if (!fields.every((field) => Number.isFinite(Number(report[field])))) return null;
  return { input_i: report.input_i ?? '', input_tp: report.input_tp ?? '', input_lra: report.input_lra ?? '', input_thresh: report.input_thresh ?? '', target_offset: report.target_offset ?? '' };
}

/** The last `{ … }` block loudnorm printed on stderr, parsed; null when there is none. */
export function parseLoudnormReport(stderrLines: readonly string[]): Record<string, string> | null {
  const start = stderrLines.findLastIndex((line) => line.trim() === '{');
  if (start < 0) return null;
  const end = stderrLines.findIndex((line, index) => index > start && line.trim() === '}');
  if (end < 0) return null;
  try {
    return JSON.parse(stderrLines.slice(start, end + 1).join('\n')) as Record<string, string>;
  } catch {
    return null;
  }
}
