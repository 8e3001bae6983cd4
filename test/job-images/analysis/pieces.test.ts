import { expect } from 'chai';
import type { EnergyEnvelope } from '../../../job-images/whisper/src/analysis/energy.ts';
import { DEFAULT_PIECES, piecesOf } from '../../../job-images/whisper/src/analysis/pieces.ts';

const FRAME_MS = 10;
const SPEECH = 0.1;
const PAUSE = 0.001;

/** Speech throughout, but for the pauses [startMs, endMs). */
function envelopeWith(durationMs: number, pauses: [number, number][]): EnergyEnvelope {
  const rms = new Float32Array(durationMs / FRAME_MS).fill(SPEECH);
  for (const [start, end] of pauses) rms.fill(PAUSE, start / FRAME_MS, end / FRAME_MS);
  return { frame_ms: FRAME_MS, rms };
}

describe('a long recording in pieces (pieces.ts)', () => {
  it('up to a piece and a half is one piece, the span itself', () => {
    const envelope = envelopeWith(200_000, []);
    expect(piecesOf(envelope, { startMs: 5_000, endMs: 185_000 })).to.deep.equal([{ startMs: 5_000, endMs: 185_000 }]);
  });

  it('longer: pieces tile the span exactly, none longer than a piece, none shorter than half of one', () => {
    const durationMs = 60 * 60_000;
    const pieces = piecesOf(envelopeWith(durationMs, []), { startMs: 0, endMs: durationMs });
    expect(pieces[0]!.startMs).to.equal(0);
    expect(pieces.at(-1)!.endMs).to.equal(durationMs);
    pieces.slice(1).forEach((piece, index) => expect(piece.startMs).to.equal(pieces[index]!.endMs));
    for (const piece of pieces) expect(piece.endMs - piece.startMs).to.be.within(DEFAULT_PIECES.pieceMs / 2, DEFAULT_PIECES.pieceMs * 1.5);
    expect(pieces.length).to.be.within(30, 31);
  });

  it('a piece ends inside the pause nearest before its nominal end, not in the speech on either side', () => {
    // pauses at 103–104 s and 215.5–216.2 s (within 20 s before the second nominal end, about 223.5 s)
    const envelope = envelopeWith(400_000, [[103_000, 104_000], [215_500, 216_200]]);
    const [first, second] = piecesOf(envelope, { startMs: 0, endMs: 400_000 });
    expect(first!.endMs).to.be.within(103_000, 104_000);
    expect(second!.endMs).to.be.within(215_500, 216_200);
  });

  it('a pause further back than the search reach is not used: the quietest moment near the end is', () => {
    const envelope = envelopeWith(400_000, [[60_000, 62_000], [119_000, 119_400]]);
    expect(piecesOf(envelope, { startMs: 0, endMs: 400_000 })[0]!.endMs).to.be.within(119_000, 119_400);
  });
});
