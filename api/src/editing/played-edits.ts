/**
 * The edits as an output plays them: a draft's or an export's overrides applied, and every
 * shortened pause (issue 39) turned into the range it removes by the contract's one rule
 * (crds/contract/editing/kept-pause.ts). The output timeline, and through it the render, the
 * timeline files, captions and chapters, read only this. Pure.
 */
import { keepingOf, removedRange, type StoredPause } from '../../../crds/contract/editing/kept-pause.ts';
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
