import type { SoundComparer } from './cepstra.ts';
import type { Span } from './spans.ts';

/**
 * A take by its sound (false-starts.ts): two renditions of the same words by one voice trace
 * about the same path through the spectrum, whatever a recognizer made of either
 * (SoundComparer); a take must sound like its restart's opening, and clearly closer to it
 * than to what the restart says later.
 */

/** A take shorter than this is too little sound to match by (a word or two match anything). */
export const MIN_SOUND_TAKE_MS = 400;
/** … nor one the detector heard less of than this (a word stretched over a pause: heardSpan). */
export const MIN_HEARD_TAKE_MS = 300;
/** A take longer than this is matched by its words only: its sound costs more to align than the words it has give to go on. */
export const MAX_SOUND_TAKE_MS = 8000;
/** The opening of a take compared before the whole of it (soundsAlike). */
const OPENING_MS = 500;
/** Where later in a restart a take is aligned again, in shares of its length (soundsAlike) … */
const CONTRAST_SHIFTS = [0.5, 1, 1.5];
/** … at least this far on … */
const MIN_SHIFT_MS = 300;
/** … and how much closer its restart's opening must sound than the closest of those. */
const MAX_CONTRAST = 0.9;
/** At the default sensitivity, the mean and the worst-stretch distance a take's sound may have from its restart's (SoundComparer). */
const SOUND_BARS = { mean: 5, worst: 6 };

/**
 * The distances under which a take sounds like its restart at a word threshold (the
 * sensitivity's, falseStartThreshold): SOUND_BARS at 0.875 (sensitivity 50), 10 % wider at
 * 0.75 (100), 8 % narrower at 0.975 (10), measured on two renditions of the same words by one
 * voice against different words (docs/decisions.md).
 */
export function barsAt(threshold: number): { mean: number; worst: number } {
  const widening = 1 + (0.875 - threshold) * 0.8;
  return { mean: SOUND_BARS.mean * widening, worst: SOUND_BARS.worst * widening };
}

/** How a take's sound is checked against its restart's: the comparer, the bars at the caller's sensitivity, and the pauses the detector heard. */
export interface TakeSounds {
  comparer: SoundComparer;
  bars: { mean: number; worst: number };
  /** Sorted by start, disjoint. */
  silences: readonly Span[];
}

/**
 * Whether a take sounds like the opening of its restart: under the bars, and clearly
 * closer to it than to what the restart says later (the take aligned at CONTRAST_SHIFTS of
 * its length further on, at least MIN_SHIFT_MS: its mean distance there at most
 * MAX_CONTRAST times the least of those), so that a short take matching any speech of the
 * same voice about as well is no restart's. Its first OPENING_MS are compared first: a
 * restart says them again too, and most takes that are none fail there, at a tenth of the
 * cost of the whole take.
 */
export function soundsAlike(sounds: Pick<TakeSounds, 'comparer' | 'bars'>, take: Span, restartMs: number): boolean {
  if (take.end_ms - take.start_ms > 2 * OPENING_MS) {
    const opening = sounds.comparer.compare({ start_ms: take.start_ms, end_ms: take.start_ms + OPENING_MS }, restartMs);
    if (opening === null || opening.mean > sounds.bars.mean) return false;
  }
  const match = sounds.comparer.compare(take, restartMs);
  if (match === null || match.mean > sounds.bars.mean || match.worst > sounds.bars.worst) return false;
  // the restart's opening, not any speech of this voice: later in the restart the take must sound further off
  const length = take.end_ms - take.start_ms;
  const elsewhere = CONTRAST_SHIFTS.flatMap((share) => sounds.comparer.compare(take, restartMs + Math.max(MIN_SHIFT_MS, share * length))?.mean ?? []);
  return elsewhere.length === 0 || match.mean <= MAX_CONTRAST * Math.min(...elsewhere);
}

