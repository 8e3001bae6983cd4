import { wordCut, type CutRoom } from './boundaries.ts';
import { HESITATIONS } from './fillers.ts';
import type { Cut, WordRun } from './spans.ts';
import { gapBetween, type SpokenWord } from './words.ts';

/**
 * A false start: a take begins, breaks off, and the speaker starts the same phrase
 * again ("so today I want to talk about … so today I want to show you …"). The
 * earlier take goes, the last one stays.
 *
 * Detection, on the word sequence alone, hesitations (um, uh…) skipped: a take starts
 * at a phrase start (the first word, a word after a pause of PHRASE_GAP_MS or more or
 * after punctuation, or the restart of a false start already found) and spans no
 * sentence end; a restart is any later word within MAX_FALSE_TAKE_MS and
 * MAX_FALSE_TAKE_WORDS whose next k words resemble the take's first k words, where
 * k = min(COMPARE_WORDS, words in the take) and k ≥ MIN_TAKE_WORDS; a take the
 * recognizer heard completed (full stop, question or exclamation mark) is compared
 * over all its words, so "We fix the audio. We fix the video." is two sentences, not
 * a false start, while a sentence said twice is a retake. Resemblance is
 * 1 − (word-level edit distance / k), a substitution costing the two words'
 * normalised letter edit distance (a word misheard as a near neighbour, "want"/"wont",
 * costs little; a different word costs 1; a take's last word broken off, "sh-"/"show",
 * nothing); the first words must resemble each other too. Of the takes a restart
 * matches, the earliest goes (the longest false take); every word of a matched take is
 * dropped, so takes restarted one after the other go as one edit, and a lower
 * threshold only ever drops more words.
 */
const PHRASE_GAP_MS = 250;
export const MAX_FALSE_TAKE_MS = 10_000;
export const MAX_FALSE_TAKE_WORDS = 25;
const COMPARE_WORDS = 4;
const MIN_TAKE_WORDS = 2;
/** Two first words "resemble" when at most this share of their letters differs. */
const FIRST_WORD_MAX_DISTANCE = 0.34;

/**
 * false_start_sensitivity (0–100) → the resemblance a restart needs (0..1).
 * 0 turns detection off; from there the threshold falls linearly, 1 − s/400:
 *
 *   sensitivity:  0    10     20    30     40    50     60    70     80    90     100
 *   threshold:   off  0.975  0.95  0.925  0.90  0.875  0.85  0.825  0.80  0.775  0.75
 *
 * With k = 4 compared words the default (50, 0.875) forgives half a word of four
 * misheard (a near neighbour, "want"/"wont"), so "this is the timeline. This is the
 * inspector" is not a false start; 100 forgives one wholly different word of four;
 * low levels want the words heard (almost) identically.
 */
export function falseStartThreshold(sensitivity: number): number | null {
  const level = Math.min(100, Math.max(0, Number.isFinite(sensitivity) ? sensitivity : 0));
  if (level === 0) return null;
  return Math.round((1 - level / 400) * 1000) / 1000;
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

/**
 * Edit distance between two sequences: insertions and deletions cost 1, a substitution
 * what `cost` says (0..1). Once every alignment costs more than `limit` it stops: Infinity.
 */
function editDistance<T>(a: ArrayLike<T>, b: ArrayLike<T>, cost: (i: number, j: number) => number, limit = Infinity): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    let cheapest = i;
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost(i - 1, j - 1));
      cheapest = Math.min(cheapest, current[j]!);
    }
    if (cheapest > limit) return Infinity;
    previous = current;
  }
  return previous[b.length]!;
}

/** Letter edit distance over the longer length: 0 same, 1 nothing in common. */
export function letterDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (!a.length || !b.length) return 1;
  return editDistance(a, b, (i, j) => (a[i] === b[j] ? 0 : 1)) / Math.max(a.length, b.length);
}

export interface ResemblanceOptions {
  /** The take's last word may be the start of the restart's word: the speaker broke off in the middle of it ("sh-", "show"). */
  brokenOff?: boolean;
  /** Below this the exact value does not matter: the comparison stops early (−Infinity). */
  atLeast?: number;
  /** Letter distance of two words (letterDistance, or a memo of it). */
  distance?: (a: string, b: string) => number;
}

/** 1 − word-level edit distance / length, over two equally long word lists (a take's first words, a restart's). */
export function phraseResemblance(take: readonly string[], restart: readonly string[], options: ResemblanceOptions = {}): number {
  const { brokenOff = false, atLeast = -Infinity, distance = letterDistance } = options;
  const length = Math.max(take.length, restart.length);
  if (length === 0) return 1;
  const cost = (i: number, j: number): number => (brokenOff && i === take.length - 1 && restart[j]!.startsWith(take[i]!) ? 0 : distance(take[i]!, restart[j]!));
  return 1 - editDistance(take, restart, cost, (1 - atLeast) * length + 1e-9) / length;
}

/**
 * Whether content word `position` begins a phrase a speaker could start again: the
 * recognizer heard a boundary before it (a pause between two neighbouring words, a
 * hesitation among them, or punctuation since the content word before).
 */
function isPhraseStart(words: readonly SpokenWord[], content: readonly number[], position: number, restarts: ReadonlySet<number>): boolean {
  if (position === 0 || restarts.has(position)) return true;
  for (let index = content[position - 1]!; index < content[position]!; index += 1) {
    if (words[index]!.punctuated || gapBetween(words[index]!, words[index + 1]!) >= PHRASE_GAP_MS) return true;
  }
  return false;
}

/** Whether a sentence ends in words `from` ≤ i < `to`. */
function endsSentence(words: readonly SpokenWord[], from: number, to: number): boolean {
  for (let index = from; index < to; index += 1) if (words[index]!.ends_sentence) return true;
  return false;
}

/**
 * The dropped takes at a resemblance threshold: maximal runs of words that some
 * matched take covers. The last take of a phrase is never in a run.
 */
export function findFalseTakes(words: readonly SpokenWord[], threshold: number): WordRun[] {
  // Positions of the words that count: a hesitation is no word of a phrase.
  const content = words.flatMap((word, index) => (HESITATIONS.includes(word.match) ? [] : [index]));
  const matchAt = (position: number, count: number): string[] => content.slice(position, position + count).map((index) => words[index]!.match);
  // A speaker's vocabulary is small: each pair of words is measured once.
  const distances = new Map<string, Map<string, number>>();
  const distance = (a: string, b: string): number => {
    let row = distances.get(a);
    if (!row) distances.set(a, (row = new Map()));
    let known = row.get(b);
    if (known === undefined) row.set(b, (known = letterDistance(a, b)));
    return known;
  };
  const dropped = new Array<boolean>(words.length).fill(false);
  const restarts = new Set<number>();
  for (let restart = MIN_TAKE_WORDS; restart < content.length; restart += 1) {
    const restartWord = words[content[restart]!]!;
    for (let from = Math.max(0, restart - MAX_FALSE_TAKE_WORDS); from <= restart - MIN_TAKE_WORDS; from += 1) {
      const takeWord = words[content[from]!]!;
      if (restartWord.start_ms - takeWord.start_ms > MAX_FALSE_TAKE_MS) continue;
      if (distance(takeWord.match, restartWord.match) > FIRST_WORD_MAX_DISTANCE) continue;
      if (!isPhraseStart(words, content, from, restarts)) continue;
      // A false take is at most one sentence; one the recognizer heard completed must come again whole (a retake).
      if (endsSentence(words, content[from]!, content[restart - 1]!)) continue;
      const complete = endsSentence(words, content[restart - 1]!, content[restart]!);
      const compared = complete ? restart - from : Math.min(COMPARE_WORDS, restart - from);
      if (restart + compared > content.length) continue;
      const resemblance = phraseResemblance(matchAt(from, compared), matchAt(restart, compared), { brokenOff: compared === restart - from, atLeast: threshold, distance });
      if (resemblance < threshold) continue;
      dropped.fill(true, content[from]!, content[restart]!);
      restarts.add(restart);
      break;
    }
  }
  const takes: WordRun[] = [];
  for (let index = 0; index < words.length; index += 1) {
    if (!dropped[index]) continue;
    const last = takes.at(-1);
    if (last && last.to === index) last.to = index + 1;
    else takes.push({ from: index, to: index + 1 });
  }
  return takes;
}

/**
 * False-start cuts: one per dropped run, over its words whole (wordCutSpan: from the
 * lead-in of the false take to the lead-in of the restart, never into a kept word);
 * none shorter than MIN_CUT_MS.
 */
export function findFalseStartCuts(words: readonly SpokenWord[], sensitivity: number, room: CutRoom): Cut[] {
  const threshold = falseStartThreshold(sensitivity);
  if (threshold === null) return [];
  return findFalseTakes(words, threshold).flatMap((run) => wordCut('false_start', 'False start, restarted', words, run, room) ?? []);
}
