import type { EnergyEnvelope } from './energy.ts';
import { SYLLABLE_MS } from './false-start-candidates.ts';
import { MIN_CUT_MS, quoteWords, type Cut, type Span, type WordRun } from './spans.ts';
import { WORD_LEAD_IN_MS, WORD_TAIL_MS, type SpokenWord } from './words.ts';

/** How far a cut boundary may move to land on the quietest frame. */
export const SNAP_WINDOW_MS = 50;

/** Loudness at a boundary between frames: the louder of the two frames it separates; unknown past the envelope. */
function boundaryLoudness(envelope: EnergyEnvelope, frame: number): number {
  const before = envelope.rms[frame - 1];
  const after = envelope.rms[frame];
  if (before === undefined && after === undefined) return Infinity;
  const loudness = Math.max(before ?? after!, after ?? before!, envelope.floor_rms ?? 0);
  return Number.isNaN(loudness) ? Infinity : loudness;
}

/**
 * Moves a cut boundary to the quietest frame boundary within SNAP_WINDOW_MS of it,
 * never outside [lowest, highest]; the nearest wins a tie, and frames under the
 * recording's floor (`floor_rms`) tie: noise does not pull a boundary. No frame boundary in
 * range, or no usable envelope: the boundary stays.
 */
export function snapToQuietest(ms: number, lowest: number, highest: number, envelope: EnergyEnvelope | null): number {
  if (!envelope || envelope.rms.length === 0 || !(envelope.frame_ms > 0)) return ms;
  const frameMs = envelope.frame_ms;
  const from = Math.ceil(Math.max(lowest, ms - SNAP_WINDOW_MS) / frameMs);
  const to = Math.floor(Math.min(highest, ms + SNAP_WINDOW_MS) / frameMs);
  let best = ms;
  let bestLoudness = Infinity;
  let bestDistance = Infinity;
  for (let frame = from; frame <= to; frame += 1) {
    const loudness = boundaryLoudness(envelope, frame);
    const distance = Math.abs(frame * frameMs - ms);
    if (loudness < bestLoudness || (loudness === bestLoudness && distance < bestDistance)) {
      best = frame * frameMs;
      bestLoudness = loudness;
      bestDistance = distance;
    }
  }
  return best;
}

/** Where the source's words leave room for a cut, and how it sounds there. */
export interface CutRoom {
  duration_ms: number;
  envelope: EnergyEnvelope | null;
}

/** The pauses a detector heard before a run of removed words and before the kept word after them. */
export interface WordPauses {
  before?: Span | undefined;
  after?: Span | undefined;
}

/**
 * A boundary at `preferred`, kept inside [guardLo, guardHi] (the guard bands of the
 * kept words), or only inside [lo, hi] (between the words themselves) when the gap is
 * too narrow for the guard bands; then snapped to the quietest frame nearby.
 */
function placeBoundary(preferred: number, lo: number, hi: number, guardLo: number, guardHi: number, envelope: EnergyEnvelope | null): number {
  let low = Math.max(lo, guardLo);
  let high = Math.min(hi, guardHi);
  if (low > high) [low, high] = [lo, hi];
  return snapToQuietest(Math.min(high, Math.max(low, preferred)), low, high, envelope);
}

/**
 * The span of a cut that removes words `from` ≤ i < `to` (a false take, a filler) and
 * keeps every other word whole. It covers each removed word entirely, except what a
 * sloppy recognizer let overlap a kept word (that belongs to the kept word); it never
 * reaches into a kept word, and keeps the kept words' guard bands where the gaps allow.
 *
 * It runs from WORD_LEAD_IN_MS before the first removed word to WORD_LEAD_IN_MS before
 * the next kept word: the next kept word then follows the pause that preceded the
 * removed words, so the removal does not change the pacing. Where the detector heard a
 * pause before the removed words or before the next kept word (`pauses`), the sound says
 * where speech stops and starts again, whatever the word times say (a recognizer in noise
 * runs a word into or through a pause): what is kept before ends where the first pause
 * begins, and what is removed starts where it ends; what is removed ends where the second
 * pause begins, and the next kept word starts where it ends, unless that word began a
 * syllable after the removed words ended: then the pause came after it, and the cut never
 * reaches past the word's start (a false start removes the take, never its restart).
 * null: no room for it.
 */
function wordCutSpan(words: readonly SpokenWord[], from: number, to: number, room: CutRoom, pauses: WordPauses = {}): Span | null {
  let keptUntil = 0;
  for (let index = 0; index < from; index += 1) keptUntil = Math.max(keptUntil, words[index]!.end_ms);
  let removedUntil = 0;
  for (let index = from; index < to; index += 1) removedUntil = Math.max(removedUntil, words[index]!.end_ms);
  let keptNext = to < words.length ? Math.min(words[to]!.start_ms, room.duration_ms) : room.duration_ms;
  let removedFrom = words[from]!.start_ms;
  const { before } = pauses;
  // a pause that begins after the kept word's own sound (it begins a syllable past the removed words' end, before the
  // pause) follows that word, whatever span the recognizer gave it: the cut ends before the word, never after the pause
  const after = pauses.after && !(to < words.length && words[to]!.start_ms < pauses.after.start_ms && words[to]!.start_ms >= removedUntil + SYLLABLE_MS) ? pauses.after : undefined;
  if (after) {
    removedUntil = Math.min(removedUntil, Math.max(after.start_ms, removedFrom));
    keptNext = to < words.length && words[to]!.start_ms < after.start_ms ? after.end_ms : Math.min(keptNext, after.end_ms);
  }
  if (before) {
    removedFrom = Math.max(removedFrom, Math.min(before.end_ms, removedUntil));
    keptUntil = keptUntil > before.end_ms ? before.start_ms : Math.max(keptUntil, Math.min(before.start_ms, removedFrom));
  }
  // What must be covered: the removed words, less what overlaps a kept word.
  const coverFrom = Math.max(removedFrom, keptUntil);
  const coverTo = Math.min(removedUntil, keptNext);
  if (coverTo < coverFrom) return null;
  const tail = from > 0 ? WORD_TAIL_MS : 0;
  const leadIn = to < words.length ? WORD_LEAD_IN_MS : 0;
  const start = placeBoundary(words[from]!.start_ms - WORD_LEAD_IN_MS, keptUntil, coverFrom, keptUntil + tail, coverFrom, room.envelope);
  const end = placeBoundary(keptNext - leadIn, coverTo, keptNext, coverTo, keptNext - leadIn, room.envelope);
  return end > start ? { start_ms: start, end_ms: end } : null;
}

/** The cut that removes a run of words, its reason quoting them; null when under MIN_CUT_MS or without room. `pauses`: wordCutSpan. */
export function wordCut(type: 'false_start' | 'filler', label: string, words: readonly SpokenWord[], run: WordRun, room: CutRoom, pauses?: WordPauses): Cut | null {
  const span = wordCutSpan(words, run.from, run.to, room, pauses);
  if (!span || span.end_ms - span.start_ms < MIN_CUT_MS) return null;
  const quoted = quoteWords(words.slice(run.from, run.to).map((word) => word.text));
  return { type, ...span, reason: `${label}: ${quoted}`, words: { from: run.from, to: run.to } };
}
