import { MIN_CUT_MS, quoteWords, type Cut } from './spans.ts';
import { gapBetween, WORD_LEAD_IN_MS, WORD_TAIL_MS, type SpokenWord } from './words.ts';

/**
 * A false start: a take begins, breaks off, and the speaker starts the same phrase
 * again ("so today I want to talk about … so today I want to show you …"). The
 * earlier take goes, the last one stays.
 *
 * Detection, on the word sequence alone: a take starts at a phrase start (the first
 * word, a word after a pause of PHRASE_GAP_MS or more, or the restart of a false
 * start just found); a restart is any later word within MAX_FALSE_TAKE_MS and
 * MAX_FALSE_TAKE_WORDS whose next k words resemble the take's first k words, where
 * k = min(COMPARE_WORDS, words in the take) and k ≥ MIN_TAKE_WORDS. Resemblance is
 * 1 − (word-level edit distance / k), a substitution costing the two words'
 * normalised letter edit distance (so "cutting"/"cutter" cost less than
 * "cutting"/"video"); the first words must resemble each other too. Of the takes a
 * restart matches, the earliest goes (a longer false take), and takes restarted one
 * after the other go as one edit.
 */
export const PHRASE_GAP_MS = 250;
export const MAX_FALSE_TAKE_MS = 10_000;
export const MAX_FALSE_TAKE_WORDS = 25;
export const COMPARE_WORDS = 4;
export const MIN_TAKE_WORDS = 2;
/** Two first words "resemble" when at most this share of their letters differs. */
const FIRST_WORD_MAX_DISTANCE = 0.34;

/**
 * false_start_sensitivity (0–100) → the resemblance a restart needs (0..1).
 * 0 turns detection off; from there the threshold falls linearly, 1 − s/200:
 *
 *   sensitivity:  0    10    20   30    40   50    60   70    80   90    100
 *   threshold:   off  0.95  0.90 0.85  0.80 0.75  0.70 0.65  0.60 0.55  0.50
 *
 * With k = 4 compared words, 0.75 (the middle) accepts one word of four heard
 * differently; 0.5 accepts two; 1.0 wants the words heard identically.
 */
export function falseStartThreshold(sensitivity: number): number | null {
  const level = Math.min(100, Math.max(0, Number.isFinite(sensitivity) ? sensitivity : 0));
  if (level === 0) return null;
  return Math.round((1 - level / 200) * 1000) / 1000;
}

export interface SensitivityPoint {
  false_start_sensitivity: number;
  /** null: detection off. */
  threshold: number | null;
}

/** The curve as data, for documentation and clients. */
export function sensitivityCurve(step = 10): SensitivityPoint[] {
  const points: SensitivityPoint[] = [];
  for (let level = 0; level <= 100; level += step) points.push({ false_start_sensitivity: level, threshold: falseStartThreshold(level) });
  return points;
}

/** Letter edit distance over the longer length: 0 same, 1 nothing in common. */
export function letterDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (!a.length || !b.length) return 1;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]! / Math.max(a.length, b.length);
}

/** 1 − word-level edit distance / length, over two equally long word lists. */
export function phraseResemblance(a: readonly string[], b: readonly string[]): number {
  const length = Math.max(a.length, b.length);
  if (length === 0) return 1;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + letterDistance(a[i - 1]!, b[j - 1]!));
    }
    previous = current;
  }
  return 1 - previous[b.length]! / length;
}

interface FalseTake {
  /** First dropped word. */
  from: number;
  /** The restart: first word kept. */
  restart: number;
}

function findFalseTakes(words: readonly SpokenWord[], threshold: number): FalseTake[] {
  const takes: FalseTake[] = [];
  const matchOf = (from: number, count: number): string[] => words.slice(from, from + count).map((word) => word.match);
  let floor = 0;
  for (let restart = MIN_TAKE_WORDS; restart < words.length; restart += 1) {
    const restartWord = words[restart]!;
    const earliest = Math.max(floor, restart - MAX_FALSE_TAKE_WORDS);
    for (let from = earliest; from <= restart - MIN_TAKE_WORDS; from += 1) {
      const phraseStart = from === 0 || from === floor || gapBetween(words[from - 1]!, words[from]!) >= PHRASE_GAP_MS;
      if (!phraseStart || restartWord.start_ms - words[from]!.start_ms > MAX_FALSE_TAKE_MS) continue;
      const compared = Math.min(COMPARE_WORDS, restart - from);
      if (restart + compared > words.length) continue;
      if (letterDistance(words[from]!.match, restartWord.match) > FIRST_WORD_MAX_DISTANCE) continue;
      if (phraseResemblance(matchOf(from, compared), matchOf(restart, compared)) < threshold) continue;
      takes.push({ from, restart });
      floor = restart;
      break;
    }
  }
  return takes;
}

/**
 * False-start cuts: from the false take's first word (but never within WORD_TAIL_MS
 * of the kept word before it) to WORD_LEAD_IN_MS before the restart's first word.
 * Takes restarted one after the other become one cut. No cut shorter than MIN_CUT_MS.
 */
export function findFalseStartCuts(words: readonly SpokenWord[], sensitivity: number): Cut[] {
  const threshold = falseStartThreshold(sensitivity);
  if (threshold === null) return [];
  const merged: FalseTake[] = [];
  for (const take of findFalseTakes(words, threshold)) {
    const last = merged.at(-1);
    if (last && last.restart === take.from) last.restart = take.restart;
    else merged.push({ ...take });
  }
  const cuts: Cut[] = [];
  for (const { from, restart } of merged) {
    const keptBefore = from > 0 ? words[from - 1]! : null;
    const start = Math.max(words[from]!.start_ms, keptBefore ? keptBefore.end_ms + WORD_TAIL_MS : 0);
    const end = words[restart]!.start_ms - WORD_LEAD_IN_MS;
    if (end - start < MIN_CUT_MS) continue;
    const dropped = words.slice(from, restart).map((word) => word.text);
    cuts.push({ type: 'false_start', start_ms: start, end_ms: end, reason: `False start, restarted: ${quoteWords(dropped)}`, words: { from, to: restart } });
  }
  return cuts;
}
