import type { EditSpan, Timeline, TimelinePiece } from '../timeline/timeline.ts';

/** Where each edit goes when canvases move: the shift of those that follow their content, and those left stranded. */
export interface EditFollow {
  moved: { id: string; deltaMs: number }[];
  stranded: string[];
}

/**
 * Edits are timeline spans over source content: an edit lying wholly on one piece moves with
 * that piece (same canvas, same length); any other edit stays put and is stranded when the
 * pieces under its span changed. With a duration unknown before or after, positions are only
 * lower bounds, so nothing moves and nothing is reported.
 */
export function followContent(before: Timeline, after: Timeline, edits: readonly Pick<EditSpan, 'id' | 'startMs' | 'endMs'>[]): EditFollow {
  const result: EditFollow = { moved: [], stranded: [] };
  if (!before.known || !after.known) return result;
  const afterOf = new Map(after.pieces.map((piece) => [piece.canvasId, piece]));
  for (const edit of edits) {
    const home = before.pieces.find((piece) => piece.timelineStartMs <= edit.startMs && edit.endMs <= end(piece));
    const there = home ? afterOf.get(home.canvasId) : undefined;
    if (home && there && there.durationMs === home.durationMs) {
      const deltaMs = there.timelineStartMs - home.timelineStartMs;
      if (deltaMs !== 0) result.moved.push({ id: edit.id, deltaMs });
      continue;
    }
    if (under(before.pieces, edit) !== under(after.pieces, edit)) result.stranded.push(edit.id);
  }
  return result;
}

function end(piece: TimelinePiece): number {
  return piece.timelineStartMs + (piece.durationMs ?? 0);
}

/** The pieces playing under the span, as a comparable key. */
function under(pieces: readonly TimelinePiece[], edit: Pick<EditSpan, 'startMs' | 'endMs'>): string {
  return pieces
    .filter((piece) => piece.timelineStartMs < edit.endMs && edit.startMs < end(piece))
    .map((piece) => `${piece.canvasId}@${piece.timelineStartMs}+${piece.durationMs}`)
    .join(',');
}
