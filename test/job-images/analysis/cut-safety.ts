import { AssertionError } from 'chai';
import { falseStartThreshold, letterDistance, wordsSaidAgain } from '../../../job-images/whisper/src/analysis/false-starts.ts';
import { HESITATIONS, SET_OFF_FILLERS } from '../../../job-images/whisper/src/analysis/fillers.ts';
import { SHORTEST_KEPT_SIDE_MS } from '../../../job-images/whisper/src/analysis/silences.ts';
import { MIN_CUT_MS, type Cut, type Span } from '../../../job-images/whisper/src/analysis/spans.ts';
import { WORD_LEAD_IN_MS, WORD_TAIL_MS, type SpokenWord } from '../../../job-images/whisper/src/analysis/words.ts';

/**
 * What "a cut overlaps a word" means: they share time. A word is [start, end]; a cut
 * ending where a word starts, or starting where it ends, does not overlap it. A word
 * of no length at t is overlapped by a cut with start < t < end.
 */
export function overlaps(cut: Span, word: Span): boolean {
  return cut.start_ms < word.end_ms && word.start_ms < cut.end_ms;
}

// Plain checks, not chai's expect: the property tests make millions of them.
function check(holds: boolean, message: () => string): void {
  if (!holds) throw new AssertionError(message());
}

const LOOSEST_THRESHOLD = falseStartThreshold(100)!;
const FILLER_WORDS = new Set([...HESITATIONS, ...SET_OFF_FILLERS.flat()]);

function echoes(word: SpokenWord, others: readonly SpokenWord[]): boolean {
  return others.some((other) => letterDistance(word.match, other.match) <= 0.34);
}

export interface SafetyOptions {
  /** Word cuts straight from a finder cover all their words; in the plan a filler may keep only some (the others inside a false start). */
  everyWordCovered: boolean;
}

/**
 * Rule 4, the product's promise: cuts are whole milliseconds, at least MIN_CUT_MS long
 * (so start < end), inside [0, duration], in order and disjoint; a silence cut overlaps no word and keeps the
 * guard bands of every word (a shortened pause, at least SHORTEST_KEPT_SIDE_MS of itself next to every word); a filler or false-start cut overlaps only the words it
 * removes and covers each of them whole (less what a sloppy recognizer let overlap a
 * kept word: that belongs to the kept word); a filler cut removes only filler words, a
 * false-start cut only takes said again (up to the kept take, which it never touches).
 */
export function expectCutsSafe(words: readonly SpokenWord[], durationMs: number, cuts: readonly Cut[], options: SafetyOptions): void {
  let previousEnd = 0;
  for (const cut of cuts) {
    const where = (): string => `${cut.type} cut [${cut.start_ms}, ${cut.end_ms}] of a ${durationMs} ms source`;
    check(Number.isInteger(cut.start_ms) && Number.isInteger(cut.end_ms), () => `${where()}: not whole ms`);
    check(cut.end_ms - cut.start_ms >= MIN_CUT_MS, () => `${where()}: shorter than ${MIN_CUT_MS} ms`);
    check(cut.start_ms >= previousEnd, () => `${where()}: starts before the previous cut ends (${previousEnd})`);
    check(cut.end_ms <= durationMs, () => `${where()}: past the end`);
    previousEnd = cut.end_ms;
    const overlapped = words.flatMap((word, index) => (overlaps(cut, word) ? [index] : []));
    if (cut.type === 'silence') {
      check(overlapped.length === 0, () => `${where()} overlaps word ${overlapped[0]} "${words[overlapped[0]!]!.text}"`);
      // a shortened pause (issue 39) keeps at least SHORTEST_KEPT_SIDE_MS of itself next to every word; one removed whole, the guard bands
      const [tail, leadIn] = cut.kept ? [SHORTEST_KEPT_SIDE_MS, SHORTEST_KEPT_SIDE_MS] : [WORD_TAIL_MS, WORD_LEAD_IN_MS];
      for (const word of words) {
        check(word.end_ms > cut.start_ms || cut.start_ms - word.end_ms >= tail, () => `${where()}: no tail after "${word.text}" (${word.end_ms})`);
        check(word.start_ms < cut.end_ms || word.start_ms - cut.end_ms >= leadIn, () => `${where()}: no lead-in before "${word.text}" (${word.start_ms})`);
      }
      continue;
    }
    const { from, to } = cut.words!;
    check(from < to, () => `${where()}: removes no words`);
    for (const index of overlapped) check(from <= index && index < to, () => `${where()} overlaps kept word ${index} "${words[index]!.text}" (it removes ${from}..${to - 1})`);
    const keptUntil = words.slice(0, from).reduce((until, word) => Math.max(until, word.end_ms), 0);
    const keptNext = Math.min(durationMs, words[to]?.start_ms ?? durationMs);
    for (let index = from; index < to; index += 1) {
      if (!options.everyWordCovered && !overlapped.includes(index)) continue;
      const word = words[index]!;
      const part = { start_ms: Math.max(word.start_ms, keptUntil), end_ms: Math.min(word.end_ms, keptNext) };
      if (part.end_ms < part.start_ms) continue;
      check(cut.start_ms <= part.start_ms && part.end_ms <= cut.end_ms, () => `${where()} leaves part of word ${index} "${word.text}" [${part.start_ms}, ${part.end_ms}]`);
    }
    const removed = words.slice(from, to);
    if (cut.type === 'filler') {
      for (const word of removed) check(FILLER_WORDS.has(word.match), () => `${where()} removes "${word.text}", no filler`);
      continue;
    }
    // Each dropped take is said again: its first word comes back later in the run or as the restart, and the restart echoes a word of the run;
    // or, first words misheard (or the take's not heard again), a restart within the run or after it says the run's words again as
    // letters, all or all but the first (wordsSaidAgain at the loosest threshold any sensitivity uses).
    const restart = words[to];
    check(restart !== undefined, () => `${where()}: no restart after it`);
    const takeStart = removed.findIndex((word) => !HESITATIONS.includes(word.match));
    const forms = (list: readonly SpokenWord[]): string[] => list.filter((word) => !HESITATIONS.includes(word.match)).map((word) => word.match);
    const heard = (takeSkip: number, restartSkip: number, at: number): number =>
      wordsSaidAgain(forms(words.slice(from, at)).slice(takeSkip), forms(words.slice(at, at + 40)).slice(restartSkip), LOOSEST_THRESHOLD).words;
    const firstSaidAgain = echoes(removed[takeStart]!, [...removed.slice(takeStart + 1), restart!]);
    const restartEchoes = echoes(restart!, removed);
    let saidByLetters = false;
    for (let at = from + 1; at <= to && !(firstSaidAgain && restartEchoes) && !saidByLetters; at += 1) saidByLetters = heard(0, 0, at) >= 2 || heard(1, 1, at) >= 2 || heard(1, 0, at) >= 2;
    if (saidByLetters) continue;
    check(firstSaidAgain, () => `${where()}: "${removed[takeStart]!.text}" is never said again`);
    check(restartEchoes, () => `${where()}: the restart "${restart!.text}" echoes nothing it drops`);
  }
}
