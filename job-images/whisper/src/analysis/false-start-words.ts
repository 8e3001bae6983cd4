/**
 * How much a take's words resemble its restart's (false-starts.ts): word by word
 * (phraseResemblance, each substitution costing the two words' letter distance) and as one
 * run of letters (wordsSaidAgain, forgiving a recognizer that splits, joins or mishears words).
 */

/** Words compared at the start of a take and its restart. */
export const COMPARE_WORDS = 4;
/** What an edit in the first word of either take costs, heard as letters (wordsSaidAgain). */
const ONSET_COST = 0.4;

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


/** Two words are one said again when at most this share of their letters differs. */
export const SAME_WORD_DISTANCE = 0.34;

/** The take's words its restart does not say again (indices into the take), as wordsSaidOtherwise finds them. */
export interface Unsaid {
  /** Before a take word the restart does say again: what the two say differently in the middle. */
  inside: number[];
  /** After the last take word the restart says again: where the take trails off (every word, when it says none again). */
  after: number[];
  /** How many take words the restart says again. */
  said: number;
}

/**
 * The take's words that its restart does not say again: `inside`, those followed by a take
 * word the restart does say again ("dial one if you wish to …" / "dial two if you wish to …"),
 * and `after`, those where the take trails off differently ("… talk about" / "… show you").
 * The words are matched in order (the longest common run; `alike` says which two are one
 * word, by default those within SAME_WORD_DISTANCE).
 */
export function wordsSaidOtherwise(take: readonly string[], restart: readonly string[], alike: (i: number, j: number) => boolean = (i, j) => letterDistance(take[i]!, restart[j]!) <= SAME_WORD_DISTANCE): Unsaid {
  // longest common subsequence, table from the ends
  const n = take.length;
  const m = restart.length;
  const table = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i -= 1) for (let j = m - 1; j >= 0; j -= 1) table[i]![j] = alike(i, j) ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
  const said = new Array<boolean>(n).fill(false);
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (alike(i, j) && table[i]![j] === table[i + 1]![j + 1]! + 1) [said[i], i, j] = [true, i + 1, j + 1];
    else if (table[i + 1]![j]! >= table[i]![j + 1]!) i += 1;
    else j += 1;
  }
  const lastSaid = said.lastIndexOf(true);
  const unsaid = said.flatMap((isSaid, index) => (isSaid ? [] : [index]));
  return { inside: unsaid.filter((index) => index < lastSaid), after: unsaid.filter((index) => index > lastSaid), said: n - unsaid.length };
}
