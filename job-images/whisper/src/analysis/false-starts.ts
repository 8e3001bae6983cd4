import { wordCut, type CutRoom, type WordPauses } from './boundaries.ts';
import type { SoundComparer } from './cepstra.ts';
import { endsSentence, heardSpan, isPhraseStart, marksClause, pauseBefore, pauseBegunIn, SYLLABLE_MS, takeSound } from './false-start-candidates.ts';
import { FALSE_START_RULES, MIN_TAKE_WORDS, UNSAID_WORDS, type Candidate, type FalseStartRule } from './false-start-rules.ts';
import { barsAt, MAX_SOUND_TAKE_MS, MIN_HEARD_TAKE_MS, MIN_SOUND_TAKE_MS, soundsAlike, type TakeSounds } from './false-start-sound.ts';
import { COMPARE_WORDS, letterDistance, phraseResemblance, SAME_WORD_DISTANCE, wordsSaidAgain, wordsSaidOtherwise, type SaidAgain } from './false-start-words.ts';
import { HESITATIONS } from './fillers.ts';
import { quoteWords, type Cut, type Span, type WordRun } from './spans.ts';
import type { SpokenWord } from './words.ts';

export { letterDistance, phraseResemblance, wordsSaidAgain, wordsSaidOtherwise, type ResemblanceOptions, type SaidAgain, type Unsaid } from './false-start-words.ts';
export { soundsAlike, type TakeSounds } from './false-start-sound.ts';
export { FALSE_START_RULES, type FalseStartRule } from './false-start-rules.ts';

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
 * thing twice). Its sound is taken where the detector heard it (takeSound: a word
 * stretched over the pause before or after the take does not carry the pause into the
 * comparison, and words the recognizer squeezed, begun late after the pause before the take
 * or ended early before the restart's, do not shorten it), and must be MIN_HEARD_TAKE_MS
 * long there.
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
 * The parts: candidates (false-start-candidates.ts: phrase starts, breaks, the pauses the
 * detector heard), resemblance (false-start-words.ts: words and letters), sound
 * (false-start-sound.ts), and the ordered named rules (false-start-rules.ts); the first rule
 * that holds names the cut. A take that says a word otherwise in the middle, heard with
 * confidence (CONFIDENT_WORD), is doubtful whatever rule holds ("dial one if you wish to … |
 * dial two if you wish to …" are two sentences): it is only offered (`doubt`, issue 38).
 *
 * Of the takes a restart matches, the earliest goes (the longest false take); every word
 * of a matched take is dropped, so takes restarted one after the other go as one edit,
 * and a lower threshold only ever drops more words (every test above is passed by more at
 * a lower threshold).
 */
export const MAX_FALSE_TAKE_MS = 10_000;
export const MAX_FALSE_TAKE_WORDS = 25;
/** Two first words "resemble" when at most this share of their letters differs. */
const FIRST_WORD_MAX_DISTANCE = SAME_WORD_DISTANCE;
/** A take's last word heard as a different word is a fragment when it lasts at most this share of the restart's word in its place. */
const FRAGMENT_SHARE = 0.7;
/** Two renditions of one word last about as long: at most this many times the other … */
const SAME_WORD_SPAN = 1.5;
/** … give or take what a recognizer's timing moves two word ends by (50 ms each). */
const WORD_TIMING_MS = 100;
/** A take's first word this short ("to", "the", "a") may go unheard in its restart. */
const SHORT_WORD_MS = 200;
/** A word the recognizer heard at least this sure of is what was said: a take that says it where its restart says another word is a sentence of its own. */
export const CONFIDENT_WORD = 0.5;

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

/**
 * false_start_sensitivity (0–100) → the distances under which a take sounds like its
 * restart (barsAt the sensitivity's threshold). null: detection off.
 */
export function soundBars(sensitivity: number): { mean: number; worst: number } | null {
  const threshold = falseStartThreshold(sensitivity);
  return threshold === null ? null : barsAt(threshold);
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

const spoken = (word: SpokenWord): number => word.end_ms - word.start_ms;

/** A run of dropped words, the pauses the detector heard before it and before the restart after it (WordPauses), and the rule that found its first take. */
export interface FalseTake extends WordRun {
  pauses: WordPauses;
  rule: FalseStartRule;
  /** What a take of the run says, heard sure, that its restart does not (saidOtherwise): then it is only offered. */
  doubt?: string;
}

/**
 * The dropped takes at a resemblance threshold: maximal runs of words that some
 * matched take covers. The last take of a phrase is never in a run.
 */
export function findFalseTakes(words: readonly SpokenWord[], threshold: number, noise: ReadonlySet<number> = new Set(), sounds?: TakeSounds, continued: ReadonlySet<number> = new Set()): FalseTake[] {
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
  const droppedBy = new Array<FalseStartRule | undefined>(words.length);
  // what a take says that its restart does not (saidOtherwise), by the take's first word
  const doubts = new Array<string | undefined>(words.length);
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
      const candidate = candidateOf({ words, content, from, restart, restarts, threshold, afterBreak, firstAlike, matchAt, distance, sounds, takePause, pausedBefore });
      const rule = FALSE_START_RULES.find((each) => each.holds(candidate));
      if (!rule) continue;
      // a restart read after a stretched word's pause (splitStretched) was written once, in the take: its words say nothing against it
      const otherwise = continued.has(content[restart]!) ? undefined : saidOtherwise(words, content, from, restart, distance);
      for (let index = content[from]!; index < content[restart]!; index += 1) droppedBy[index] ??= rule.name;
      if (otherwise) doubts[content[from]!] ??= otherwise;
      restarts.add(restart);
      break;
    }
  }
  const runs: (WordRun & { rule: FalseStartRule; doubt?: string })[] = [];
  for (let index = 0; index < words.length; index += 1) {
    const rule = droppedBy[index];
    if (!rule) continue;
    const last = runs.at(-1);
    if (last && last.to === index) last.to = index + 1;
    else runs.push({ from: index, to: index + 1, rule });
    const doubt = doubts[index];
    if (doubt) runs.at(-1)!.doubt ??= doubt;
  }
  return runs.map((run) => ({
    ...run,
    pauses: { before: sounds ? (stretchedOver(words, run, sounds.silences) ?? pausesBefore[run.from] ?? pauseBegunIn(sounds.silences, words, run.from)) : pausesBefore[run.from], after: pausesBefore[run.to] },
  }));
}

/** A word heard longer than this was stretched by the recognizer over what lies around it (the longest words take about a second). */
const STRETCHED_WORD_MS = 1000;

/**
 * The last detected pause that a word of the run longer than STRETCHED_WORD_MS holds whole,
 * where the recognizer stretched the word over it (Whisper ran "reset" 4 s back over a quiet sentence it did not
 * transcribe and the pause after it): the take begins after that pause, and what came
 * before it is no part of the take (issue 38: a false start removes only the take).
 */
function stretchedOver(words: readonly SpokenWord[], run: WordRun, silences: readonly Span[]): Span | undefined {
  let found: Span | undefined;
  for (let index = run.from; index < run.to; index += 1) {
    const word = words[index]!;
    if (word.end_ms - word.start_ms <= STRETCHED_WORD_MS) continue;
    found = silences.filter((silence) => silence.start_ms > word.start_ms && silence.end_ms < word.end_ms).at(-1) ?? found;
  }
  return found;
}

interface CandidateContext {
  words: readonly SpokenWord[];
  content: readonly number[];
  from: number;
  restart: number;
  restarts: ReadonlySet<number>;
  threshold: number;
  afterBreak: boolean;
  firstAlike: boolean;
  matchAt: (position: number, count: number) => string[];
  distance: (a: string, b: string) => number;
  sounds: TakeSounds | undefined;
  takePause: Span | undefined;
  pausedBefore: Span | undefined;
}

/** A take (content words `from` … `restart` − 1) and its restart as the rules see them; the costly answers are computed once, when a rule asks. */
function candidateOf(context: CandidateContext): Candidate {
  const { words, content, from, restart, restarts, threshold, afterBreak, firstAlike, matchAt, distance, sounds, takePause, pausedBefore } = context;
  const takeWord = words[content[from]!]!;
  const restartWord = words[content[restart]!]!;
  const taken = restart - from;
  const take = matchAt(from, taken);
  const complete = endsSentence(words, content[restart - 1]!, content[restart]!);
  const compared = complete ? taken : Math.min(COMPARE_WORDS, taken);
  const resembles =
    firstAlike &&
    restart + compared <= content.length &&
    phraseResemblance(take.slice(0, compared), matchAt(restart, compared), { brokenOff: compared === taken, atLeast: threshold, distance }) >= threshold;
  const said = new Map<string, SaidAgain>();
  const saidAgain = (takeSkip: number, restartSkip: number): SaidAgain => {
    const key = `${takeSkip}:${restartSkip}`;
    let known = said.get(key);
    if (!known) said.set(key, (known = wordsSaidAgain(take.slice(takeSkip), matchAt(restart + restartSkip, taken - takeSkip + UNSAID_WORDS), threshold)));
    return known;
  };
  const lastWord = words[content[restart - 1]!]!;
  // the take's last word broken off and misheard as another, shorter word ("kick-" heard "hit" before "kicked"),
  // against the restart's word in its place once `restartSkip` and `takeSkip` first words are passed over
  const brokenOff = (takeSkip: number, restartSkip: number): boolean => {
    const inItsPlace = words[content[restart + restartSkip + taken - takeSkip - 1] ?? -1];
    return !complete && inItsPlace !== undefined && spoken(lastWord) <= FRAGMENT_SHARE * spoken(inItsPlace);
  };
  // (not a word before a phrase of its own: "conference | to decrease …")
  const ownPhrase = taken <= MIN_TAKE_WORDS || isPhraseStart(words, content, from + 1, restarts);
  const firstSpans = [spoken(takeWord), spoken(restartWord)];
  let sound: boolean | null | undefined;
  // the take's sound against the restart's opening (its length as its words span it; its sound where the detector heard it)
  const sounded = (): boolean | null => {
    if (sound !== undefined) return sound;
    if (!sounds) return (sound = null);
    const wordSpan = { start_ms: takeWord.start_ms, end_ms: lastWord.end_ms };
    const heardTake = takeSound(sounds.silences, wordSpan, takePause, pausedBefore);
    const length = Math.max(wordSpan.end_ms - wordSpan.start_ms, heardTake.end_ms - heardTake.start_ms);
    if (length < MIN_SOUND_TAKE_MS || length > MAX_SOUND_TAKE_MS || heardTake.end_ms - heardTake.start_ms < MIN_HEARD_TAKE_MS) return (sound = null);
    return (sound = soundsAlike(sounds, heardTake, pausedBefore?.end_ms ?? restartWord.start_ms));
  };
  return {
    take,
    restartFirst: restartWord.match,
    afterBreak,
    complete,
    compared,
    resembles,
    saidAgain,
    brokenOff,
    // both first words misheard, each as some other word of about its length ("he said your …"/"the city of …")
    firstWordsPair: Math.max(...firstSpans) <= SAME_WORD_SPAN * Math.min(...firstSpans) + WORD_TIMING_MS && !ownPhrase,
    // the take's first word, a short one, not heard again: the recognizer missed the restart's ("to decrease …" heard "you decrease …" and "decrease …")
    shortFirstWord: spoken(takeWord) <= SHORT_WORD_MS && !ownPhrase,
    // a take said again only in part and loosely across or at the end of a clause the recognizer marked ("… to other
    // participants, | to reset your speaking volume …", "4 or 6 to … volume, | 7 or 9 to …": Whisper's comma)
    marksClause: marksClause(words, content[from]!, content[restart - 1]! + 1),
    sounded,
  };
}

/**
 * What the take says that its restart does not, heard with confidence (CONFIDENT_WORD; a
 * recognizer that gives no probabilities is never sure), in words for a reason: a word in
 * its middle the restart says otherwise ("press three to … | press two to …"), or more than
 * UNSAID_WORDS where it trails off after words the restart does say again (a sentence of its
 * own, not a take broken off; a restart that says none of them again may be one Whisper
 * wrote once, in the take: "The conference will begin | when our glorious leader arrives"). Two words
 * heard sure are one word only when they are the same; a word heard unsure may be a near
 * neighbour misheard (SAME_WORD_DISTANCE). undefined: nothing, or nothing heard sure.
 */
function saidOtherwise(words: readonly SpokenWord[], content: readonly number[], from: number, restart: number, distance: (a: string, b: string) => number): string | undefined {
  const take = content.slice(from, restart).map((index) => words[index]!);
  const again = content.slice(restart, restart + take.length + UNSAID_WORDS).map((index) => words[index]!);
  const sure = (word: SpokenWord): boolean => (word.probability ?? 0) >= CONFIDENT_WORD;
  const alike = (i: number, j: number): boolean => {
    const [a, b] = [take[i]!, again[j]!];
    return a.match === b.match || (!(sure(a) && sure(b)) && distance(a.match, b.match) <= SAME_WORD_DISTANCE);
  };
  const unsaid = wordsSaidOtherwise(
    take.map((word) => word.match),
    again.map((word) => word.match),
    alike,
  );
  const inside = unsaid.inside.filter((index) => sure(take[index]!));
  if (inside.length) return `${quoteWords(inside.map((index) => take[index]!.text))} is not said again`;
  // (a restart that says none of the take's words again may be one the recognizer wrote once, in the take: its sound decides)
  const after = unsaid.after.filter((index) => sure(take[index]!));
  return unsaid.said > 0 && after.length > UNSAID_WORDS ? `${quoteWords(after.map((index) => take[index]!.text))} is not said again` : undefined;
}

/**
 * The words as the false-start finder reads them where the recognizer wrote a restarted opening
 * once and stretched a word of it over the pause between the take and the restart (Whisper:
 * "To decrease your sp- | To decrease your speaking volume" heard as "To decrease your speaking
 * volume", "speaking" 1.7 s long and holding the pause; "Please enter the | Please enter the
 * channel number" heard with "channel" begun where the take broke off). A word longer than
 * STRETCHED_WORD_MS that holds a detected pause, SYLLABLE_MS of itself after it, is read as
 * its parts between such pauses; a part before a pause shorter than SYLLABLE_MS is no part.
 * A take may then end at the pause and a restart begin after it: the restart, written once in
 * the take, says nothing by its words (`continued`: no doubt is drawn from them), and only the
 * sound can make the take a false start. `original` gives each word read the index of the
 * recognizer's.
 */
function splitStretched(words: readonly SpokenWord[], silences: readonly Span[]): { words: readonly SpokenWord[]; original: readonly number[]; continued: ReadonlySet<number> } {
  const read: SpokenWord[] = [];
  const original: number[] = [];
  const continued = new Set<number>();
  for (const [index, word] of words.entries()) {
    const held = word.end_ms - word.start_ms > STRETCHED_WORD_MS ? silences.filter((silence) => silence.start_ms >= word.start_ms && word.end_ms - silence.end_ms >= SYLLABLE_MS) : [];
    let start = word.start_ms;
    for (const silence of held) {
      if (silence.start_ms - start >= SYLLABLE_MS) {
        read.push({ ...word, start_ms: start, end_ms: silence.start_ms, punctuated: false, ends_sentence: false });
        original.push(index);
      }
      start = silence.end_ms;
      continued.add(read.length);
    }
    read.push(start === word.start_ms ? word : { ...word, start_ms: start });
    original.push(index);
  }
  return { words: continued.size ? read : words, original, continued };
}

/**
 * False-start cuts: one per dropped run, over its words whole (wordCutSpan: from the
 * lead-in of the false take to the lead-in of the restart, never into a kept word, nor
 * across the pauses the detector heard around the take); none shorter than MIN_CUT_MS.
 * The reason quotes the take and the restart, and names the rule that found it (`rule` on
 * the cut). With the recording's sound (`heard`), the words are read as splitStretched reads
 * them (the cut's `words` are still the recognizer's: a word read as two counts whole), and
 * each cut says where the take and its restart were heard.
 */
export function findFalseStartCuts(
  recognized: readonly SpokenWord[],
  sensitivity: number,
  room: CutRoom,
  noise: ReadonlySet<number> = new Set(),
  heard?: { comparer: SoundComparer; silences: readonly Span[]; shortPauses?: readonly Span[] },
): Cut[] {
  const threshold = falseStartThreshold(sensitivity);
  const bars = soundBars(sensitivity);
  if (threshold === null || bars === null) return [];
  // with the sound to tell by, a word stretched over the pause between a take and its restart is read as two
  const { words: read, original, continued } = heard ? splitStretched(recognized, heard.shortPauses ?? heard.silences) : { words: recognized, original: recognized.map((_, index) => index), continued: new Set<number>() };
  const noiseRead = new Set(original.flatMap((index, position) => (noise.has(index) ? [position] : [])));
  return findFalseTakes(read, threshold, noiseRead, heard && { ...heard, bars }, continued).flatMap((take) => {
    const cut = wordCut('false_start', 'False start, restarted', read, take, room, take.pauses);
    if (!cut) return [];
    const restartWords = read.slice(take.to, take.to + take.to - take.from + UNSAID_WORDS).map((word) => word.text);
    // a restart read after a stretched word's pause says the take again in sound only: the recognizer wrote it once, in the take
    const again = continued.has(take.to) ? 'after the pause, the recognizer writing it once' : `as ${quoteWords(restartWords)}`;
    const rule = FALSE_START_RULES.find((each) => each.name === take.rule)!;
    // the recognizer's words the cut removes (a stretched word read as two counts whole)
    const named: Cut = {
      ...cut,
      reason: `${cut.reason}, said again ${again} (${rule.says})`,
      words: { from: original[take.from]!, to: original[take.to - 1]! + 1 },
      rule: take.rule,
      ...(take.doubt ? { doubt: take.doubt } : {}),
    };
    if (!heard || take.to >= read.length) return named;
    // the take as the finder compared it: its sound where the detector heard it, against the restart from where it heard that begin
    const span = heardSpan(heard.silences, { start_ms: read[take.from]!.start_ms, end_ms: read[take.to - 1]!.end_ms }, take.pauses.before);
    return { ...named, heard: { take: span, restart_ms: take.pauses.after?.end_ms ?? read[take.to]!.start_ms } };
  });
}
