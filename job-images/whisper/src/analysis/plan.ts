import type { EnergyEnvelope } from './energy.ts';
import { findFalseStartCuts } from './false-starts.ts';
import { findFillerCuts } from './fillers.ts';
import { minimumPauseMs } from './pacing.ts';
import { findSilenceCuts } from './silences.ts';
import { MIN_CUT_MS, subtractSpans, type Cut, type CutType, type Span } from './spans.ts';
import type { SpokenWord } from './words.ts';

/** What the analysis heard in one source (source time, ms). */
export interface SourceSignals {
  /** Index of the source in the job's `sources`. */
  source_index: number;
  duration_ms: number;
  /** normalizeWords(…) of the transcription. */
  words: readonly SpokenWord[];
  /** Detected silences, in time order and disjoint. */
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

/** When cuts overlap, the higher kind keeps its span and the lower one keeps only what is left. */
const PRECEDENCE: readonly CutType[] = ['false_start', 'silence', 'filler'];

/** Whether a kind of cut is applied unless a person turns it off (fillers are only offered). */
export const ACTIVE_BY_DEFAULT: Readonly<Record<CutType, boolean>> = { silence: true, false_start: true, filler: false };

/**
 * Every cut of one source, in time order and disjoint: false starts first, then
 * pauses and fillers outside them (pieces shorter than MIN_CUT_MS dropped).
 */
export function planSourceCuts(signals: SourceSignals, settings: PlanSettings): Cut[] {
  const found: Record<CutType, Cut[]> = {
    false_start: findFalseStartCuts(signals.words, settings.false_start_sensitivity),
    silence: findSilenceCuts({
      duration_ms: signals.duration_ms,
      words: signals.words,
      silences: signals.silences,
      envelope: signals.envelope,
      minimum_pause_ms: minimumPauseMs(settings.pacing_level),
    }),
    filler: findFillerCuts(signals.words),
  };
  const kept: Cut[] = [];
  for (const type of PRECEDENCE) {
    for (const cut of found[type]) {
      const start = Math.max(0, cut.start_ms);
      const end = Math.min(signals.duration_ms, cut.end_ms);
      for (const piece of subtractSpans({ start_ms: start, end_ms: end }, kept)) {
        if (piece.end_ms - piece.start_ms >= MIN_CUT_MS) kept.push({ ...cut, ...piece });
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

/** One source's AI edits and how many of each kind. */
export function planSourceEdits(signals: SourceSignals, settings: PlanSettings): SourcePlan {
  const edits = planSourceCuts(signals, settings).map((cut): PlannedEdit => ({
    type: cut.type,
    start_ms: cut.start_ms,
    end_ms: cut.end_ms,
    active: ACTIVE_BY_DEFAULT[cut.type],
    reason: cut.reason,
    source_index: signals.source_index,
  }));
  return { edits, counts: countEdits(edits) };
}
