import { expect } from 'chai';
import type { EnergyEnvelope } from '../../../job-images/whisper/src/analysis/energy.ts';
import { DEFAULT_PIECES, piecesAlong, quietestIn, type Piece } from '../../../job-images/whisper/src/analysis/pieces.ts';

const FRAME_MS = 10;
const SPEECH = 0.1;
const PAUSE = 0.001;

/** Speech throughout, but for the pauses [startMs, endMs). */
function envelopeWith(durationMs: number, pauses: [number, number][]): EnergyEnvelope {
  const rms = new Float32Array(durationMs / FRAME_MS).fill(SPEECH);
  for (const [start, end] of pauses) rms.fill(PAUSE, start / FRAME_MS, end / FRAME_MS);
  return { frame_ms: FRAME_MS, rms };
}

/** The pieces of `span`, their ends found on the whole envelope (the program measures only each stretch asked about). */
async function piecesOf(envelope: EnergyEnvelope, span: Piece): Promise<Piece[]> {
  const pieces: Piece[] = [];
  const quietest = async (fromMs: number, toMs: number) => quietestIn(envelope, 0, fromMs, toMs, DEFAULT_PIECES.quietWindowMs);
  for await (const piece of piecesAlong(span, DEFAULT_PIECES, quietest)) pieces.push(piece);
  return pieces;
}

describe('a long recording in pieces (pieces.ts)', () => {
  it('up to a piece and a half is one piece, the span itself', async () => {
    const envelope = envelopeWith(200_000, []);
    expect(await piecesOf(envelope, { startMs: 5_000, endMs: 185_000 })).to.deep.equal([{ startMs: 5_000, endMs: 185_000 }]);
  });

  it('longer: pieces tile the span exactly, none longer than a piece, none shorter than half of one', async () => {
    const durationMs = 60 * 60_000;
    const pieces = await piecesOf(envelopeWith(durationMs, []), { startMs: 0, endMs: durationMs });
    expect(pieces[0]!.startMs).to.equal(0);
    expect(pieces.at(-1)!.endMs).to.equal(durationMs);
    pieces.slice(1).forEach((piece, index) => expect(piece.startMs).to.equal(pieces[index]!.endMs));
    for (const piece of pieces) expect(piece.endMs - piece.startMs).to.be.within(DEFAULT_PIECES.pieceMs / 2, DEFAULT_PIECES.pieceMs * 1.5);
    expect(pieces.length).to.be.within(30, 31);
  });

  it('a piece ends inside the pause nearest before its nominal end, not in the speech on either side', async () => {
    // pauses at 103–104 s and 215.5–216.2 s (within 20 s before the second nominal end, about 223.5 s)
    const envelope = envelopeWith(400_000, [[103_000, 104_000], [215_500, 216_200]]);
    const [first, second] = await piecesOf(envelope, { startMs: 0, endMs: 400_000 });
    expect(first!.endMs).to.be.within(103_000, 104_000);
    expect(second!.endMs).to.be.within(215_500, 216_200);
  });

  it('an envelope of a stretch alone (starting later in the file) finds the same moment, in file time', () => {
    const whole = envelopeWith(400_000, [[103_000, 104_000]]);
    const stretch: EnergyEnvelope = { frame_ms: FRAME_MS, rms: whole.rms.slice(100_000 / FRAME_MS, 120_000 / FRAME_MS) };
    expect(quietestIn(stretch, 100_000, 100_000, 120_000, 300)).to.equal(quietestIn(whole, 0, 100_000, 120_000, 300)).and.be.within(103_000, 104_000);
  });

  it('a pause further back than the search reach is not used: the quietest moment near the end is', async () => {
    const envelope = envelopeWith(400_000, [[60_000, 62_000], [119_000, 119_400]]);
    expect((await piecesOf(envelope, { startMs: 0, endMs: 400_000 }))[0]!.endMs).to.be.within(119_000, 119_400);
  });
});
