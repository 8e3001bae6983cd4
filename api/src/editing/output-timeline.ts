/**
 * The edit resolved once into the output it plays, on one frame grid with one rounding
 * rule (crds/contract/editing/frame-grid.ts): the kept segments (timeline minus the active
 * cuts, after the overrides; a shortened pause removes the middle of its pause) with the
 * inserted assets spliced in where their edit starts,
 * each as whole frames of the output's rate; and the map from a timeline time to an output
 * time that captions, censored words, overlays, markers and chapters are placed with. The
 * render request, the timeline files and the caption files all read this; none re-derives
 * a segment. Pure.
 */
import { frameAt, frameEdgeMs, frameEdgeWholeMs, frameMs, type Rational } from '../../../crds/contract/editing/frame-grid.ts';
import { keptSegments, type KeptSegment, type KnownTimeline, type TimeRange } from '../timeline/timeline.ts';
import { editsAsPlayed, type PlayedEdit, type PlayedOverrides } from './played-edits.ts';

/** An active asset edit with visual_mode insert: its asset plays for `durationMs` at `atMs` of the timeline, pushing what follows. */
export interface InsertSpan {
  mediaFileId: string;
  atMs: number;
  durationMs: number;
  /** Where in the asset it starts (0 for a still). */
  assetOffsetMs: number;
}

/** One stretch of a source in the output, in whole frames of the output's rate. */
export interface OutputSegment {
  mediaFileId: string;
  /** An inserted asset (an insert edit or an INSERT canvas) rather than the recordings' own footage. */
  inserted: boolean;
  /** The source's frames [sourceFirstFrame, sourceFirstFrame + frameCount) play from output frame outFirstFrame. */
  sourceFirstFrame: number;
  frameCount: number;
  outFirstFrame: number;
  /** The same frame edges in milliseconds, rounded (what the render request carries; frameAt reads them back). */
  sourceStartMs: number;
  sourceEndMs: number;
  outStartMs: number;
}

/** A span of the output in whole frames, with its edges in rounded milliseconds. */
export interface OutputFrames {
  outFirstFrame: number;
  frameCount: number;
  outStartMs: number;
  outEndMs: number;
}

export interface OutputTimeline {
  rate: Rational;
  segments: OutputSegment[];
  frameCount: number;
  /** The output's length, its last frame edge rounded to the millisecond. */
  durationMs: number;
  /** The timeline ranges the output leaves out: the active cuts, and the kept stretches shorter than a frame between them. */
  cuts: TimeRange[];
  /**
   * Where timeline time `t` lands in the output (ms, rounded). A time inside a cut lands
   * where the cut was. An insert at exactly `t` lies before a `start` and after an `end`,
   * so a span that begins at an insert point begins after the inserted asset.
   */
  toOutput(timelineMs: number, side: 'start' | 'end'): number;
  /** A timeline span's place in the output; null when nothing of it is kept. */
  spanToOutput(startMs: number, endMs: number): { outStartMs: number; outEndMs: number } | null;
  /** A timeline span as whole output frames (overlays); null when it covers no frame. */
  spanToFrames(startMs: number, endMs: number): OutputFrames | null;
  /** The output frame edge nearest to an output time, within the output. */
  frameOfOutputMs(outMs: number): number;
}

/** A piece of the output: a kept stretch of the timeline (exact ms of its frame edges), or an insert at a timeline point. */
type Part = { kind: 'kept'; startMs: number; endMs: number } | { kind: 'insert'; atMs: number; frames: number };

/** What the output is made of besides the timeline and its edits. */
export interface OutputParts {
  overrides?: PlayedOverrides;
  inserts?: readonly InsertSpan[];
  /** The output's frame grid (the main footage's rate). */
  rate: Rational;
  /** Media files that are stills: a still shows one picture, so whatever part of it is kept plays from its frame 0. */
  stills?: ReadonlySet<string>;
}

export function outputTimeline(timeline: KnownTimeline, edits: readonly PlayedEdit[], parts: OutputParts): OutputTimeline {
  const { rate, overrides = {}, inserts = [], stills = new Set<string>() } = parts;
  const oneFrame = frameMs(rate);
  // a shortened pause removes only its middle (editsAsPlayed): every adapter below sees the same kept part
  const allKept = keptSegments(timeline, editsAsPlayed(edits, overrides));
  // A stretch shorter than a frame (two cuts closer than a frame, a cut ending just before a clip does) would show as a flash frame or not at all depending on the grid: it is never shown.
  const kept = allKept.filter((segment) => segment.endMs - segment.startMs >= oneFrame);
  const pending = [...inserts].sort((a, b) => a.atMs - b.atMs);
  const segments: OutputSegment[] = [];
  const placed: Part[] = [];
  let outFrame = 0;
  const emit = (mediaFileId: string, firstFrame: number, endFrame: number, inserted: boolean): number => {
    if (endFrame <= firstFrame) return 0;
    segments.push({
      mediaFileId,
      inserted,
      sourceFirstFrame: firstFrame,
      frameCount: endFrame - firstFrame,
      outFirstFrame: outFrame,
      sourceStartMs: frameEdgeWholeMs(firstFrame, rate),
      sourceEndMs: frameEdgeWholeMs(endFrame, rate),
      outStartMs: frameEdgeWholeMs(outFrame, rate),
    });
    outFrame += endFrame - firstFrame;
    return endFrame - firstFrame;
  };
  const emitInsert = (insert: InsertSpan) => {
    const frames = emit(insert.mediaFileId, frameAt(insert.assetOffsetMs, rate), frameAt(insert.assetOffsetMs + insert.durationMs, rate), true);
    if (frames > 0) placed.push({ kind: 'insert', atMs: insert.atMs, frames });
  };
  /** Timeline [fromMs, toMs) of a kept segment, cut at the frame edges of its source. */
  const emitKept = (segment: KeptSegment, fromMs: number, toMs: number) => {
    const offset = segment.sourceStartMs - segment.startMs;
    const first = frameAt(fromMs + offset, rate);
    const end = frameAt(toMs + offset, rate);
    const shift = stills.has(segment.mediaFileId) ? first : 0;
    if (emit(segment.mediaFileId, first - shift, end - shift, segment.type === 'INSERT') > 0) placed.push({ kind: 'kept', startMs: frameEdgeMs(first, rate) - offset, endMs: frameEdgeMs(end, rate) - offset });
  };
  for (const segment of kept) {
    let cursor = segment.startMs;
    while (pending.length > 0 && pending[0]!.atMs < segment.endMs) {
      const insert = pending.shift()!;
      if (insert.atMs > cursor) {
        emitKept(segment, cursor, insert.atMs);
        cursor = insert.atMs;
      }
      emitInsert(insert);
    }
    emitKept(segment, cursor, segment.endMs);
  }
  for (const insert of pending) emitInsert(insert);

  const exactOutput = (t: number, side: 'start' | 'end'): number =>
    placed.reduce((sum, part) => {
      if (part.kind === 'kept') return sum + Math.min(Math.max(t - part.startMs, 0), part.endMs - part.startMs);
      return (side === 'start' ? part.atMs <= t : part.atMs < t) ? sum + part.frames * oneFrame : sum;
    }, 0);
  const frameOfOutputMs = (outMs: number) => Math.min(outFrame, frameAt(outMs, rate));
  return {
    rate,
    segments,
    frameCount: outFrame,
    durationMs: frameEdgeWholeMs(outFrame, rate),
    cuts: leftOut(timeline, kept),
    toOutput: (t, side) => Math.round(exactOutput(t, side)),
    spanToOutput(startMs, endMs) {
      const outStartMs = Math.round(exactOutput(startMs, 'start'));
      const outEndMs = Math.round(exactOutput(endMs, 'end'));
      return outEndMs > outStartMs ? { outStartMs, outEndMs } : null;
    },
    spanToFrames(startMs, endMs) {
      const first = frameOfOutputMs(exactOutput(startMs, 'start'));
      const end = frameOfOutputMs(exactOutput(endMs, 'end'));
      if (end <= first) return null;
      return { outFirstFrame: first, frameCount: end - first, outStartMs: frameEdgeWholeMs(first, rate), outEndMs: frameEdgeWholeMs(end, rate) };
    },
    frameOfOutputMs,
  };
}

/** The timeline ranges between the kept stretches (the cuts, with the slivers between them that were dropped), in order. */
function leftOut(timeline: KnownTimeline, kept: readonly KeptSegment[]): TimeRange[] {
  const ranges: TimeRange[] = [];
  let cursor = 0;
  for (const segment of kept) {
    if (segment.startMs > cursor) ranges.push({ startMs: cursor, endMs: segment.startMs });
    cursor = Math.max(cursor, segment.endMs);
  }
  if (timeline.durationMs > cursor) ranges.push({ startMs: cursor, endMs: timeline.durationMs });
  return ranges;
}
