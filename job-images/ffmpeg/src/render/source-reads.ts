// The render's second stage: which ffmpeg inputs the segments play from. Segments moving
// forward through one source share a read, split into one branch each, even with other
// sources' segments between them; every still of one image plays from one looped read.
// So ffmpeg's inputs (each a demuxer, a decoder and their buffers) follow the distinct
// sources, not the number of pieces: 250 one-second stills of one image are one input.
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

/** One ffmpeg input: a stretch of a source that one or more segments play from, in output order. */
interface SourceRead {
  sourceId: string;
  kind: PlannedSegment['kind'];
  startSeconds: number;
  endSeconds: number;
  segments: PlannedSegment[];
  /** A still's read: the frame of the looped input each of its segments starts at (they follow each other). */
  firstFrames: number[];
  inputIndex: number;
}

/**
 * Groups segments into reads and sets each segment's input: a segment joins its source's
 * latest read when it moves forward from where that read ends (within the decoded gap),
 * other sources' segments between them or not; a still joins its image's one read (per
 * inserted flag, which decides its fit). Going backwards in a source needs a new read.
 */
function planReads(segments: readonly PlannedSegment[], rate: Rational): SourceRead[] {
  const reads: SourceRead[] = [];
  const latest = new Map<string, SourceRead>();
  for (const segment of segments) {
    const key = segment.kind === 'image' ? `image ${segment.inserted ? 'inserted' : 'main'} ${segment.sourceId}` : `${segment.kind} ${segment.sourceId}`;
    const read = latest.get(key);
    const gap = read ? segment.sourceStartSeconds - read.endSeconds : Number.NaN;
    if (read && segment.kind === 'image') {
      const frames = read.segments.reduce((sum, each) => sum + each.frameCount, 0);
      read.firstFrames.push(frames);
      read.endSeconds = read.startSeconds + frameTime(frames + segment.frameCount, rate);
      read.segments.push(segment);
      segment.inputIndex = read.inputIndex;
    } else if (read && gap >= -1e-9 && gap <= MAX_DECODED_GAP_SECONDS) {
      read.endSeconds = segment.sourceEndSeconds;
      read.segments.push(segment);
      segment.inputIndex = read.inputIndex;
    } else {
      const inputIndex = reads.length;
      const opened: SourceRead = { sourceId: segment.sourceId, kind: segment.kind, startSeconds: segment.sourceStartSeconds, endSeconds: segment.sourceEndSeconds, segments: [segment], firstFrames: [0], inputIndex };
      reads.push(opened);
      latest.set(key, opened);
      segment.inputIndex = inputIndex;
    }
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
  /**
   * A still several segments share: the frame of its looped read this segment starts at (its
   * picture arrives fitted and in yuv420p, fitted once before the split); null otherwise.
   */
  stillFirstFrame: number | null;
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

/**
 * Each read is one input; a read several segments share is split, each branch trimmed to
 * its segment later. A shared still is fitted (`prepare`: its fit and pixel format) once,
 * before the split, so the fit's scaler and its frames are not repeated per segment.
 */
export function readSources(segments: readonly PlannedSegment[], rate: Rational, pathOf: (sourceId: string) => string, prepare: (segment: PlannedSegment) => string[]): SourceReads {
  const reads = planReads(segments, rate);
  const planned: SourceReads = { inputs: [], offsets: [], chains: [], pads: new Map() };
  reads.forEach((read, inputIndex) => {
    const source = segmentInput(read.kind, pathOf(read.sourceId), read.startSeconds, read.endSeconds, rate);
    planned.inputs.push(source.args);
    planned.offsets.push(source.offsetSeconds);
    const count = read.segments.length;
    const hasPicture = read.kind !== 'audio';
    const hasSound = read.segments[0]?.audio === 'source';
    const prepared = count > 1 && read.kind === 'image';
    const prelude = prepared && read.segments[0] ? `${prepare(read.segments[0]).join(',')},` : '';
    if (count > 1 && hasPicture) planned.chains.push(`[${inputIndex}:v:0]${prelude}split=${count}${read.segments.map((_, branch) => `[in${inputIndex}v${branch}]`).join('')}`);
    if (count > 1 && hasSound) planned.chains.push(`[${inputIndex}:a:0]asplit=${count}${read.segments.map((_, branch) => `[in${inputIndex}a${branch}]`).join('')}`);
    read.segments.forEach((segment, branch) => {
      planned.pads.set(segment, {
        video: !hasPicture ? '' : count > 1 ? `[in${inputIndex}v${branch}]` : `[${inputIndex}:v:0]`,
        audio: !hasSound ? '' : count > 1 ? `[in${inputIndex}a${branch}]` : `[${inputIndex}:a:0]`,
        // a still's segment starts in the loop where the ones before it end
        stillFirstFrame: prepared ? (read.firstFrames[branch] ?? 0) : null,
      });
    });
  });
  return planned;
}
