import { wordCut, type CutRoom } from './boundaries.ts';
import type { Cut, WordRun } from './spans.ts';
import { gapBetween, type SpokenWord } from './words.ts';

/** Hesitation sounds: a filler wherever they are heard ("er" is not one: in German it means "he"). */
export const HESITATIONS: readonly string[] = ['um', 'umm', 'uh', 'uhh', 'uhm', 'erm', 'hmm', 'hm', 'mm'];

/**
 * Words that are fillers only when set off from the sentence ("it was, like, huge",
 * "I mean, it works"), never when they carry meaning ("I like it", "you know him",
 * "I mean it"): they must be preceded and followed by a phrase boundary.
 */
export const SET_OFF_FILLERS: readonly (readonly string[])[] = [['you', 'know'], ['i', 'mean'], ['like']];

/** A pause this long around a word sets it off as much as a comma does. */
const FILLER_PAUSE_MS = 150;

function boundaryBefore(words: readonly SpokenWord[], index: number): boolean {
  if (index === 0) return true;
  return words[index - 1]!.punctuated || gapBetween(words[index - 1]!, words[index]!) >= FILLER_PAUSE_MS;
}

function boundaryAfter(words: readonly SpokenWord[], index: number): boolean {
  if (index === words.length - 1) return true;
  return words[index]!.punctuated || gapBetween(words[index]!, words[index + 1]!) >= FILLER_PAUSE_MS;
}

/** The filler starting at `index`: how many words it spans, or 0. */
function fillerLength(words: readonly SpokenWord[], index: number): number {
  if (HESITATIONS.includes(words[index]!.match)) return 1;
  for (const pattern of SET_OFF_FILLERS) {
    const last = index + pattern.length - 1;
    if (last >= words.length) continue;
    if (!pattern.every((match, offset) => words[index + offset]!.match === match)) continue;
    // "you know" is one expression: no boundary may split it.
    const inner = pattern.slice(0, -1).every((_, offset) => !boundaryAfter(words, index + offset));
    if (inner && boundaryBefore(words, index) && boundaryAfter(words, last)) return pattern.length;
  }
  return 0;
}

/** The fillers as runs of words `from` ≤ i < `to`; fillers said one after another ("um, uh,") form one run. */
function findFillers(words: readonly SpokenWord[]): WordRun[] {
  const runs: WordRun[] = [];
  for (let index = 0; index < words.length; ) {
    const length = fillerLength(words, index);
    if (length === 0) {
      index += 1;
      continue;
    }
    const last = runs.at(-1);
    if (last && last.to === index) last.to = index + length;
    else runs.push({ from: index, to: index + length });
    index += length;
  }
  return runs;
}

/**
 * Filler cuts (offered inactive: a person decides): each run's words whole
 * (wordCutSpan: never into a kept word, guard bands kept where the gaps allow); one
 * shorter than MIN_CUT_MS is not offered.
 */
export function findFillerCuts(words: readonly SpokenWord[], room: CutRoom): Cut[] {
  return findFillers(words).flatMap((run) => wordCut('filler', 'Filler', words, run, room) ?? []);
}
