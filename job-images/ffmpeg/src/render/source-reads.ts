// The render's second stage: which ffmpeg inputs the segments play from. Consecutive
// segments moving forward through one source share a read, split into one branch each.
import { rateText, secondsText } from '../media/ffmpeg-text.ts';
import type { Rational } from '../media/probe.ts';
import { frameTime, type PlannedSegment } from './frame-grid.ts';

/**
 * Kept stretches of a source this close together (in order) are read in one pass, the
 * gap decoded and dropped; farther apart, the next is its own input, reached by seeking.
 * One pass per source keeps ffmpeg's open decoders (and memory) few when an export has
 * dozens of cuts; a seek costs decoding from the keyframe before it anyway.
 */
const MAX_DECODED_GAP_SECONDS = 10;
/** How far past a segment's end its input reads (the trims cut exactly; this only bounds decoding). */
const INPUT_END_MARGIN_SECONDS = 0.1;

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

/** Where each segment's picture and sound come from: an input's own pads, or its branch of a split ('' when it has none). */
interface SegmentPads {
  video: string;
  audio: string;
}

export interface SourceReads {
  /** Every read's input options and -i, in input order. */
  inputs: string[][];
  /** Seconds of the source at each input's time 0, by input index. */
  offsets: number[];
  /** The split chains of the reads several segments share. */
  chains: string[];
  pads: Map<PlannedSegment, SegmentPads>;
}

/** Each read is one input; a read several segments share is split, each branch trimmed to its segment later. */
export function readSources(segments: readonly PlannedSegment[], rate: Rational, pathOf: (sourceId: string) => string): SourceReads {
  const reads = planReads(segments);
  const planned: SourceReads = { inputs: [], offsets: [], chains: [], pads: new Map() };
  reads.forEach((read, inputIndex) => {
    const source = segmentInput(read.kind, pathOf(read.sourceId), read.startSeconds, read.endSeconds, rate);
    planned.inputs.push(source.args);
    planned.offsets.push(source.offsetSeconds);
    const count = read.segments.length;
    const hasPicture = read.kind !== 'audio';
    const hasSound = read.segments[0]?.audio === 'source';
    if (count > 1 && hasPicture) planned.chains.push(`[${inputIndex}:v:0]split=${count}${read.segments.map((_, branch) => `[in${inputIndex}v${branch}]`).join('')}`);
    if (count > 1 && hasSound) planned.chains.push(`[${inputIndex}:a:0]asplit=${count}${read.segments.map((_, branch) => `[in${inputIndex}a${branch}]`).join('')}`);
    read.segments.forEach((segment, branch) => {
      planned.pads.set(segment, {
        video: !hasPicture ? '' : count > 1 ? `[in${inputIndex}v${branch}]` : `[${inputIndex}:v:0]`,
        audio: !hasSound ? '' : count > 1 ? `[in${inputIndex}a${branch}]` : `[${inputIndex}:a:0]`,
      });
    });
  });
  return planned;
}
