import { MIN_CUT_MS } from './spans.ts';
import { WORD_LEAD_IN_MS, WORD_TAIL_MS } from './words.ts';

/**
 * pacing_level (0–100) → the shortest pause that gets cut.
 *
 * The curve is geometric: each step of 10 shortens the minimum pause by the same
 * ratio (about 15 %), from MOST_PATIENT_PAUSE_MS at 0 (only long silences go) to
 * BRISKEST_PAUSE_MS at 100. People hear pause lengths roughly in proportion, so equal
 * steps of the slider feel like equal steps of pace; and it never rises, so a higher
 * level never cuts fewer pauses. Values are rounded to 10 ms (the energy frame).
 *
 *   level:     0     10    20    30    40    50   60   70   80   90   100
 *   pause ms: 2000  1700  1450  1230  1050  890  760  650  550  470  400
 */
export const MOST_PATIENT_PAUSE_MS = 2000;
/** The brisk end: a shorter pause would leave no cut of MIN_CUT_MS once the words' guard bands are kept. */
export const BRISKEST_PAUSE_MS = WORD_TAIL_MS + WORD_LEAD_IN_MS + MIN_CUT_MS;

const FRAME_MS = 10;

export function minimumPauseMs(pacingLevel: number): number {
  const level = Math.min(100, Math.max(0, Number.isFinite(pacingLevel) ? pacingLevel : 0));
  const pause = MOST_PATIENT_PAUSE_MS * (BRISKEST_PAUSE_MS / MOST_PATIENT_PAUSE_MS) ** (level / 100);
  return Math.round(pause / FRAME_MS) * FRAME_MS;
}

export interface PacingPoint {
  pacing_level: number;
  minimum_pause_ms: number;
  /** keptPauseMs: what of a cut pause stays. */
  kept_pause_ms: number;
}

/** The curve as data (levels 0, step, 2·step … 100), for documentation and clients. */
export function pacingCurve(step = 10): PacingPoint[] {
  const points: PacingPoint[] = [];
  for (let level = 0; level <= 100; level += step) points.push({ pacing_level: level, minimum_pause_ms: minimumPauseMs(level), kept_pause_ms: keptPauseMs(level) });
  return points;
}

/**
 * pacing_level (0–100) → how much of a cut pause stays in the output (issue 39: a pause is
 * shortened, not deleted). Geometric like the minimum pause, from MOST_PATIENT_KEPT_MS at 0
 * to BRISKEST_KEPT_MS at 100, rounded to 10 ms; it never rises, and at every level it lies
 * at least MIN_CUT_MS under the shortest pause that is cut, so every cut pause loses time.
 *
 *   level:    0    10   20   30   40   50   60   70   80   90   100
 *   kept ms: 700  630  570  510  460  420  380  340  310  280  250
 */
export const MOST_PATIENT_KEPT_MS = 700;
export const BRISKEST_KEPT_MS = 250;

export function keptPauseMs(pacingLevel: number): number {
  const level = Math.min(100, Math.max(0, Number.isFinite(pacingLevel) ? pacingLevel : 0));
  const kept = MOST_PATIENT_KEPT_MS * (BRISKEST_KEPT_MS / MOST_PATIENT_KEPT_MS) ** (level / 100);
  return Math.round(kept / FRAME_MS) * FRAME_MS;
}
