import type { AiEditType } from '../../../../crds/contract/programs/analyze.ts';
import type { FalseStartRule } from './false-start-rules.ts';

/** The AI edit kinds the analysis produces (the spec's "AI-detected kind"): the contract's. */
export type CutType = AiEditType;

/** A stretch of one source's time, in integer milliseconds, `start_ms` < `end_ms`. */
export interface Span {
  start_ms: number;
  end_ms: number;
}

/** Words `from` ≤ i < `to` of a source (indices into its normalizeWords(…)). */
export interface WordRun {
  from: number;
  to: number;
}

/** A stretch the analysis proposes to remove, and why. */
export interface Cut extends Span {
  type: CutType;
  reason: string;
  /** The words the cut removes on purpose; none for a silence. */
  words: WordRun | null;
  /** A false start found with the recording's sound: where the detector heard its take, and its restart begin. */
  heard?: { take: Span; restart_ms: number };
  /** The rule that found a false start (FALSE_START_RULES): its reason names it, and its confidence weighs what the rule compared. */
  rule?: FalseStartRule;
  /** Why a false start is doubtful although a rule holds (what its take says that its restart does not): it is offered, not applied. */
  doubt?: string;
  /**
   * A shortened pause (issue 39): what of the pause stays either side of the removed
   * range (the cut's own span), and the breath the pause holds: the pause is
   * [start_ms − before_ms, end_ms + after_ms).
   */
  kept?: { before_ms: number; after_ms: number; breath: Span | null };
}

/** Shorter cuts are not worth an edit: a jump of under a tenth of a second is not heard as tighter pacing. */
export const MIN_CUT_MS = 100;

export function spanLength(span: Span): number {
  return span.end_ms - span.start_ms;
}

/** Whether two spans share time (touching ends do not). */
export function spansOverlap(a: Span, b: Span): boolean {
  return a.start_ms < b.end_ms && b.start_ms < a.end_ms;
}

/** The parts of `span` that none of `holes` covers, in order. */
export function subtractSpans(span: Span, holes: readonly Span[]): Span[] {
  let pieces: Span[] = [{ start_ms: span.start_ms, end_ms: span.end_ms }];
  for (const hole of holes) {
    if (!spansOverlap(span, hole)) continue;
    pieces = pieces.flatMap((piece) => {
      if (!spansOverlap(piece, hole)) return [piece];
      const left = { start_ms: piece.start_ms, end_ms: Math.min(piece.end_ms, hole.start_ms) };
      const right = { start_ms: Math.max(piece.start_ms, hole.end_ms), end_ms: piece.end_ms };
      return [left, right].filter((part) => part.end_ms > part.start_ms);
    });
  }
  return pieces;
}

/** Quotes spoken words in a reason, shortened past `maxChars`. */
export function quoteWords(texts: readonly string[], maxChars = 200): string {
  const joined = texts.join(' ');
  return `"${joined.length > maxChars ? `${joined.slice(0, maxChars - 1).trimEnd()}…` : joined}"`;
}
