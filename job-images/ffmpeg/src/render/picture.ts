// The render's picture: each segment cut to its frames and fitted to the output (crop or
// letterbox), then the steps over the whole output after the cuts, each reading the one
// before: the shared fit and the flips first, the assets' overlays (assets.ts), then
// captions and the watermark.
import type { RenderInput, RenderSettings } from '../../../../crds/contract/programs/render.ts';
import { even, evenDown } from '../media/encode.ts';
import { ffmpegColour, filterPath, rateText, secondsText } from '../media/ffmpeg-text.ts';
import type { MediaProbe, Rational } from '../media/probe.ts';
import { captionsAss } from './captions-ass.ts';
import { frameTime, playsAtRate, type PlannedSegment } from './frame-grid.ts';
import { RenderPlanError } from './render-plan-error.ts';

/** Overlays keep this fraction of the frame's short side from the edges they are placed against. */
const OVERLAY_MARGIN_FRACTION = 0.03;
const WATERMARK = { text: 'Cutroom', font: 'DejaVuSans-Bold.ttf', heightFraction: 0.045, opacity: 0.55 } as const;

export interface FrameSize {
  width: number;
  height: number;
}

export interface Geometry {
  /** The decoded frame's size (after ffmpeg's autorotation) and the size a viewer sees. */
  frame: FrameSize;
  display: FrameSize;
}

export function geometryOf(probe: MediaProbe): Geometry {
  const display = { width: probe.width ?? 0, height: probe.height ?? 0 };
  const video = probe.video;
  if (!video || !video.storedWidth || !video.storedHeight) return { frame: display, display };
  const quarterTurns = Math.round(video.rotationDeg / 90);
  const frame = quarterTurns % 2 === 0 ? { width: video.storedWidth, height: video.storedHeight } : { width: video.storedHeight, height: video.storedWidth };
  return { frame, display };
}

/** Fit inside the output, centred, the rest in the letterbox colour. */
export function letterboxFilters(geometry: Geometry, output: FrameSize, colour: string): string[] {
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
function cropFilters(geometry: Geometry, output: FrameSize, crop: NonNullable<RenderSettings['crop']>): string[] {
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

/** How each segment's picture is fitted to the output, and whether one fit serves them all. */
export interface PictureShape {
  filtersOf(segment: PlannedSegment): string[];
  /** The one fit, done once after the concat; null when segments are fitted each on its own. */
  shared: string | null;
}

/**
 * Fitting a picture to the output (crop or letterbox) is done once after the concat when every
 * segment needs the same; only mixed sources or inserts shape each segment before it.
 */
export function pictureShape(segments: readonly PlannedSegment[], probes: ReadonlyMap<string, MediaProbe>, output: FrameSize, settings: RenderSettings): PictureShape {
  const filtersOf = (segment: PlannedSegment): string[] => {
    const geometry = geometryOf(probes.get(segment.sourceId) as MediaProbe);
    const crop = segment.inserted ? null : settings.crop;
    return crop ? cropFilters(geometry, output, crop) : letterboxFilters(geometry, output, settings.letterboxColor);
  };
  // concat needs equal frames on its inputs, so the shape is shared only by sources of one size
  const shapeKey = (segment: PlannedSegment): string => {
    if (segment.kind === 'audio') return 'none';
    const { frame } = geometryOf(probes.get(segment.sourceId) as MediaProbe);
    return `${frame.width}x${frame.height} ${filtersOf(segment).join(',')}`;
  };
  const shapes = new Set(segments.map(shapeKey));
  const [onlyShape] = shapes;
  const shared = shapes.size === 1 && onlyShape !== 'none' && segments[0] ? filtersOf(segments[0]).join(',') : null;
  return { filtersOf, shared };
}

/** Where a segment's picture sits: the output's grid and size, its input's offset into the source, the shape. */
export interface SegmentPictureContext {
  rate: Rational;
  output: FrameSize;
  settings: RenderSettings;
  shape: PictureShape;
  /** Seconds of the source at the segment's input's time 0. */
  offset: number;
  /**
   * A still shared by several segments (fitted and in yuv420p before its split): the frame of its
   * looped read this segment starts at; each branch is only cut to its frames, counted (the loop's
   * time base is the frame rate itself, so half-frame times would round onto a frame edge).
   */
  stillFirstFrame?: number | null;
}

/** A segment's picture filters: exactly its frames, on the output's grid (an audio segment shows the letterbox colour). */
export function segmentPicture(segment: PlannedSegment, probe: MediaProbe, at: SegmentPictureContext): string {
  const { rate, output } = at;
  // Frame times sit on the grid; half-frame bounds select exactly those frames whatever the rounding.
  const halfFrame = frameTime(0.5, rate);
  const videoFrom = secondsText(Math.max(0, segment.sourceStartSeconds - at.offset - halfFrame));
  const videoTo = secondsText(segment.sourceEndSeconds - at.offset - halfFrame);
  const picture: string[] = [];
  if (segment.kind === 'audio') {
    picture.push(`color=c=${ffmpegColour(at.settings.letterboxColor)}:s=${output.width}x${output.height}:r=${rateText(rate)}`, 'setsar=1');
  } else if (segment.kind === 'image' && at.stillFirstFrame !== undefined && at.stillFirstFrame !== null) {
    picture.push(`trim=start_frame=${at.stillFirstFrame}:end_frame=${at.stillFirstFrame + segment.frameCount}`, 'setpts=PTS-STARTPTS');
  } else {
    if (segment.kind === 'video') picture.push(`trim=start=${videoFrom}:end=${videoTo}`, 'setpts=PTS-STARTPTS', `fps=${rateText(rate)}`);
    else picture.push('setpts=PTS-STARTPTS');
    if (!at.shape.shared) picture.push(...at.shape.filtersOf(segment));
  }
  // Exactly frameCount frames: a long stretch is cut; one resampled from another rate may come
  // out a frame short and repeats its last (tpad holds a frame, so only where it can happen).
  picture.push('format=yuv420p');
  if (segment.kind === 'video' && !playsAtRate(probe, rate)) picture.push(`tpad=stop_mode=clone:stop=${segment.frameCount}`);
  picture.push(`trim=end_frame=${segment.frameCount}`, 'setpts=PTS-STARTPTS');
  return picture.join(',');
}

/** The first steps after the cuts: the shared fit, then the flips (which apply to the whole output, inserts included). */
export function shapeAndFlipSteps(shape: PictureShape, settings: RenderSettings): string[] {
  const steps = shape.shared ? [`${shape.shared},format=yuv420p`] : [];
  const flips = [settings.flipH ? 'hflip' : null, settings.flipV ? 'vflip' : null].filter((filter) => filter !== null);
  if (flips.length > 0) steps.push(flips.join(','));
  return steps;
}

export const overlayMargin = (output: FrameSize): number => Math.round(Math.min(output.width, output.height) * OVERLAY_MARGIN_FRACTION);

/** A work file as a filter option value; a plan cannot name one whose path holds a quote. */
function fileOption(path: string): string {
  const quoted = filterPath(path);
  if (quoted === null) throw new RenderPlanError(`a path with a quote cannot be passed to a filter: ${path}`);
  return quoted;
}

/** The last steps: captions (an ASS script libass draws) and the watermark, after the flips so text stays readable. */
export function textSteps(input: RenderInput, output: FrameSize, files: { captions: string; fontsDir: string }): { steps: string[]; captionsScript: string | null } {
  const { settings } = input;
  const steps: string[] = [];
  let captionsScript: string | null = null;
  if (settings.captions && input.captions.length > 0) {
    captionsScript = captionsAss({ ...output, style: settings.captions.style, fontSize: settings.captions.fontSize }, input.captions);
    steps.push(`ass=filename=${fileOption(files.captions)}:fontsdir=${fileOption(files.fontsDir)}`);
  }
  if (input.watermark) {
    const size = Math.round(output.height * WATERMARK.heightFraction);
    const margin = overlayMargin(output);
    steps.push(
      `drawtext=fontfile=${fileOption(`${files.fontsDir}/${WATERMARK.font}`)}:text=${WATERMARK.text}:fontsize=${size}:` +
        `fontcolor=white@${WATERMARK.opacity}:shadowcolor=black@${WATERMARK.opacity / 2}:shadowx=2:shadowy=2:x=w-tw-${margin}:y=h-th-${margin}`,
    );
  }
  return { steps, captionsScript };
}

/** The steps as chains, from the concat's [vcat] to [vout]. */
export function pictureStepChains(steps: readonly string[]): string[] {
  return steps.map((step, index) => `[${index === 0 ? 'vcat' : `vpost${index - 1}`}]${step}[${index === steps.length - 1 ? 'vout' : `vpost${index}`}]`);
}
