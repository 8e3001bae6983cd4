/**
 * The project's timeline as data: the spine's pieces played one after another, where a
 * source time lands on it, and what an export keeps once the active cuts are taken out.
 * Pure: projectTimeline (project-timeline.ts) reads the pieces from the database.
 */

/** One tile of the timeline: a SINGLE canvas playing its CANVAS_FILL source, or an INSERT canvas playing its asset. */
export interface SpinePiece {
  canvasId: string;
  type: 'SINGLE' | 'INSERT';
  mediaItemId: string;
  mediaFileId: string;
  /** Where in its source the piece starts playing (a split SINGLE canvas plays part of its source). */
  sourceStartMs: number;
  /** How long the piece plays; null while its source's duration_ms is unknown. */
  durationMs: number | null;
  /** Its source failed to process: it plays nothing (durationMs 0); name is how the user knows it. */
  failed?: { name: string };
}

export interface TimelinePiece extends SpinePiece {
  /** Where the piece starts; a lower bound once an earlier piece's duration is unknown (counted as 0). */
  timelineStartMs: number;
}

/** Every duration known: the total and exact positions. */
export interface KnownTimeline {
  known: true;
  durationMs: number;
  pieces: (TimelinePiece & { durationMs: number })[];
}

/** Some source's duration_ms is still null: there is no total, so bound checks are skipped. */
interface UnknownTimeline {
  known: false;
  pieces: TimelinePiece[];
  /** The pieces whose duration is unknown. */
  unknown: TimelinePiece[];
}

export type Timeline = KnownTimeline | UnknownTimeline;

export function timelineOf(spine: readonly SpinePiece[]): Timeline {
  let at = 0;
  const pieces = spine.map((piece): TimelinePiece => {
    const placed = { ...piece, timelineStartMs: at };
    at += piece.durationMs ?? 0;
    return placed;
  });
  const unknown = pieces.filter((piece) => piece.durationMs === null);
  if (unknown.length > 0) return { known: false, pieces, unknown };
  return { known: true, durationMs: at, pieces: pieces as KnownTimeline['pieces'] };
}

/** The project has something to play (rule 1's "no media" is a timeline without pieces). */
export function hasMedia(timeline: Timeline): boolean {
  return timeline.pieces.length > 0;
}

/** A point of one piece's source. */
export interface SourcePoint {
  canvasId: string;
  mediaItemId: string;
  mediaFileId: string;
  sourceMs: number;
}

/**
 * The source point playing at `timelineMs`; a boundary belongs to the piece that starts
 * there, the very end to the last piece. Null outside [0, duration] or without pieces.
 */
export function timelineToSource(timeline: KnownTimeline, timelineMs: number): SourcePoint | null {
  if (timelineMs < 0 || timelineMs > timeline.durationMs) return null;
  const playing = timeline.pieces.filter((piece) => piece.durationMs > 0);
  const piece = playing.find((candidate) => timelineMs < candidate.timelineStartMs + candidate.durationMs) ?? playing.at(-1);
  if (!piece) return null;
  return { canvasId: piece.canvasId, mediaItemId: piece.mediaItemId, mediaFileId: piece.mediaFileId, sourceMs: piece.sourceStartMs + timelineMs - piece.timelineStartMs };
}

/** Where `sourceMs` of the canvas's source plays on the timeline; null for another canvas or outside the stretch it plays. */
export function sourceToTimeline(timeline: KnownTimeline, canvasId: string, sourceMs: number): number | null {
  const piece = timeline.pieces.find((candidate) => candidate.canvasId === canvasId);
  if (!piece || sourceMs < piece.sourceStartMs || sourceMs > piece.sourceStartMs + piece.durationMs) return null;
  return piece.timelineStartMs + sourceMs - piece.sourceStartMs;
}

/** What of an edit the timeline needs (an Edit row is one). */
export interface EditSpan {
  id: string;
  type: string;
  startMs: number;
  endMs: number;
  active: boolean;
}

/** A draft's or an export's `edit_overrides`: edit uuid → the fields it changes. */
export type EditOverrides = Readonly<Record<string, { active?: boolean | undefined; start_ms?: number | undefined; end_ms?: number | undefined }>>;

/** Edit types that remove time: the AI's and the user's manual cuts. Asset edits add media, they cut nothing. */
const cutEditTypes = ['silence', 'false_start', 'filler', 'manual'] as const;

function isCut(edit: Pick<EditSpan, 'type'>): boolean {
  return (cutEditTypes as readonly string[]).includes(edit.type);
}

/** The edits as a draft or export sees them: each override applied to its edit (overrides of unknown edits ignored). */
export function withOverrides<E extends EditSpan>(edits: readonly E[], overrides: EditOverrides = {}): E[] {
  return edits.map((edit) => {
    const override = Object.hasOwn(overrides, edit.id) ? overrides[edit.id] : undefined;
    if (!override) return edit;
    return {
      ...edit,
      active: override.active ?? edit.active,
      startMs: override.start_ms ?? edit.startMs,
      endMs: override.end_ms ?? edit.endMs,
    };
  });
}

export interface TimeRange {
  startMs: number;
  endMs: number;
}

/** The timeline ranges the active cuts remove, clipped to [0, duration], overlaps merged, in order. */
export function cutRanges(edits: readonly EditSpan[], durationMs: number): TimeRange[] {
  const ranges = edits
    .filter((edit) => edit.active && isCut(edit))
    .map((edit) => ({ startMs: Math.max(0, edit.startMs), endMs: Math.min(durationMs, edit.endMs) }))
    .filter((range) => range.endMs > range.startMs)
    .sort((a, b) => a.startMs - b.startMs);
  const merged: TimeRange[] = [];
  for (const range of ranges) {
    const last = merged.at(-1);
    if (last && range.startMs <= last.endMs) last.endMs = Math.max(last.endMs, range.endMs);
    else merged.push({ ...range });
  }
  return merged;
}

/** A stretch of one piece's source an export renders, with where it sits on the timeline and in the output. */
export interface KeptSegment extends TimeRange {
  canvasId: string;
  type: SpinePiece['type'];
  mediaItemId: string;
  mediaFileId: string;
  sourceStartMs: number;
  sourceEndMs: number;
  /** Where it starts in the rendered output (the kept segments before it, end to end). */
  outputStartMs: number;
}

/**
 * The ordered source segments an export renders: the timeline minus the active cuts
 * (silence, false_start, filler, manual) after the overrides. Times are `startMs`/`endMs`
 * on the timeline; empty pieces and fully cut pieces leave nothing.
 */
export function keptSegments(timeline: KnownTimeline, edits: readonly EditSpan[], overrides: EditOverrides = {}): KeptSegment[] {
  const cuts = cutRanges(withOverrides(edits, overrides), timeline.durationMs);
  const kept: KeptSegment[] = [];
  let output = 0;
  for (const piece of timeline.pieces) {
    const pieceEnd = piece.timelineStartMs + piece.durationMs;
    let cursor = piece.timelineStartMs;
    const keep = (endMs: number) => {
      if (endMs <= cursor) return;
      kept.push({
        canvasId: piece.canvasId,
        type: piece.type,
        mediaItemId: piece.mediaItemId,
        mediaFileId: piece.mediaFileId,
        startMs: cursor,
        endMs,
        sourceStartMs: piece.sourceStartMs + cursor - piece.timelineStartMs,
        sourceEndMs: piece.sourceStartMs + endMs - piece.timelineStartMs,
        outputStartMs: output,
      });
      output += endMs - cursor;
    };
    for (const cut of cuts) {
      if (cut.endMs <= cursor || cut.startMs >= pieceEnd) continue;
      keep(Math.min(cut.startMs, pieceEnd));
      cursor = Math.min(Math.max(cursor, cut.endMs), pieceEnd);
    }
    keep(pieceEnd);
  }
  return kept;
}

/** How long the rendered output lasts. */
export function outputDurationMs(segments: readonly KeptSegment[]): number {
  return segments.reduce((sum, segment) => sum + segment.endMs - segment.startMs, 0);
}
