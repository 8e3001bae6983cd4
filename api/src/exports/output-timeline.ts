/**
 * From the project's timeline to the rendered output's: the kept segments (timeline minus
 * the active cuts, after the overrides), with the inserted assets spliced in where their
 * edit starts, and the map from a timeline time to an output time that captions, censored
 * words and overlays are placed with. Pure.
 */
import { keptSegments, type EditOverrides, type EditSpan, type KeptSegment, type KnownTimeline } from '../timeline/timeline.ts';

/** An active asset edit with visual_mode insert: its asset plays for `durationMs` at `atMs` of the timeline, pushing what follows. */
export interface InsertSpan {
  mediaFileId: string;
  atMs: number;
  durationMs: number;
  assetOffsetMs: number;
}

interface OutputSegment {
  mediaFileId: string;
  sourceStartMs: number;
  sourceEndMs: number;
  outStartMs: number;
  inserted: boolean;
}

export interface OutputTimeline {
  segments: OutputSegment[];
  durationMs: number;
  /**
   * Where timeline time `t` lands in the output. A time inside a cut lands where the cut
   * was. An insert at exactly `t` lies before a `start` and after an `end`, so a span that
   * begins at an insert point begins after the inserted asset.
   */
  toOutput(timelineMs: number, side: 'start' | 'end'): number;
  /** A timeline span's place in the output; null when nothing of it is kept. */
  spanToOutput(startMs: number, endMs: number): { outStartMs: number; outEndMs: number } | null;
}

export function outputTimeline(timeline: KnownTimeline, edits: readonly EditSpan[], overrides: EditOverrides, inserts: readonly InsertSpan[]): OutputTimeline {
  const kept = keptSegments(timeline, edits, overrides);
  const pending = [...inserts].filter((insert) => insert.durationMs > 0).sort((a, b) => a.atMs - b.atMs);
  const segments: OutputSegment[] = [];
  let out = 0;
  const emit = (mediaFileId: string, sourceStartMs: number, sourceEndMs: number, inserted: boolean) => {
    if (sourceEndMs <= sourceStartMs) return;
    segments.push({ mediaFileId, sourceStartMs, sourceEndMs, outStartMs: out, inserted });
    out += sourceEndMs - sourceStartMs;
  };
  const emitInsert = (insert: InsertSpan) => emit(insert.mediaFileId, insert.assetOffsetMs, insert.assetOffsetMs + insert.durationMs, true);
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

  function emitKept(segment: KeptSegment, fromMs: number, toMs: number) {
    const offset = segment.sourceStartMs - segment.startMs;
    emit(segment.mediaFileId, fromMs + offset, toMs + offset, segment.type === 'INSERT');
  }

  const toOutput = (t: number, side: 'start' | 'end'): number => {
    const keptBefore = kept.reduce((sum, segment) => sum + Math.min(Math.max(t - segment.startMs, 0), segment.endMs - segment.startMs), 0);
    const insertedBefore = inserts.filter((insert) => insert.durationMs > 0 && (side === 'start' ? insert.atMs <= t : insert.atMs < t)).reduce((sum, insert) => sum + insert.durationMs, 0);
    return keptBefore + insertedBefore;
  };
  return {
    segments,
    durationMs: out,
    toOutput,
    spanToOutput(startMs, endMs) {
      const outStartMs = toOutput(startMs, 'start');
      const outEndMs = toOutput(endMs, 'end');
      return outEndMs > outStartMs ? { outStartMs, outEndMs } : null;
    },
  };
}
