/**
 * The edits as an output plays them: a draft's or an export's overrides applied, and every
 * shortened pause (issue 39) turned into the range it removes by the contract's one rule
 * (crds/contract/editing/kept-pause.ts). The output timeline, and through it the render, the
 * timeline files, captions and chapters, read only this. Pure.
 */
import { BREATH_MARGIN_MS, keepingOf, removedRange, type StoredPause } from '../../../crds/contract/editing/kept-pause.ts';
import { KEYFRAME_SNAP_TOLERANCE_MS, snapRemovedToKeyframe } from '../../../crds/contract/editing/keyframe-snap.ts';
import { withOverrides, type EditOverrides, type EditSpan } from '../timeline/timeline.ts';

/** What an override may change of a shortened pause. */
export interface PauseOverride {
  kept_ms?: number | undefined;
  keep_breath?: boolean | undefined;
}

/** A draft's or an export's `edit_overrides`, with the shortened pause's fields. */
export type PlayedOverrides = Readonly<Record<string, EditOverrides[string] & PauseOverride>>;

/** An edit the core can place: its span, and the pause it shortens when it is one. */
export interface PlayedEdit extends EditSpan {
  pause?: StoredPause | null;
}

/**
 * What a shortened pause removes with this keeping: removedRange over its pause; an empty
 * range where the kept part is the whole pause (it then removes nothing, and a marker still
 * has a place). Null when the pause keeps no set length (its edit's own range stands).
 */
export function pauseRemoves(pause: StoredPause, override: PauseOverride = {}): { startMs: number; endMs: number } | null {
  const keeping = keepingOf(pause, override);
  if (keeping.keptMs === null) return null;
  const removed = removedRange(pause.start_ms, pause.end_ms, keeping);
  if (removed) return removed;
  const at = Math.min(pause.end_ms, pause.start_ms + Math.round(keeping.keptMs * pause.kept_split));
  return { startMs: at, endMs: at };
}

/**
 * The edits with the overrides applied: `active`, `start_ms` and `end_ms` as before; an
 * override's `kept_ms` or `keep_breath` places a shortened pause's removed range anew (an
 * override that also moves `start_ms`/`end_ms` keeps the range it sets). Overrides of
 * unknown edits, and pause fields on an edit that shortens no pause, are ignored.
 */
export function editsAsPlayed<E extends PlayedEdit>(edits: readonly E[], overrides: PlayedOverrides = {}): E[] {
  return withOverrides(edits, overrides).map((edit) => {
    const override = Object.hasOwn(overrides, edit.id) ? overrides[edit.id] : undefined;
    if (!override || !edit.pause || override.start_ms !== undefined || override.end_ms !== undefined) return edit;
    if (override.kept_ms === undefined && override.keep_breath === undefined) return edit;
    const removed = pauseRemoves(edit.pause, override);
    return removed ? { ...edit, startMs: removed.startMs, endMs: removed.endMs } : edit;
  });
}

/**
 * Keyframe-aware cut edges (issue 42 item 1): every active shortened pause whose removed
 * range is placed by its keeping (not set by hand, not moved by an override's start_ms or
 * end_ms) slid inside its pause onto a keyframe by the contract's rule
 * (crds/contract/editing/keyframe-snap.ts): the same removed length, so the kept pause
 * length stands; never out of the pause, nor over a breath it keeps. `keyframesMs` are the
 * source's keyframes on the timeline (ms, ascending). Applied to editsAsPlayed's output,
 * before the output timeline is built, so the render and every timeline and caption file
 * read the slid edge. Pure.
 */
export function pauseCutsOnKeyframes<E extends PlayedEdit>(edits: readonly E[], keyframesMs: readonly number[], overrides: PlayedOverrides = {}, toleranceMs = KEYFRAME_SNAP_TOLERANCE_MS): E[] {
  if (keyframesMs.length === 0) return [...edits];
  return edits.map((edit) => {
    const { pause } = edit;
    if (!edit.active || !pause) return edit;
    const override = Object.hasOwn(overrides, edit.id) ? overrides[edit.id] : undefined;
    if (override?.start_ms !== undefined || override?.end_ms !== undefined) return edit;
    const keeping = keepingOf(pause, override);
    if (keeping.keptMs === null || edit.endMs <= edit.startMs) return edit;
    const room = { startMs: pause.start_ms, endMs: pause.end_ms };
    const { breath } = keeping;
    if (keeping.keepBreath && breath && breath.startMs < pause.end_ms && breath.endMs > pause.start_ms) {
      // The removed range lies on one side of the kept breath: it slides on that side only.
      if (edit.endMs <= breath.startMs) room.endMs = breath.startMs - BREATH_MARGIN_MS;
      else room.startMs = breath.endMs + BREATH_MARGIN_MS;
    }
    const slid = snapRemovedToKeyframe({ startMs: edit.startMs, endMs: edit.endMs }, room, keyframesMs, toleranceMs);
    return slid.startMs === edit.startMs ? edit : { ...edit, startMs: slid.startMs, endMs: slid.endMs };
  });
}
