// Keyframe-aware cut edges (issue 42 item 1): a shortened pause (kept-pause.ts) removes the
// middle of a silence, and that middle may slide inside the silence without touching a word.
// Where sliding it puts one of its edges on a keyframe of the source, the kept picture on that
// side starts (or ends) on a whole GOP, and a cut-only export copies that side of the seam
// instead of re-encoding it. The slide keeps the removed length, so the output keeps exactly
// the pause length the creator chose; only its split around the cut moves, within
// KEYFRAME_SNAP_TOLERANCE_MS, and each side keeps at least KEYFRAME_SNAP_MIN_SIDE_MS of the
// quiet it kept (or all of it, if less). The editing core applies this once, before the
// output timeline is built, so the render, the timeline files and the captions read one edge.

/** How far a pause cut's removed range may slide to put an edge on a keyframe, ms. */
export const KEYFRAME_SNAP_TOLERANCE_MS = 400;

/** The quiet each side of a slid cut keeps at least (or what it kept, if less), ms: the join never lands on a word's first or last sound. */
export const KEYFRAME_SNAP_MIN_SIDE_MS = 100;

interface Span {
  startMs: number;
  endMs: number;
}

/**
 * The removed range slid by the smallest step of at most `toleranceMs` that puts its end
 * (the next kept stretch's first frame: no decoding up to the cut, the better side) or
 * else its start on a keyframe, staying inside `room` (the pause, or its side of a kept
 * breath) with each side of the pause keeping at least min(what it kept, minSideMs).
 * `keyframesMs` are timeline ms, ascending. The range as it was when no slide does.
 */
export function snapRemovedToKeyframe(removed: Span, room: Span, keyframesMs: readonly number[], toleranceMs = KEYFRAME_SNAP_TOLERANCE_MS, minSideMs = KEYFRAME_SNAP_MIN_SIDE_MS): Span {
  if (removed.endMs <= removed.startMs || toleranceMs <= 0) return removed;
  const keptBefore = Math.max(0, removed.startMs - room.startMs);
  const keptAfter = Math.max(0, room.endMs - removed.endMs);
  // The slide s moves both edges: start + s ≥ room.start + min(keptBefore, minSide), end + s ≤ room.end − min(keptAfter, minSide).
  const lowest = Math.max(-toleranceMs, -(keptBefore - Math.min(keptBefore, minSideMs)));
  const highest = Math.min(toleranceMs, keptAfter - Math.min(keptAfter, minSideMs));
  if (highest <= 0 && lowest >= 0) return removed;
  for (const edge of [removed.endMs, removed.startMs]) {
    let best: number | null = null;
    for (const keyframe of keyframesMs) {
      const slide = keyframe - edge;
      if (slide < lowest) continue;
      if (slide > highest) break;
      if (best === null || Math.abs(slide) < Math.abs(best)) best = slide;
    }
    if (best !== null) return { startMs: removed.startMs + best, endMs: removed.endMs + best };
  }
  return removed;
}
