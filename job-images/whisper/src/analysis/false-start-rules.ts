import { COMPARE_WORDS, type SaidAgain } from './false-start-words.ts';

/**
 * The rules a take and its restart are judged by (false-starts.ts), in order: the first
 * that holds makes the take a false start, and its name travels with the cut into the
 * edit's reason and confidence. Each rule is passed by more at a lower threshold (a higher
 * sensitivity), so rising sensitivity only ever finds more.
 */
export type FalseStartRule = 'words-said-again' | 'heard-twice' | 'letters-said-again' | 'first-words-misheard' | 'first-word-unheard' | 'sounds-alike';

/** A take of a phrase and a restart after it, as the rules ask about them (the finder builds it; the costly answers are computed once, on demand). */
export interface Candidate {
  /** The take's content words (their match forms). */
  take: readonly string[];
  /** The restart's first word (its match form). */
  restartFirst: string;
  /** The restart follows a break: a pause heard by the recognizer or the detector, a hesitation, punctuation. */
  afterBreak: boolean;
  /** The recognizer heard the take completed (a sentence end before the restart): it must come again whole. */
  complete: boolean;
  /** The words compared (COMPARE_WORDS, or the whole take when complete) … */
  compared: number;
  /** … resemble the restart's as much as the threshold asks (phraseResemblance, first words alike). */
  resembles: boolean;
  /** What the restart says again of the take by letters (wordsSaidAgain), skipping `takeSkip` first take words and `restartSkip` first restart words. */
  saidAgain(takeSkip: number, restartSkip: number): SaidAgain;
  /** The take's last word, with those skips, is a broken-off fragment of the restart's word in its place. */
  brokenOff(takeSkip: number, restartSkip: number): boolean;
  /** Both first words misheard, each as another word of about its length (not a word before a phrase of its own). */
  firstWordsPair: boolean;
  /** The take's first word is a short one the recognizer may have missed in the restart (not a word before a phrase of its own). */
  shortFirstWord: boolean;
  /** The recognizer marked a clause in the take (a comma): a clause said whole may precede one opening alike. */
  marksClause: boolean;
  /** The take's sound against the restart's opening: null where it is too short or too long to tell, or unknown. */
  sounded(): boolean | null;
}

export interface FalseStartRuleOf {
  name: FalseStartRule;
  /** What the rule saw, for the edit's reason. */
  says: string;
  holds(candidate: Candidate): boolean;
}

/** A take shorter than this (in words) is matched by its sound only. */
export const MIN_TAKE_WORDS = 2;
/** Words a take may run on past those its restart says again. */
export const UNSAID_WORDS = 3;
/** The letters a restart must say again of a take it matches by letters. */
const MIN_SAID_LETTERS = 8;

/** The take's first words said again: they resemble the restart's, and the take runs on past them by few words, or comes again loosely whole after a break. */
function firstWordsSaidAgain(candidate: Candidate): boolean {
  const { take, compared, resembles, afterBreak } = candidate;
  if (take.length < MIN_TAKE_WORDS || !resembles) return false;
  if (take.length - compared <= UNSAID_WORDS) return true;
  // a long take said again only loosely, by a restart after a break: a speaker who abandons a long sentence stops before
  // starting over, while a phrase that recurs inside running speech is no restart
  const heard = candidate.saidAgain(0, 0);
  return take.length - heard.words <= UNSAID_WORDS || (heard.whole && afterBreak);
}

/**
 * The take said again by letters, `takeSkip` first take words and `restartSkip` first
 * restart words passed over: enough of it (MIN_TAKE_WORDS words, MIN_SAID_LETTERS letters),
 * all of it, or all but a broken-off last word, or (a take not heard completed) at least
 * COMPARE_WORDS words running on by at most UNSAID_WORDS or loosely whole. A take across a
 * clause the recognizer marked may be a clause said whole before one opening alike: only its
 * sound can make it a take.
 */
function lettersSaidAgain(candidate: Candidate, takeSkip: number, restartSkip: number): boolean {
  const { take, complete, resembles, afterBreak } = candidate;
  if (take.length < MIN_TAKE_WORDS || resembles || !afterBreak) return false;
  const core = candidate.saidAgain(takeSkip, restartSkip);
  const unsaid = take.length - takeSkip - core.words;
  const enough = core.words >= MIN_TAKE_WORDS && take.slice(takeSkip, takeSkip + core.words).join('').length >= MIN_SAID_LETTERS;
  const said = enough && (unsaid === 0 || (unsaid === 1 && candidate.brokenOff(takeSkip, restartSkip)) || (!complete && core.words >= COMPARE_WORDS && (unsaid <= UNSAID_WORDS || core.whole)));
  return said && (!candidate.marksClause || (candidate.sounded() ?? false));
}

export const FALSE_START_RULES: readonly FalseStartRuleOf[] = [
  { name: 'words-said-again', says: 'its first words said again', holds: (c) => c.afterBreak && firstWordsSaidAgain(c) },
  // words said again with no break before them may be one stretch the recognizer heard twice: where the sound can tell, it must agree
  { name: 'heard-twice', says: 'its first words said again without a pause, and it sounds alike', holds: (c) => !c.afterBreak && firstWordsSaidAgain(c) && (c.sounded() ?? true) },
  { name: 'letters-said-again', says: 'its words said again, loosely', holds: (c) => lettersSaidAgain(c, 0, 0) },
  { name: 'first-words-misheard', says: 'its words after the first said again', holds: (c) => c.firstWordsPair && lettersSaidAgain(c, 1, 1) },
  { name: 'first-word-unheard', says: 'its words after a short first word said again', holds: (c) => c.shortFirstWord && lettersSaidAgain(c, 1, 0) },
  // where the words fail, the sound (a take of one word heard as the restart's first is that word said twice, "five … five of spades")
  {
    name: 'sounds-alike',
    says: 'it sounds like the restart',
    holds: (c) => c.afterBreak && !c.complete && !(c.take.length === 1 && c.take[0] === c.restartFirst) && (c.sounded() ?? false),
  },
];
