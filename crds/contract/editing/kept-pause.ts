// A shortened pause (issue 39): a cut that keeps part of its span. The edit's span is the
// pause (where the detector heard silence and the recognizer no word); it keeps `keptMs` of
// it, `keptSplit` of that after the speech before the pause and the rest before the speech
// after it, and removes what lies between. The analysis plans its cuts with this rule and
// the editing core (api/src/editing/) turns every edit into what it removes with it, so the
// render, the timeline files, the captions and the chapters all follow one reading.

/** What a cut keeps of its span; a cut without it removes its span whole. */
export interface PauseKeeping {
  /** How much of the span stays in the output, ms; null: the span is removed whole. */
  keptMs: number | null;
  /** The share of keptMs left at the span's start (after the speech before it), 0–1; null reads as an even split. */
  keptSplit: number | null;
  /** The breath the pause holds (the detector's hiss between the words), timeline ms. */
  breath: { startMs: number; endMs: number } | null;
  /** Keep the breath: the removed range stops short of it. */
  keepBreath: boolean;
}

/**
 * A shortened pause as an edit stores and serves it (the api's `edits.pause`, snake_case as
 * on the wire): the pause (timeline ms), what of it stays (null: the edit's range was set by
 * hand and stands), the split, the breath it holds and whether it stays.
 */
export interface StoredPause {
  start_ms: number;
  end_ms: number;
  kept_ms: number | null;
  kept_split: number;
  breath: { start_ms: number; end_ms: number } | null;
  keep_breath: boolean;
}

/** A stored pause, with a change of its kept length or breath (a PATCH's, an override's), as a keeping. */
export function keepingOf(pause: StoredPause, change: { kept_ms?: number | undefined; keep_breath?: boolean | undefined } = {}): PauseKeeping {
  return {
    keptMs: change.kept_ms ?? pause.kept_ms,
    keptSplit: pause.kept_split,
    breath: pause.breath && { startMs: pause.breath.start_ms, endMs: pause.breath.end_ms },
    keepBreath: change.keep_breath ?? pause.keep_breath,
  };
}

/** With the breath kept, this much quiet stays either side of it, so the cut never joins onto the breath's first or last hiss. */
export const BREATH_MARGIN_MS = 30;

/** The part of the kept length that stays at the span's start (the rest stays at its end). */
export function keptBeforeMs(keptMs: number, keptSplit: number | null): number {
  return Math.round(keptMs * Math.min(1, Math.max(0, keptSplit ?? 0.5)));
}

/**
 * What a cut over [startMs, endMs) removes: the span, less `keptMs` of it split by
 * `keptSplit` around the removed middle; with the breath kept, the longer of the parts of
 * that middle on either side of the breath (and its margin). Null when nothing is left to
 * remove (the kept part is the whole span).
 */
export function removedRange(startMs: number, endMs: number, keeping: PauseKeeping | null): { startMs: number; endMs: number } | null {
  if (!keeping || keeping.keptMs === null) return endMs > startMs ? { startMs, endMs } : null;
  const before = keptBeforeMs(keeping.keptMs, keeping.keptSplit);
  let from = startMs + before;
  let to = endMs - (keeping.keptMs - before);
  const { breath } = keeping;
  if (keeping.keepBreath && breath && breath.startMs - BREATH_MARGIN_MS < to && from < breath.endMs + BREATH_MARGIN_MS) {
    const left = breath.startMs - BREATH_MARGIN_MS - from;
    const right = to - (breath.endMs + BREATH_MARGIN_MS);
    if (left >= right) to = breath.startMs - BREATH_MARGIN_MS;
    else from = breath.endMs + BREATH_MARGIN_MS;
  }
  return to > from ? { startMs: from, endMs: to } : null;
}
