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

/**
 * The pieces of [startMs, endMs) (file time, the envelope's frames from 0): one piece when the
 * span is at most a piece and a half long, else consecutive pieces that tile it exactly.
 */
export function piecesOf(envelope: EnergyEnvelope, span: Piece, options: PieceOptions = DEFAULT_PIECES): Piece[] {
  const pieces: Piece[] = [];
  let start = span.startMs;
  while (span.endMs - start > options.pieceMs * 1.5) {
    const nominal = start + options.pieceMs;
    const end = quietestMoment(envelope, Math.max(start + options.pieceMs / 2, nominal - options.searchMs), nominal, options.quietWindowMs);
    pieces.push({ startMs: start, endMs: end });
    start = end;
  }
  pieces.push({ startMs: start, endMs: span.endMs });
  return pieces;
}

/** The middle of the quietest `windowMs` in [fromMs, toMs] (the latest of equally quiet ones), on a frame edge. */
function quietestMoment(envelope: EnergyEnvelope, fromMs: number, toMs: number, windowMs: number): number {
  const frame = envelope.frame_ms;
  const width = Math.max(1, Math.round(windowMs / frame));
  const first = Math.floor(fromMs / frame);
  const last = Math.min(Math.floor(toMs / frame), envelope.rms.length) - width;
  if (last < first) return toMs;
  let sum = 0;
  for (let index = first; index < first + width; index++) sum += envelope.rms[index]! ** 2;
  let best = first;
  let bestSum = sum;
  for (let index = first + 1; index <= last; index++) {
    sum += envelope.rms[index + width - 1]! ** 2 - envelope.rms[index - 1]! ** 2;
    if (sum <= bestSum) {
      bestSum = sum;
      best = index;
    }
  }
  return (best + Math.floor(width / 2)) * frame;
}
