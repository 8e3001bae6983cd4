// The smart render's plan, as data: which frames of each kept segment are copied and
// which are re-encoded, worked out from the source's packets alone.
import type { Rational } from '../media/probe.ts';
import { frameOfMs } from './frame-grid.ts';

/** One packet of the source's picture, in decode order; times in the stream's time base. */
export interface SourcePacket {
  pts: number;
  dts: number;
  keyframe: boolean;
  duration: number;
}

/** The source's picture as the smart render sees it: every packet, without decoding. */
export interface SourcePicture {
  timeBase: Rational;
  /** The container's start in stream ticks: ffmpeg (and so the full render) counts time from it. */
  startTicks: number;
  /** Decode order. */
  packets: readonly SourcePacket[];
}

/** A kept stretch of the source, in milliseconds from the container's start; [start, end). */
export interface KeptRange {
  sourceStartMs: number;
  sourceEndMs: number;
}

/**
 * A run of output frames made one way. Times are source stream ticks: `startPts` is the
 * first frame's, `endPts` the time just past the last one (the next frame's start).
 */
export interface SmartPart {
  kind: 'encode' | 'copy';
  segment: number;
  startPts: number;
  endPts: number;
  frames: number;
  /** The keyframe reading starts at: the copied GOP's first, or the one an encode decodes from. */
  keyframePts: number;
  /** Frames decoded only to reach `startPts` (encode parts). */
  leadInFrames: number;
}

interface SmartSegment {
  startPts: number;
  endPts: number;
  frames: number;
}

export interface SmartPlan {
  segments: SmartSegment[];
  parts: SmartPart[];
  frameCount: number;
  encodedFrames: number;
  copiedFrames: number;
  leadInFrames: number;
  /** Output length in source ticks (the kept frames' durations, end to end). */
  durationTicks: number;
  /** Frames the decoder holds back to reorder (B-frames), measured from the timestamps. */
  reorderDelay: number;
  /** Every frame starts on the frame rate's grid (constant rate): the full render, which makes that grid, keeps the same frames. */
  onFrameGrid: boolean;
}

/** Raised when the smart path cannot apply or will not pay: the caller renders in full and logs `reason`. */
export class SmartRenderNotWorthIt extends Error {
  readonly reason: string;

  constructor(reason: string) {
    super(`smart render not used: ${reason}`);
    this.name = 'SmartRenderNotWorthIt';
    this.reason = reason;
  }
}

/** Deepest B-frame reordering x264 can reproduce (b-pyramid): a deeper source would break DTS order at a join. */
const MAX_REORDER_DELAY = 2;
/** Above this share of re-encoding work, copying saves too little to be worth the seams. */
const MAX_ENCODED_SHARE = 0.5;
/** Decoding a frame only to reach a cut costs about this much of decoding and encoding one. */
const LEAD_IN_COST = 0.3;

interface Frame {
  pts: number;
  /** The next frame's pts (the last frame: its own pts plus its duration). */
  endPts: number;
  /** Its packet's place in decode order. */
  decodeIndex: number;
}

/** Microseconds from the container's start (the timeline ffmpeg's -ss and the render's ranges use), rounded as ffmpeg rescales. */
export function ticksToMicros(picture: SourcePicture, pts: number): number {
  return Math.round(((pts - picture.startTicks) * 1e6 * picture.timeBase.num) / picture.timeBase.den);
}

export function ticksToSeconds(picture: SourcePicture, ticks: number): number {
  return (ticks * picture.timeBase.num) / picture.timeBase.den;
}

function framesInDisplayOrder(picture: SourcePicture): Frame[] {
  const frames = picture.packets
    .map((packet, decodeIndex) => ({ pts: packet.pts, endPts: packet.pts + Math.max(packet.duration, 0), decodeIndex }))
    .sort((a, b) => a.pts - b.pts);
  for (let index = 0; index + 1 < frames.length; index += 1) {
    const frame = frames[index] as Frame;
    frame.endPts = (frames[index + 1] as Frame).pts;
  }
  return frames;
}

/**
 * Where a copy may start and where it may end, from the timestamps alone. A copy reads
 * the packets from one place in decode order to another, so it holds exactly the frames
 * of a stretch of display time when every packet before each of its two places shows
 * before every packet from there on. Such a split is at the earliest display time from
 * there on. A copy starts only at a split whose packet is a keyframe shown first (a
 * closed GOP: an open GOP's leading pictures would need the previous GOP), and it may end
 * at any split: with B-frames one falls after each reference frame and the B-frames shown
 * before it, so the frames before the split decode without any packet after it, and only
 * the few after it are re-encoded.
 */
function copyBoundaries(picture: SourcePicture): { starts: Set<number>; ends: Set<number> } {
  const { packets } = picture;
  const suffixMin: number[] = new Array<number>(packets.length + 1).fill(Number.POSITIVE_INFINITY);
  for (let index = packets.length - 1; index >= 0; index -= 1) suffixMin[index] = Math.min(packets[index]?.pts ?? Infinity, suffixMin[index + 1] ?? Infinity);
  const starts = new Set<number>();
  const ends = new Set<number>();
  let prefixMax = Number.NEGATIVE_INFINITY;
  packets.forEach((packet, index) => {
    const split = suffixMin[index] ?? Infinity;
    if (prefixMax < split) {
      ends.add(split);
      if (packet.keyframe && split === packet.pts) starts.add(split);
    }
    prefixMax = Math.max(prefixMax, packet.pts);
  });
  return { starts, ends };
}

/** How far from its place on the grid a frame may start: the full render's half-frame trim bounds still pick the same frame. */
const GRID_TOLERANCE_FRAMES = 0.25;

/** Frame i starts at i / rate from the container's start (within the tolerance; 1/600 time bases round 29.97 fps a tick either way). */
function isOnFrameGrid(picture: SourcePicture, frames: readonly Frame[], rate: Rational): boolean {
  return frames.every((frame, index) => Math.abs((ticksToMicros(picture, frame.pts) * rate.num) / (rate.den * 1e6) - index) < GRID_TOLERANCE_FRAMES);
}

/** How many frames decode order runs ahead of display: the first frame's pts minus the first dts, in frames. */
function measureReorderDelay(picture: SourcePicture, frames: readonly Frame[]): number {
  const first = picture.packets[0];
  const firstFrame = frames[0];
  if (!first || !firstFrame) return 0;
  const frameTicks = firstFrame.endPts - firstFrame.pts;
  return frameTicks > 0 ? Math.round((firstFrame.pts - first.dts) / frameTicks) : 0;
}

/**
 * Splits each kept range into a re-encoded head (up to the first clean keyframe in it),
 * copied frames from there to the last split of decode order in it (whole GOPs, then the
 * last GOP's frames up to that split), and a re-encoded tail of the few frames after the
 * split; a range holding no clean keyframe is re-encoded as one part. Frame i is kept when
 * its time on the frame-rate grid, t = i / rate, satisfies start ≤ t < end: the full
 * render's rule, so both paths keep the same frames (a source off that grid is refused,
 * see onFrameGrid).
 */
export function planSmartRender(picture: SourcePicture, ranges: readonly KeptRange[], frameRate: Rational): SmartPlan {
  const frames = framesInDisplayOrder(picture);
  // A segment's ends snap to the grid as in the full render, so both keep the same frames.
  const kept = ranges.map((range) => frames.slice(frameOfMs(range.sourceStartMs, frameRate), frameOfMs(range.sourceEndMs, frameRate)));
  const boundaries = copyBoundaries(picture);
  const lastFrame = frames.at(-1);
  const streamEnd = lastFrame ? lastFrame.endPts : 0;
  const keyframes = frames.filter((frame) => picture.packets[frame.decodeIndex]?.keyframe).map((frame) => frame.pts);
  const segments: SmartSegment[] = [];
  const parts: SmartPart[] = [];
  const framesBetween = (from: number, to: number): number => frames.filter((frame) => frame.pts >= from && frame.pts < to).length;
  /** The keyframe an encode of frames from `pts` decodes from: the last one at or before it. */
  const decodeStart = (pts: number): number => keyframes.filter((key) => key <= pts).at(-1) ?? frames[0]?.pts ?? 0;

  // Ranges that continue each other in the source are one stretch: no seam, no fade between them.
  const stretches: SmartSegment[] = [];
  for (const keptFrames of kept) {
    const first = keptFrames[0];
    const last = keptFrames.at(-1);
    if (!first || !last) continue;
    const previous = stretches.at(-1);
    if (previous && previous.endPts === first.pts) Object.assign(previous, { endPts: last.endPts, frames: previous.frames + keptFrames.length });
    else stretches.push({ startPts: first.pts, endPts: last.endPts, frames: keptFrames.length });
  }

  for (const stretch of stretches) {
    const segment = segments.length;
    const start = stretch.startPts;
    const end = stretch.endPts;
    segments.push(stretch);

    // The end of the stream is a split too: a range running to it copies its last GOP whole.
    const copyStarts = [...boundaries.starts].filter((pts) => pts >= start && pts < end);
    const copyEnds = [...boundaries.ends].filter((pts) => pts > start && pts <= end);
    if (end === streamEnd) copyEnds.push(streamEnd);
    const copyFrom = Math.min(...copyStarts);
    const copyTo = Math.max(...copyEnds);
    const encode = (from: number, to: number): void => {
      const keyframe = decodeStart(from);
      parts.push({ kind: 'encode', segment, startPts: from, endPts: to, frames: framesBetween(from, to), keyframePts: keyframe, leadInFrames: framesBetween(keyframe, from) });
    };
    if (copyStarts.length === 0 || copyFrom >= copyTo) {
      encode(start, end);
      continue;
    }
    if (start < copyFrom) encode(start, copyFrom);
    parts.push({ kind: 'copy', segment, startPts: copyFrom, endPts: copyTo, frames: framesBetween(copyFrom, copyTo), keyframePts: copyFrom, leadInFrames: 0 });
    if (copyTo < end) encode(copyTo, end);
  }

  const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);
  return {
    segments,
    parts,
    frameCount: sum(segments.map((segment) => segment.frames)),
    encodedFrames: sum(parts.filter((part) => part.kind === 'encode').map((part) => part.frames)),
    copiedFrames: sum(parts.filter((part) => part.kind === 'copy').map((part) => part.frames)),
    leadInFrames: sum(parts.map((part) => part.leadInFrames)),
    durationTicks: sum(segments.map((segment) => segment.endPts - segment.startPts)),
    reorderDelay: measureReorderDelay(picture, frames),
    onFrameGrid: isOnFrameGrid(picture, frames, frameRate),
  };
}

/** Why the plan cannot be carried out, or would save too little; null when the smart path pays. */
export function smartPlanRefusal(plan: SmartPlan): string | null {
  if (plan.frameCount === 0) return 'the kept ranges hold no frame of the source';
  if (!plan.onFrameGrid) return 'the source has a variable frame rate (its frames are not evenly spaced), which only the full render makes constant';
  if (plan.reorderDelay > MAX_REORDER_DELAY) return `the source reorders ${plan.reorderDelay} frames (B-frames), deeper than a re-encoded seam can match (${MAX_REORDER_DELAY})`;
  if (plan.copiedFrames === 0) return 'no kept range holds a keyframe to copy from, so nothing could be copied';
  const work = plan.encodedFrames + LEAD_IN_COST * plan.leadInFrames;
  const share = work / plan.frameCount;
  if (share > MAX_ENCODED_SHARE) {
    return `re-encoding the partial GOPs would be ${Math.round(share * 100)}% of a full render's work (over ${MAX_ENCODED_SHARE * 100}%): the kept ranges are too short for the source's keyframe interval`;
  }
  return null;
}
