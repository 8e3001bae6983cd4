import { wordCut, type CutRoom, type WordPauses } from './boundaries.ts';
import type { SoundComparer } from './cepstra.ts';
import { HESITATIONS } from './fillers.ts';
import type { Cut, Span, WordRun } from './spans.ts';
import { gapBetween, type SpokenWord } from './words.ts';

/**
 * A false start: a take begins, breaks off, and the speaker starts the same phrase
 * again ("so today I want to talk about … so today I want to show you …"). The
 * earlier take goes, the last one stays.
 *
 * Detection, on the word sequence alone, hesitations (um, uh…) skipped, and so are the
 * words the caller knows were heard in the room's noise alone (noiseWords): a take starts
 * at a phrase start (the first word, a word after a pause of PHRASE_GAP_MS or more or
 * after punctuation, or the restart of a false start already found) and spans no
 * sentence end; a restart is any later word within MAX_FALSE_TAKE_MS and
 * MAX_FALSE_TAKE_WORDS that says the take again, in either of two ways:
 *
 * - its words: the first words resemble each other, and the restart's next k words
 *   resemble the take's first k words, where k = min(COMPARE_WORDS, words in the take)
 *   and k ≥ MIN_TAKE_WORDS. Resemblance is 1 − (word-level edit distance / k), a
 *   substitution costing the two words' normalised letter edit distance (a word misheard
 *   as a near neighbour, "want"/"wont", costs little; a different word costs 1; a take's
 *   last word broken off, "sh-"/"show", nothing);
 * - its letters, when the restart follows a break (a pause, a hesitation, punctuation: a
 *   speaker who broke off): the take's words and the restart's run together into letters
 *   (wordsSaidAgain), so a recognizer that splits or joins words ("pbx"/"p b x") or
 *   mishears the first word of each take differently ("please add"/"lee said") is
 *   forgiven as far as the letters go. The restart must say again the whole take, or at
 *   least COMPARE_WORDS of its words, with MIN_SAID_LETTERS letters or more (a
 *   recognizer's noise heard twice, "but I … but I", is too little to go on). Where both
 *   first words were misheard as words of about their length, or the take's first word is
 *   a short one (SHORT_WORD_MS) the recognizer did not hear again at the restart ("to
 *   decrease" heard as "you decrease" and "decrease"), the rest of the take is what must
 *   come again.
 *
 * Either way a take may run on past what the restart says again by at most
 * UNSAID_WORDS words (a take that diverges: "talk about"/"show you"), unless its
 * letters as a whole come again with at most twice the share wrong the threshold
 * allows and the restart follows a break (a phrase that recurs inside running speech
 * does not carry off the sentence before it); so "if you'd like to learn more about …
 * dial one now | if you'd like to test …" is two sentences opening alike even where the
 * recognizer gives no punctuation. A take the recognizer heard completed (full stop,
 * question or exclamation mark) must come again whole: "We fix the audio. We fix the
 * video." is two sentences, not a false start, while a sentence said twice is a retake.
 * One across or ending at a clause mark it heard (Whisper's comma: "… to other participants,
 * to reset your speaking volume …") that comes again only by its letters, in part, is a
 * clause said whole before one that opens alike unless its sound says it is a take.
 *
 * Where the words fail, the sound: where the recording's cepstra are known (a
 * SoundComparer), a take of MIN_SOUND_TAKE_MS to MAX_SOUND_TAKE_MS (even of one word: a phrase heard
 * as one long word, "to mute or unmute" as "cumulative") that the recognizer did not hear
 * completed, followed by a restart after a break, is a false take when the restart's
 * opening sounds like it (soundsAlike; the recognizer may have heard the two renditions
 * as different words, "me you to walk" / "mute or commuter": the voice said the same
 * thing twice). Its sound is taken where the detector heard it (heardSpan: a word
 * stretched over the pause before or after the take does not carry the pause into the
 * comparison), and must be MIN_HEARD_TAKE_MS long there.
 *
 * The sound also checks the words: a take said again by a restart with no break before
 * it (no pause, hesitation or punctuation) may be one stretch the recognizer heard twice
 * ("twenty eight twenty eight" in a reverberant room); where the take is long enough to
 * tell, it must sound like the restart's opening too.
 *
 * Where the cepstra are known, a break, before the take and before the restart, for the
 * words as for the sound, may also be a pause the detector heard that the recognizer ran
 * its words over (pauseBefore: in a babble it hears words in the pause and leaves no gap
 * between them, or starts a take's first word early, inside the pause).
 *
 * Of the takes a restart matches, the earliest goes (the longest false take); every word
 * of a matched take is dropped, so takes restarted one after the other go as one edit,
 * and a lower threshold only ever drops more words (every test above is passed by more at
 * a lower threshold).
 */
const PHRASE_GAP_MS = 200;
export const MAX_FALSE_TAKE_MS = 10_000;
export const MAX_FALSE_TAKE_WORDS = 25;
const COMPARE_WORDS = 4;
const MIN_TAKE_WORDS = 2;
/** Two first words "resemble" when at most this share of their letters differs. */
const FIRST_WORD_MAX_DISTANCE = 0.34;
/** Words a take may run on past those its restart says again. */
const UNSAID_WORDS = 3;
/** The letters a restart must say again of a take it matches by letters. */
const MIN_SAID_LETTERS = 8;
/** What an edit in the first word of either take costs, heard as letters (wordsSaidAgain). */
const ONSET_COST = 0.4;
/** A take's last word heard as a different word is a fragment when it lasts at most this share of the restart's word in its place. */
const FRAGMENT_SHARE = 0.7;
/** Two renditions of one word last about as long: at most this many times the other … */
const SAME_WORD_SPAN = 1.5;
/** … give or take what a recognizer's timing moves two word ends by (50 ms each). */
const WORD_TIMING_MS = 100;
/** A take's first word this short ("to", "the", "a") may go unheard in its restart. */
const SHORT_WORD_MS = 200;

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

/** A take shorter than this is too little sound to match by (a word or two match anything). */
const MIN_SOUND_TAKE_MS = 400;
/** … nor one the detector heard less of than this (a word stretched over a pause: heardSpan). */
const MIN_HEARD_TAKE_MS = 300;
/** A take longer than this is matched by its words only: its sound costs more to align than the words it has give to go on. */
const MAX_SOUND_TAKE_MS = 8000;
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
 * false_start_sensitivity (0–100) → the distances under which a take sounds like its
 * restart: SOUND_BARS at 50, 10 % wider at 100, 8 % narrower at 10 (measured on two
 * renditions of the same words by one voice against different words: see
 * docs/decisions.md). null: detection off.
 */
export function soundBars(sensitivity: number): { mean: number; worst: number } | null {
  const threshold = falseStartThreshold(sensitivity);
  if (threshold === null) return null;
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
const SYLLABLE_MS = 100;

/**
 * A span of words as the detector heard it: a first word begun more than PAUSE_END_REACH_MS
 * inside a detected pause (`before`: the pause the take follows, pauseBefore; or else the
 * one the span begins in) starts where the pause ends, a last word ended that far inside
 * one, or run through it and less than SYLLABLE_MS past it, ends where it begins (a
 * recognizer in noise stretches words over the pauses around them).
 */
function heardSpan(silences: readonly Span[], span: Span, before?: Span): Span {
  const opening = before ?? silenceBefore(silences, span.start_ms);
  const start = opening && opening.end_ms - span.start_ms > PAUSE_END_REACH_MS && opening.end_ms < span.end_ms ? opening.end_ms : span.start_ms;
  const closing = silenceBefore(silences, span.end_ms);
  const end = closing && span.end_ms - closing.start_ms > PAUSE_END_REACH_MS && closing.end_ms + SYLLABLE_MS > span.end_ms && closing.start_ms > start ? closing.start_ms : span.end_ms;
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
function pauseBefore(silences: readonly Span[], words: readonly SpokenWord[], content: readonly number[], position: number): Span | undefined {
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

/** What the restart says again of a take, heard as letters (wordsSaidAgain). */
export interface SaidAgain {
  /** The most take words, from its first, said again with at most (1 − threshold) of their letters wrong; 0 when none. */
  words: number;
  /** Whether the whole take is said again with at most twice that share wrong (told only once COMPARE_WORDS words are said again). */
  whole: boolean;
}

const LETTERS = new Map<string, string>();
/** A word's letters and digits ("you'd" → "youd"). */
function lettersOf(word: string): string {
  let known = LETTERS.get(word);
  if (known === undefined) {
    known = word.replace(/[^\p{L}\p{N}]/gu, '');
    if (LETTERS.size < 10_000) LETTERS.set(word, known);
  }
  return known;
}

/**
 * How much of a take the restart says again, heard as letters: the take's words and the
 * restart's each run together into one string of letters (a recognizer splits and joins
 * words freely: "call"/"to all", "pbx"/"p b x"), the restart's letters past the take's
 * free (the take may break off anywhere, even mid-word). The share wrong is the letter
 * edit distance ÷ the take's letters so far, where a letter of either take's first word
 * misheard (substituted) or heard extra in the restart costs only ONSET_COST: a
 * recognizer hears a phrase's first word worst, with no words before it to go by. A take
 * letter not heard again costs 1 wherever it is, so a word before the phrase ("and so
 * today …"/"so today …") is no part of its take.
 */
export function wordsSaidAgain(take: readonly string[], restart: readonly string[], threshold: number): SaidAgain {
  const letters = (list: readonly string[]): string => list.map(lettersOf).join('');
  const a = letters(take);
  const ends: number[] = [];
  let length = 0;
  for (const word of take) ends.push((length += lettersOf(word).length));
  const wrong = 1 - threshold;
  const limit = 2 * wrong * a.length + 1e-9;
  // the restart's opening: as many letters as could align with the take's
  const b = letters(restart).slice(0, a.length + Math.ceil(limit) + 1);
  const takeOnset = ends[0] ?? 0;
  const restartOnset = letters(restart.slice(0, 1)).length;
  const misheard = (i: number, j: number): number => (i <= takeOnset || j <= restartOnset ? ONSET_COST : 1);
  let previous = [0];
  for (let j = 1; j <= b.length; j += 1) previous.push(previous[j - 1]! + misheard(0, j));
  let said = 0;
  let word = 0;
  for (let i = 1; i <= a.length; i += 1) {
    const current = [previous[0]! + 1];
    let cheapest = current[0]!;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = misheard(i, j);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + cost, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : cost));
      cheapest = Math.min(cheapest, current[j]!);
    }
    // past saying COMPARE_WORDS again, or the whole take loosely: what is said so far is all there is
    if (cheapest > limit || (said < COMPARE_WORDS && cheapest > wrong * a.length + 1e-9)) return { words: said, whole: false };
    while (word < ends.length && ends[word]! < i) word += 1;
    for (; word < ends.length && ends[word] === i; word += 1) if (cheapest <= wrong * i + 1e-9) said = word + 1;
    previous = current;
  }
  return { words: said, whole: said >= COMPARE_WORDS };
}

const spoken = (word: SpokenWord): number => word.end_ms - word.start_ms;

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

/** Whether the recognizer marked a clause that is no sentence end (a comma, a colon) after one of words `from` ≤ i < `to`. */
function marksClause(words: readonly SpokenWord[], from: number, to: number): boolean {
  for (let index = from; index < to; index += 1) if (words[index]!.punctuated && !words[index]!.ends_sentence) return true;
  return false;
}

/** Whether a sentence ends in words `from` ≤ i < `to`. */
function endsSentence(words: readonly SpokenWord[], from: number, to: number): boolean {
  for (let index = from; index < to; index += 1) if (words[index]!.ends_sentence) return true;
  return false;
}

/** A run of dropped words, and the pauses the detector heard before it and before the restart after it (WordPauses). */
export interface FalseTake extends WordRun {
  pauses: WordPauses;
}

/**
 * The dropped takes at a resemblance threshold: maximal runs of words that some
 * matched take covers. The last take of a phrase is never in a run.
 */
export function findFalseTakes(words: readonly SpokenWord[], threshold: number, noise: ReadonlySet<number> = new Set(), sounds?: TakeSounds): FalseTake[] {
  // Positions of the words that count: a hesitation is no word of a phrase, nor a word heard in the room's noise alone.
  const content = words.flatMap((word, index) => (HESITATIONS.includes(word.match) || noise.has(index) ? [] : [index]));
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
  // the pause the detector heard before each content word (pauseBefore), by word: it depends on the word alone
  const pausesBefore = new Array<Span | undefined>(words.length);
  if (sounds) for (const [position, index] of content.entries()) pausesBefore[index] = pauseBefore(sounds.silences, words, content, position);
  // a take of one word is matched by its sound alone
  const fewest = sounds ? 1 : MIN_TAKE_WORDS;
  for (let restart = fewest; restart < content.length; restart += 1) {
    const restartWord = words[content[restart]!]!;
    // the restart heard after a break (a pause, a hesitation, punctuation): a speaker who broke off; or after a pause
    // the detector heard, where the recognizer ran its words over it (a babble)
    const pausedBefore = pausesBefore[content[restart]!];
    const afterBreak = isPhraseStart(words, content, restart, restarts) || pausedBefore !== undefined;
    for (let from = Math.max(0, restart - MAX_FALSE_TAKE_WORDS); from <= restart - fewest; from += 1) {
      const takeWord = words[content[from]!]!;
      if (restartWord.start_ms - takeWord.start_ms > MAX_FALSE_TAKE_MS) continue;
      const firstAlike = distance(takeWord.match, restartWord.match) <= FIRST_WORD_MAX_DISTANCE;
      // a take starts after a break too, heard by the recognizer or the detector
      const takePause = pausesBefore[content[from]!];
      const phraseStart = isPhraseStart(words, content, from, restarts) || takePause !== undefined;
      if (!phraseStart || (!firstAlike && !afterBreak)) continue;
      // A false take is at most one sentence; one the recognizer heard completed must come again whole (a retake).
      if (endsSentence(words, content[from]!, content[restart - 1]!)) continue;
      const complete = endsSentence(words, content[restart - 1]!, content[restart]!);
      const taken = restart - from;
      const take = matchAt(from, taken);
      const compared = complete ? taken : Math.min(COMPARE_WORDS, taken);
      const resembles =
        firstAlike &&
        restart + compared <= content.length &&
        phraseResemblance(take.slice(0, compared), matchAt(restart, compared), { brokenOff: compared === taken, atLeast: threshold, distance }) >= threshold;
      // the take's sound against the restart's opening: null when too short or too long to tell
      const sounded = (): boolean | null => {
        if (!sounds) return null;
        // (its length as its words span it; its sound where the detector heard it)
        const wordSpan = { start_ms: takeWord.start_ms, end_ms: words[content[restart - 1]!]!.end_ms };
        const length = wordSpan.end_ms - wordSpan.start_ms;
        const heardTake = heardSpan(sounds.silences, wordSpan, takePause);
        if (length < MIN_SOUND_TAKE_MS || length > MAX_SOUND_TAKE_MS || heardTake.end_ms - heardTake.start_ms < MIN_HEARD_TAKE_MS) return null;
        return soundsAlike(sounds, heardTake, pausedBefore?.end_ms ?? restartWord.start_ms);
      };
      let matched: boolean;
      if (taken < MIN_TAKE_WORDS || !phraseStart || (!firstAlike && !afterBreak)) matched = false;
      else if (resembles && taken - compared <= UNSAID_WORDS) matched = true;
      else if (!resembles && !afterBreak) matched = false;
      else {
        const heard = wordsSaidAgain(take, matchAt(restart, taken + UNSAID_WORDS), threshold);
        // a take may run on past the words said again, a few words or loosely said again whole (not a second sentence that
        // opens alike); a long take said again only loosely, by a restart after a break: a speaker who abandons a long
        // sentence stops before starting over, while a phrase that recurs inside running speech is no restart
        const runsOn = taken - heard.words <= UNSAID_WORDS || (heard.whole && afterBreak);
        if (resembles) matched = runsOn;
        else {
          const lastWord = words[content[restart - 1]!]!;
          // the take's last word broken off and misheard as another, shorter word ("kick-" heard "hit" before "kicked"),
          // against the restart's word in its place once `restartSkip` and `takeSkip` first words are passed over
          const brokenOff = (takeSkip: number, restartSkip: number): boolean => {
            const inItsPlace = words[content[restart + restartSkip + taken - takeSkip - 1] ?? -1];
            return !complete && inItsPlace !== undefined && spoken(lastWord) <= FRAGMENT_SHARE * spoken(inItsPlace);
          };
          // both first words misheard, each as some other word of about its length ("he said your …"/"the city of …"): the rest must come again
          // (not a word before a phrase of its own: "conference | to decrease …")
          const firstSpans = [spoken(takeWord), spoken(restartWord)];
          const ownPhrase = taken <= MIN_TAKE_WORDS || isPhraseStart(words, content, from + 1, restarts);
          const pairs = Math.max(...firstSpans) <= SAME_WORD_SPAN * Math.min(...firstSpans) + WORD_TIMING_MS && !ownPhrase;
          // the take's first word, a short one, not heard again: the recognizer missed the restart's ("to decrease …" heard
          // "you decrease …" and "decrease …"); the rest must come again from the restart's first word
          const unheardFirst = spoken(takeWord) <= SHORT_WORD_MS && !ownPhrase;
          const alignments = [
            { takeSkip: 0, restartSkip: 0 },
            ...(pairs ? [{ takeSkip: 1, restartSkip: 1 }] : []),
            ...(unheardFirst ? [{ takeSkip: 1, restartSkip: 0 }] : []),
          ];
          const saidAgain = alignments.find(({ takeSkip, restartSkip }) => {
            const core = takeSkip === 0 ? heard : wordsSaidAgain(take.slice(takeSkip), matchAt(restart + restartSkip, taken - takeSkip + UNSAID_WORDS), threshold);
            const unsaid = taken - takeSkip - core.words;
            const enough = core.words >= MIN_TAKE_WORDS && take.slice(takeSkip, takeSkip + core.words).join('').length >= MIN_SAID_LETTERS;
            return enough && (unsaid === 0 || (unsaid === 1 && brokenOff(takeSkip, restartSkip)) || (!complete && core.words >= COMPARE_WORDS && (unsaid <= UNSAID_WORDS || core.whole)));
          });
          // a take said again only in part and loosely across or at the end of a clause the recognizer marked ("… to other
          // participants, | to reset your speaking volume …", "4 or 6 to … volume, | 7 or 9 to …": Whisper's comma) may be a
          // clause said whole before one that opens alike: only its sound can make it a take
          matched = saidAgain !== undefined && (!marksClause(words, content[from]!, content[restart - 1]! + 1) || (sounded() ?? false));
        }
      }
      // words said again with no break before them may be one stretch the recognizer heard twice: where the sound can tell, it must agree
      if (matched && !afterBreak) matched = sounded() ?? true;
      // (a take of one word heard as the restart's first word is that word said twice, "five … five of spades", left as the words leave it)
      else if (!matched && afterBreak && !complete && !(taken === 1 && take[0] === restartWord.match)) matched = sounded() ?? false;
      if (!matched) continue;
      dropped.fill(true, content[from]!, content[restart]!);
      restarts.add(restart);
      break;
    }
  }
  const runs: WordRun[] = [];
  for (let index = 0; index < words.length; index += 1) {
    if (!dropped[index]) continue;
    const last = runs.at(-1);
    if (last && last.to === index) last.to = index + 1;
    else runs.push({ from: index, to: index + 1 });
  }
  return runs.map((run) => ({ ...run, pauses: { before: pausesBefore[run.from], after: pausesBefore[run.to] } }));
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

/**
 * False-start cuts: one per dropped run, over its words whole (wordCutSpan: from the
 * lead-in of the false take to the lead-in of the restart, never into a kept word, nor
 * across the pauses the detector heard around the take); none shorter than MIN_CUT_MS.
 * With the recording's sound (`heard`), each says where the take and its restart were heard.
 */
export function findFalseStartCuts(
  words: readonly SpokenWord[],
  sensitivity: number,
  room: CutRoom,
  noise: ReadonlySet<number> = new Set(),
  heard?: { comparer: SoundComparer; silences: readonly Span[] },
): Cut[] {
  const threshold = falseStartThreshold(sensitivity);
  const bars = soundBars(sensitivity);
  if (threshold === null || bars === null) return [];
  return findFalseTakes(words, threshold, noise, heard && { ...heard, bars }).flatMap((take) => {
    const cut = wordCut('false_start', 'False start, restarted', words, take, room, take.pauses);
    if (!cut || !heard || take.to >= words.length) return cut ?? [];
    // the take as the finder compared it: its sound where the detector heard it, against the restart from where it heard that begin
    const span = heardSpan(heard.silences, { start_ms: words[take.from]!.start_ms, end_ms: words[take.to - 1]!.end_ms }, take.pauses.before);
    return { ...cut, heard: { take: span, restart_ms: take.pauses.after?.end_ms ?? words[take.to]!.start_ms } };
  });
}
