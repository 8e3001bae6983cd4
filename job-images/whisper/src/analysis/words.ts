import { JobFailure } from '../../../lib/job-failure.ts';

/** A word as an OpenAI-compatible server returns it: seconds, a leading space and punctuation kept. */
export interface RecognizedWord {
  word: string;
  start: number;
  end: number;
  probability?: number | null;
}

/** A recognized word ready for matching and cutting. */
export interface SpokenWord {
  /** As recognized, trimmed ("Today,"): what reasons quote and captions show. */
  text: string;
  /** Lowercase, without surrounding punctuation ("today"): what detectors compare. */
  match: string;
  start_ms: number;
  end_ms: number;
  /** The recognizer's confidence, 0..1, when it gives one. */
  probability: number | null;
  /** Punctuation follows the word (comma, full stop, dash…): the recognizer heard a phrase boundary. */
  punctuated: boolean;
  /** A full stop, question or exclamation mark follows: the recognizer heard a sentence completed (an ellipsis trails off). */
  ends_sentence: boolean;
}

/**
 * Guard band kept after a word that stays: word ends from recognizers are off by
 * 50–100 ms and a decaying consonant runs past them, so no cut starts within this.
 */
export const WORD_TAIL_MS = 120;

/**
 * Guard band kept before a word that stays: a cut ending right at a word's start
 * swallows its onset (and the breath before it sounds natural), so no cut ends within this.
 */
export const WORD_LEAD_IN_MS = 180;

function noWordsFailure(): JobFailure {
  return new JobFailure('No speech could be recognized in the audio.', { code: 'analysis.no_words' });
}

// Marks (\p{M}) belong to the word: Devanagari, Thai… vowel signs end many words.
const EDGE_PUNCTUATION = /^[^\p{L}\p{N}\p{M}]+|[^\p{L}\p{N}\p{M}]+$/gu;
const TRAILING_BOUNDARY = /[.,;:!?…—–-]["'”’)\]]*$/u;
const TRAILING_SENTENCE_END = /(?<![.…])[.!?。！？]["'”’)\]]*$/u;

/** The form detectors compare: "Don’t," → "don't". */
export function matchForm(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/’/g, "'").replace(EDGE_PUNCTUATION, '');
}

/**
 * The words in time order, in milliseconds, with their match form. Entries that are
 * only punctuation mark the word before them as punctuated and are dropped, as are
 * entries without a finite time or a text. No words at all (an empty list, or `null`
 * as some servers answer) is a failure: there is nothing to bound a cut by.
 */
export function normalizeWords(words: readonly RecognizedWord[] | null | undefined): SpokenWord[] {
  if (!Array.isArray(words)) throw noWordsFailure();
  const ordered = words.filter((word) => typeof word?.word === 'string' && Number.isFinite(word.start) && Number.isFinite(word.end));
  ordered.sort((a, b) => a.start - b.start);
  const spoken: SpokenWord[] = [];
  for (const word of ordered) {
    const text = word.word.trim();
    const match = matchForm(text);
    const previous = spoken.at(-1);
    if (!match) {
      if (previous && text) {
        previous.punctuated = true;
        previous.ends_sentence ||= TRAILING_SENTENCE_END.test(text);
      }
      continue;
    }
    const startMs = Math.max(0, Math.round(word.start * 1000));
    const probability = typeof word.probability === 'number' && Number.isFinite(word.probability) ? Math.min(1, Math.max(0, word.probability)) : null;
    spoken.push({
      text,
      match,
      start_ms: startMs,
      end_ms: Math.max(startMs, Math.round(word.end * 1000)),
      probability,
      punctuated: TRAILING_BOUNDARY.test(text),
      ends_sentence: TRAILING_SENTENCE_END.test(text),
    });
  }
  if (spoken.length === 0) throw noWordsFailure();
  return spoken;
}

/** Silence between two neighbouring words (0 when the recognizer let them overlap). */
export function gapBetween(before: SpokenWord, after: SpokenWord): number {
  return Math.max(0, after.start_ms - before.end_ms);
}
