import type { EnergyEnvelope } from './energy.ts';
import { findFalseStartCuts } from './false-starts.ts';
import { findFillerCuts } from './fillers.ts';
import { minimumPauseMs } from './pacing.ts';
import { findSilenceCuts } from './silences.ts';
import { MIN_CUT_MS, spanLength, spansOverlap, subtractSpans, type Cut, type CutType, type Span } from './spans.ts';
import type { SpokenWord } from './words.ts';

/** What the analysis heard in one source (source time, ms). */
export interface SourceSignals {
  /** Index of the source in the job's `sources`. */
  source_index: number;
  duration_ms: number;
  /** normalizeWords(…) of the transcription. */
  words: readonly SpokenWord[];
  /** Detected silences (any order; overlaps are merged). */
  silences: readonly Span[];
  /** For snapping cut boundaries; null keeps them where the guard bands put them. */
  envelope: EnergyEnvelope | null;
}

export interface PlanSettings {
  pacing_level: number;
  false_start_sensitivity: number;
}

/** An AI edit in SOURCE time (the caller maps it onto the timeline). */
export interface PlannedEdit {
  type: CutType;
  start_ms: number;
  end_ms: number;
  active: boolean;
  reason: string;
  source_index: number;
}

export interface EditCounts {
  silence: number;
  false_start: number;
  filler: number;
}

export interface SourcePlan {
  edits: PlannedEdit[];
  counts: EditCounts;
}

/**
 * When cuts overlap, the higher kind keeps its span and the lower one keeps only what
 * is left: a false start swallows the pauses and fillers inside it (it goes as one
 * edit), and an active pause cut is never hidden inside an offered filler cut.
 */
export const PRECEDENCE: readonly CutType[] = ['false_start', 'silence', 'filler'];

/** Whether a kind of cut is applied unless a person turns it off (fillers are only offered). */
export const ACTIVE_BY_DEFAULT: Readonly<Record<CutType, boolean>> = { silence: true, false_start: true, filler: false };

/** Whether what is left of a word cut still removes one of its words (otherwise it is only a sliver of pause). */
function holdsItsWords(piece: Span, cut: Cut, words: readonly SpokenWord[]): boolean {
  if (!cut.words) return true;
  return words.slice(cut.words.from, cut.words.to).some((word) => spansOverlap(piece, word) || (word.start_ms === word.end_ms && piece.start_ms <= word.start_ms && word.start_ms < piece.end_ms));
}

/**
 * Every cut of one source, in time order, disjoint and inside [0, duration]: false
 * starts first, then pauses and fillers outside them; pieces shorter than MIN_CUT_MS,
 * and pieces of a word cut that no longer remove any of its words, are dropped.
 */
export function planSourceCuts(signals: SourceSignals, settings: PlanSettings): Cut[] {
  const { words, duration_ms: duration, envelope } = signals;
  const room = { duration_ms: duration, envelope };
  const found: Record<CutType, Cut[]> = {
    false_start: findFalseStartCuts(words, settings.false_start_sensitivity, room),
    silence: findSilenceCuts({ duration_ms: duration, words, silences: signals.silences, envelope, minimum_pause_ms: minimumPauseMs(settings.pacing_level) }),
    filler: findFillerCuts(words, room),
  };
  const kept: Cut[] = [];
  for (const type of PRECEDENCE) {
    for (const cut of found[type]) {
      const inside = { start_ms: Math.max(0, cut.start_ms), end_ms: Math.min(duration, cut.end_ms) };
      for (const piece of subtractSpans(inside, kept)) {
        if (spanLength(piece) >= MIN_CUT_MS && holdsItsWords(piece, cut, words)) kept.push({ ...cut, ...piece });
      }
    }
  }
  return kept.sort((a, b) => a.start_ms - b.start_ms);
}

export function countEdits(edits: readonly { type: CutType }[]): EditCounts {
  const counts: EditCounts = { silence: 0, false_start: 0, filler: 0 };
  for (const edit of edits) counts[edit.type] += 1;
  return counts;
}

/** The AI edits of one source's cuts (source time), and how many of each kind. */
export function sourcePlanOf(cuts: readonly Cut[], sourceIndex: number): SourcePlan {
  const edits = cuts.map((cut): PlannedEdit => ({
    type: cut.type,
    start_ms: cut.start_ms,
    end_ms: cut.end_ms,
    active: ACTIVE_BY_DEFAULT[cut.type],
    reason: cut.reason,
    source_index: sourceIndex,
  }));
  return { edits, counts: countEdits(edits) };
}

/** One source's AI edits and how many of each kind. */
export function planSourceEdits(signals: SourceSignals, settings: PlanSettings): SourcePlan {
  return sourcePlanOf(planSourceCuts(signals, settings), signals.source_index);
}
