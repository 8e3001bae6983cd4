import { gapBetween, type SpokenWord } from './words.ts';
import type { Span } from './spans.ts';

/**
 * Where a take and a restart may begin (false-starts.ts): phrase starts the recognizer heard
 * (a pause, a hesitation, punctuation) and pauses the detector heard that the recognizer ran
 * its words over; and what the detector heard of a take (heardSpan).
 */

/** A gap this long between two words starts a phrase. */
export const PHRASE_GAP_MS = 200;

/** A word begins this close to a detected pause's end: speech resumes with it. */
const PAUSE_END_REACH_MS = 150;

/** The last silence starting at or before `ms` (sorted, disjoint silences; binary search). */
function silenceBefore(silences: readonly Span[], ms: number): Span | undefined {
  let low = 0;
  let high = silences.length - 1;
  let found: Span | undefined;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (silences[middle]!.start_ms <= ms) [found, low] = [silences[middle], middle + 1];
    else high = middle - 1;
  }
  return found;
}

/** The detected pause that ends within PAUSE_END_REACH_MS of `ms`, if any. */
function pauseEndingAt(silences: readonly Span[], ms: number): Span | undefined {
  const silence = silenceBefore(silences, ms + PAUSE_END_REACH_MS);
  return silence && Math.abs(silence.end_ms - ms) <= PAUSE_END_REACH_MS ? silence : undefined;
}

/** The least of a word's sound past a pause that makes it a word of what follows (heardSpan, pauseBefore). */
export const SYLLABLE_MS = 100;

/**
 * A span of words as the detector heard it: a first word begun more than PAUSE_END_REACH_MS
 * inside a detected pause (`before`: the pause the take follows, pauseBefore; or else the
 * one the span begins in) starts where the pause ends, a last word ended that far inside
 * one, or run through it and less than SYLLABLE_MS past it, ends where it begins (a
 * recognizer in noise stretches words over the pauses around them).
 */
export function heardSpan(silences: readonly Span[], span: Span, before?: Span): Span {
  const opening = before ?? silenceBefore(silences, span.start_ms);
  const start = opening && opening.end_ms - span.start_ms > PAUSE_END_REACH_MS && opening.end_ms < span.end_ms ? opening.end_ms : span.start_ms;
  const closing = silenceBefore(silences, span.end_ms);
  const end = closing && span.end_ms - closing.start_ms > PAUSE_END_REACH_MS && closing.end_ms + SYLLABLE_MS > span.end_ms && closing.start_ms > start ? closing.start_ms : span.end_ms;
  return { start_ms: start, end_ms: end };
}

/**
 * The detected pause a run's first word (`index`) was timed to begin in, where that pause begins
 * after the word before it ended: the recognizer timed the word early, and the word before's sound
 * runs on to where the pause begins (a cut removing the run starts there, not at the word's time).
 */
export function pauseBegunIn(silences: readonly Span[], words: readonly SpokenWord[], index: number): Span | undefined {
  const word = words[index]!;
  const holding = silenceBefore(silences, word.start_ms);
  if (!holding || holding.end_ms <= word.start_ms) return undefined;
  return index === 0 || words[index - 1]!.end_ms <= holding.start_ms ? holding : undefined;
}

/** A first word heard starting up to this long after a pause's end began at it (a recognizer's late start; takeSound). */
const LATE_WORD_MS = 300;

/**
 * A take's sound as the detector heard it: heardSpan, run back to the end of the pause before
 * it where the recognizer heard the first word start up to LATE_WORD_MS after that pause, and
 * on to the start of the restart's pause (`restartPause`) where the detector heard one begin
 * after the take's last word ended. A recognizer that writes a restarted opening once gives
 * the take's words too little time: "To mute | to mute or unmute" heard as "To mute" in 300 ms
 * and "or" run back over the pause, while the take's sound lasts 560 ms.
 */
export function takeSound(silences: readonly Span[], span: Span, before: Span | undefined, restartPause: Span | undefined): Span {
  const heard = heardSpan(silences, span, before);
  const opening = before ?? silenceBefore(silences, heard.start_ms);
  const start = opening && opening.end_ms <= heard.start_ms && heard.start_ms - opening.end_ms <= LATE_WORD_MS ? opening.end_ms : heard.start_ms;
  const end = restartPause && restartPause.start_ms > heard.end_ms ? restartPause.start_ms : heard.end_ms;
  return { start_ms: start, end_ms: end };
}

/**
 * The detected pause content word `position` follows: one ending within PAUSE_END_REACH_MS
 * of the word's start; one the word begins in and carries on past by SYLLABLE_MS or more
 * (its start run early into the pause, the content word before it begun before the pause:
 * a word ending just after the pause is the detector missing a quiet word's start, not a
 * phrase starting); or one the word runs through, begun before it and carrying on past it
 * by SYLLABLE_MS (the recognizer joined the end of what came before to this word's start).
 * Any of them only where the content word before does not carry SYLLABLE_MS past the pause
 * (a word that does is the first word after it, stretched back; one that ends sooner,
 * begun in the pause or run through it, is the recognizer hearing the room or running the
 * last word before the pause on: the next word starts what follows).
 */
export function pauseBefore(silences: readonly Span[], words: readonly SpokenWord[], content: readonly number[], position: number): Span | undefined {
  const word = words[content[position]!]!;
  const prior = position > 0 ? words[content[position - 1]!] : undefined;
  const holding = silenceBefore(silences, word.start_ms);
  const through = silenceBefore(silences, word.end_ms - SYLLABLE_MS);
  const pause =
    pauseEndingAt(silences, word.start_ms) ??
    (holding && holding.end_ms > word.start_ms && word.end_ms - holding.end_ms >= SYLLABLE_MS && (!prior || prior.start_ms < holding.start_ms) ? holding : undefined) ??
    (through && through.start_ms > word.start_ms && through.end_ms <= word.end_ms - SYLLABLE_MS ? through : undefined);
  return pause && (!prior || prior.end_ms < pause.end_ms + SYLLABLE_MS) ? pause : undefined;
}

/**
 * Whether content word `position` begins a phrase a speaker could start again: the
 * recognizer heard a boundary before it (a pause between two neighbouring words, a
 * hesitation among them, or punctuation since the content word before).
 */
export function isPhraseStart(words: readonly SpokenWord[], content: readonly number[], position: number, restarts: ReadonlySet<number>): boolean {
  if (position === 0 || restarts.has(position)) return true;
  for (let index = content[position - 1]!; index < content[position]!; index += 1) {
    if (words[index]!.punctuated || gapBetween(words[index]!, words[index + 1]!) >= PHRASE_GAP_MS) return true;
  }
  return false;
}

/** Whether the recognizer marked a clause that is no sentence end (a comma, a colon) after one of words `from` ≤ i < `to`. */
export function marksClause(words: readonly SpokenWord[], from: number, to: number): boolean {
  for (let index = from; index < to; index += 1) if (words[index]!.punctuated && !words[index]!.ends_sentence) return true;
  return false;
}

/** Whether a sentence ends in words `from` ≤ i < `to`. */
export function endsSentence(words: readonly SpokenWord[], from: number, to: number): boolean {
  for (let index = from; index < to; index += 1) if (words[index]!.ends_sentence) return true;
  return false;
}

