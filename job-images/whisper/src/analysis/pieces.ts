import type { EnergyEnvelope } from './energy.ts';

/**
 * A long recording is transcribed in pieces, one request each: the recognizer's memory is
 * bounded by a piece, and the job's progress moves as each piece comes back. A piece ends at
 * the quietest moment shortly before its nominal end, so that no word is split between two
 * requests when the speaker paused anywhere near it.
 */

export interface PieceOptions {
  /** A piece's nominal length. */
  pieceMs: number;
  /** How far before the nominal end the quietest moment is looked for. */
  searchMs: number;
  /** The stretch whose loudness is averaged to find the quietest moment. */
  quietWindowMs: number;
}

/** Two minutes: a few tens of seconds of a CPU recognizer's work, and a handful of Whisper's 30 s windows. */
export const DEFAULT_PIECES: PieceOptions = { pieceMs: 120_000, searchMs: 20_000, quietWindowMs: 300 };

export interface Piece {
  startMs: number;
  endMs: number;
}

/** Where, between `fromMs` and `toMs` (file time), the recording is quietest: one piece's end. */
export type QuietestMoment = (fromMs: number, toMs: number) => Promise<number>;

/**
 * The pieces of [startMs, endMs), one at a time (each end is measured only when it is asked
 * for): one piece when the span is at most a piece and a half long, else consecutive pieces
 * that tile it exactly, each ending at the quietest moment of the `searchMs` before its nominal end.
 */
export async function* piecesAlong(span: Piece, options: PieceOptions, quietest: QuietestMoment): AsyncGenerator<Piece> {
  let start = span.startMs;
  while (span.endMs - start > options.pieceMs * 1.5) {
    const nominal = start + options.pieceMs;
    const end = await quietest(Math.max(start + options.pieceMs / 2, nominal - options.searchMs), nominal);
    yield { startMs: start, endMs: end };
    start = end;
  }
  yield { startMs: start, endMs: span.endMs };
}

/**
 * The middle of the quietest `windowMs` of an envelope that starts at `offsetMs` (file time),
 * between `fromMs` and `toMs` (the latest of equally quiet ones), on a frame edge.
 */
export function quietestIn(envelope: EnergyEnvelope, offsetMs: number, fromMs: number, toMs: number, windowMs: number): number {
  const frame = envelope.frame_ms;
  const width = Math.max(1, Math.round(windowMs / frame));
  const first = Math.max(0, Math.floor((fromMs - offsetMs) / frame));
  const last = Math.min(Math.floor((toMs - offsetMs) / frame), envelope.rms.length) - width;
  if (last < first) return toMs;
  let best = first;
  let bestEnergy = Infinity;
  for (let index = first; index <= last; index++) {
    let energy = 0;
    for (let frameIndex = index; frameIndex < index + width; frameIndex++) energy += envelope.rms[frameIndex]! ** 2;
    if (energy <= bestEnergy) {
      bestEnergy = energy;
      best = index;
    }
  }
  return offsetMs + (best + Math.floor(width / 2)) * frame;
}
