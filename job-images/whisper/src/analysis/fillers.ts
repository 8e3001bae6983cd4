import { MIN_CUT_MS, quoteWords, type Cut } from './spans.ts';
import { gapBetween, WORD_LEAD_IN_MS, WORD_TAIL_MS, type SpokenWord } from './words.ts';

/** Hesitation sounds: a filler wherever they are heard. */
export const HESITATIONS: readonly string[] = ['um', 'umm', 'uh', 'uhh', 'uhm', 'erm', 'er', 'hmm', 'hm', 'mm'];

/**
 * Words that are fillers only when set off from the sentence ("it was, like, huge",
 * "I mean, it works"), never when they carry meaning ("I like it", "you know him",
 * "I mean it"): they must be preceded and followed by a phrase boundary.
 */
export const SET_OFF_FILLERS: readonly (readonly string[])[] = [['you', 'know'], ['i', 'mean'], ['like']];

/** A pause this long around a word sets it off as much as a comma does. */
export const FILLER_PAUSE_MS = 150;

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

/**
 * Filler cuts (offered inactive: a person decides): each filler's words, trimmed so
 * that no cut comes within WORD_TAIL_MS of the word before or WORD_LEAD_IN_MS of the
 * word after; one whose trimmed span is under MIN_CUT_MS is not offered.
 */
export function findFillerCuts(words: readonly SpokenWord[]): Cut[] {
  const cuts: Cut[] = [];
  for (let index = 0; index < words.length; ) {
    const length = fillerLength(words, index);
    if (length === 0) {
      index += 1;
      continue;
    }
    const first = words[index]!;
    const last = words[index + length - 1]!;
    const before = words[index - 1];
    const after = words[index + length];
    const start = Math.max(first.start_ms, before ? before.end_ms + WORD_TAIL_MS : 0);
    const end = Math.min(last.end_ms, after ? after.start_ms - WORD_LEAD_IN_MS : last.end_ms);
    if (end - start >= MIN_CUT_MS) {
      const quoted = quoteWords(words.slice(index, index + length).map((word) => word.text));
      cuts.push({ type: 'filler', start_ms: start, end_ms: end, reason: `Filler: ${quoted}`, words: { from: index, to: index + length } });
    }
    index += length;
  }
  return cuts;
}
