/** A transcript word in timeline time, as the analysis stores it. */
export interface TimedWord {
  word: string;
  start_ms: number;
  end_ms: number;
}

/** A span of the timeline that an active cut edit removes. */
export interface CutSpan {
  start_ms: number;
  end_ms: number;
}

/** A caption line before it is stored: its words' text and the times of its first and last word. */
export interface PlannedLine {
  text: string;
  start_ms: number;
  end_ms: number;
}

/** max_words when the request gives none: the low end of the spec's 16:9 guidance (7–10); vertical video asks for 3–5. */
export const DEFAULT_MAX_WORDS = 7;
export const MIN_MAX_WORDS = 2;
export const MAX_MAX_WORDS = 20;

/** A silence this long always ends a line: a caption should not stay on screen over it. */
export const LINE_BREAKING_PAUSE_MS = 1000;
/** A pause this long is a phrase boundary (as the false-start detector reads one): a good place to break. */
const PHRASE_PAUSE_MS = 250;

const SENTENCE_END = /(?<![.…])[.!?。！？]["'”’)\]]*$/u;
const PHRASE_PUNCTUATION = /[,;:…—–-]["'”’)\]]*$/u;

const midpoint = (word: TimedWord) => (word.start_ms + word.end_ms) / 2;

/**
 * The caption lines of a transcript: words inside an active cut are dropped (a word is
 * inside when its midpoint is), and a line ends at every cut between two kept words, at
 * every sentence end and at every pause of LINE_BREAKING_PAUSE_MS or more. A stretch
 * between those breaks longer than `maxWords` takes the fewest lines that fit, broken
 * where the boundaries are best (punctuation, then a pause of PHRASE_PAUSE_MS, then
 * anywhere), then as evenly as possible.
 */
export function planCaptionLines(words: readonly TimedWord[], cuts: readonly CutSpan[], maxWords: number): PlannedLine[] {
  const kept = [...words]
    .filter((word) => word.word.trim() !== '' && !cuts.some((cut) => cut.start_ms <= midpoint(word) && midpoint(word) < cut.end_ms))
    .sort((a, b) => a.start_ms - b.start_ms);
  const lines: PlannedLine[] = [];
  for (const stretch of stretchesOf(kept, cuts)) {
    for (const line of splitStretch(stretch, maxWords)) {
      lines.push({ text: line.map((word) => word.word.trim()).join(' '), start_ms: line[0]!.start_ms, end_ms: Math.max(...line.map((word) => word.end_ms)) });
    }
  }
  return lines;
}

/** Runs of kept words no line may leave: split at cuts, sentence ends and long pauses. */
function stretchesOf(kept: readonly TimedWord[], cuts: readonly CutSpan[]): TimedWord[][] {
  const stretches: TimedWord[][] = [];
  let current: TimedWord[] = [];
  kept.forEach((word, index) => {
    current.push(word);
    const next = kept[index + 1];
    if (!next || mustBreak(word, next, cuts)) {
      stretches.push(current);
      current = [];
    }
  });
  return stretches;
}

function mustBreak(word: TimedWord, next: TimedWord, cuts: readonly CutSpan[]): boolean {
  // A cut anywhere between the two words' middles: the words are not heard together.
  const cutBetween = cuts.some((cut) => cut.start_ms < midpoint(next) && cut.end_ms > midpoint(word));
  return cutBetween || SENTENCE_END.test(word.word.trim()) || next.start_ms - word.end_ms >= LINE_BREAKING_PAUSE_MS;
}

/** How good a line end after `word` is: 2 punctuation, 1 a phrase pause, 0 mid-phrase. */
function boundaryStrength(word: TimedWord, next: TimedWord): number {
  if (PHRASE_PUNCTUATION.test(word.word.trim())) return 2;
  return next.start_ms - word.end_ms >= PHRASE_PAUSE_MS ? 1 : 0;
}

interface Plan {
  lines: number;
  strength: number;
  unevenness: number;
  previous: number;
}

/** Better: fewer lines, then stronger boundaries, then more even lengths. */
const better = (a: Omit<Plan, 'previous'>, b: Omit<Plan, 'previous'> | undefined) =>
  !b || a.lines !== b.lines ? !b || a.lines < b.lines : a.strength !== b.strength ? a.strength > b.strength : a.unevenness < b.unevenness;

/** One stretch into lines of at most `maxWords` (a dynamic programme over where each line ends). */
function splitStretch(stretch: readonly TimedWord[], maxWords: number): TimedWord[][] {
  if (stretch.length <= maxWords) return [[...stretch]];
  // best[j]: the best plan for the first j words.
  const best: (Plan | undefined)[] = [{ lines: 0, strength: 0, unevenness: 0, previous: -1 }];
  for (let end = 1; end <= stretch.length; end++) {
    for (let start = Math.max(0, end - maxWords); start < end; start++) {
      const before = best[start];
      if (!before) continue;
      const size = end - start;
      const next = stretch[end];
      const candidate = {
        lines: before.lines + 1,
        strength: before.strength + (next ? boundaryStrength(stretch[end - 1]!, next) : 0),
        unevenness: before.unevenness + size * size,
      };
      if (better(candidate, best[end])) best[end] = { ...candidate, previous: start };
    }
  }
  const lines: TimedWord[][] = [];
  for (let end = stretch.length; end > 0; end = best[end]!.previous) lines.unshift(stretch.slice(best[end]!.previous, end));
  return lines;
}
