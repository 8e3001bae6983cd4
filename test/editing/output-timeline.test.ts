import { expect } from 'chai';
import { outputTimeline, type InsertSpan } from '../../api/src/editing/output-timeline.ts';
import { timelineOf, type EditOverrides, type EditSpan, type KnownTimeline } from '../../api/src/timeline/timeline.ts';

const piece = (canvasId: string, durationMs: number, sourceStartMs = 0) => ({ canvasId, type: 'SINGLE' as const, mediaItemId: `item-${canvasId}`, mediaFileId: `file-${canvasId}`, sourceStartMs, durationMs });
const known = (...pieces: ReturnType<typeof piece>[]) => timelineOf(pieces) as KnownTimeline;
const cut = (id: string, startMs: number, endMs: number, active = true): EditSpan => ({ id, type: 'silence', startMs, endMs, active });
const at30 = { num: 30, den: 1 };
const resolve = (timeline: KnownTimeline, edits: EditSpan[], more: { overrides?: EditOverrides; inserts?: InsertSpan[]; stills?: Set<string> } = {}) => outputTimeline(timeline, edits, { rate: at30, ...more });
/** [file, source first frame, output first frame, frames] of each segment. */
const framesOf = (output: ReturnType<typeof resolve>) => output.segments.map((s) => [s.mediaFileId, s.sourceFirstFrame, s.outFirstFrame, s.frameCount]);

describe('editing core: from the timeline to the output, on one frame grid', () => {
  it('the output plays the kept segments end to end, each from its source, in whole frames (edges in ms carried alongside)', () => {
    const output = resolve(known(piece('a', 10_000), piece('b', 5_000, 2_000)), [cut('c1', 2_000, 3_000), cut('c2', 9_000, 11_000)]);
    expect(output.segments).to.deep.equal([
      { mediaFileId: 'file-a', inserted: false, sourceFirstFrame: 0, frameCount: 60, outFirstFrame: 0, sourceStartMs: 0, sourceEndMs: 2_000, outStartMs: 0 },
      { mediaFileId: 'file-a', inserted: false, sourceFirstFrame: 90, frameCount: 180, outFirstFrame: 60, sourceStartMs: 3_000, sourceEndMs: 9_000, outStartMs: 2_000 },
      { mediaFileId: 'file-b', inserted: false, sourceFirstFrame: 90, frameCount: 120, outFirstFrame: 240, sourceStartMs: 3_000, sourceEndMs: 7_000, outStartMs: 8_000 },
    ]);
    expect([output.frameCount, output.durationMs]).to.deep.equal([360, 12_000]);
  });

  it('overrides are applied before cutting (a cut turned off keeps its time, a moved one cuts where it moved)', () => {
    const output = resolve(known(piece('a', 10_000)), [cut('c1', 2_000, 3_000), cut('c2', 5_000, 6_000)], { overrides: { c1: { active: false }, c2: { start_ms: 4_000 } } });
    expect(output.segments.map((s) => [s.sourceStartMs, s.sourceEndMs])).to.deep.equal([[0, 4_000], [6_000, 10_000]]);
  });

  it('an inserted asset splits the segment it lands in and pushes what follows', () => {
    const output = resolve(known(piece('a', 10_000)), [cut('c1', 1_000, 2_000)], { inserts: [{ mediaFileId: 'file-broll', atMs: 5_000, durationMs: 3_000, assetOffsetMs: 500 }] });
    expect(framesOf(output)).to.deep.equal([
      ['file-a', 0, 0, 30],
      ['file-a', 60, 30, 90],
      ['file-broll', 15, 120, 90],
      ['file-a', 150, 210, 150],
    ]);
    expect(output.segments.map((s) => s.inserted)).to.deep.equal([false, false, true, false]);
  });

  it('an insert inside a cut plays where the cut was; one at the very end plays last', () => {
    const output = resolve(known(piece('a', 6_000)), [cut('c1', 2_000, 4_000)], {
      inserts: [
        { mediaFileId: 'file-x', atMs: 3_000, durationMs: 1_000, assetOffsetMs: 0 },
        { mediaFileId: 'file-y', atMs: 6_000, durationMs: 500, assetOffsetMs: 0 },
      ],
    });
    expect(output.segments.map((s) => [s.mediaFileId, s.outStartMs])).to.deep.equal([['file-a', 0], ['file-x', 2_000], ['file-a', 3_000], ['file-y', 5_000]]);
  });

  it('a timeline span lands in the output: shortened by the cuts inside it, gone when wholly cut, after an insert at its start', () => {
    const output = resolve(known(piece('a', 10_000)), [cut('c1', 2_000, 4_000)], { inserts: [{ mediaFileId: 'file-x', atMs: 6_000, durationMs: 1_000, assetOffsetMs: 0 }] });
    expect(output.spanToOutput(1_000, 5_000)).to.deep.equal({ outStartMs: 1_000, outEndMs: 3_000 });
    expect(output.spanToOutput(2_500, 3_500)).to.equal(null);
    expect(output.spanToOutput(6_000, 7_000)).to.deep.equal({ outStartMs: 5_000, outEndMs: 6_000 });
    expect(output.spanToOutput(5_000, 6_000)).to.deep.equal({ outStartMs: 3_000, outEndMs: 4_000 });
    expect(output.spanToFrames(1_000, 5_000)).to.deep.equal({ outFirstFrame: 30, frameCount: 60, outStartMs: 1_000, outEndMs: 3_000 });
  });

  it('the whole timeline cut leaves no segment', () => {
    expect(resolve(known(piece('a', 3_000)), [cut('c1', 0, 3_000)]).segments).to.deep.equal([]);
  });

  it("a cut point between frames goes to the nearest frame edge, and the segment's frames follow it (23,210 ms at 30 fps: frame 696 is cut, not kept)", () => {
    const output = resolve(known(piece('a', 40_000)), [cut('c1', 23_210, 24_700)]);
    expect(framesOf(output)).to.deep.equal([
      ['file-a', 0, 0, 696],
      ['file-a', 741, 696, 459],
    ]);
    // what the output leaves out is where the render cuts it; times map through the frames
    expect(output.toOutput(24_700, 'start')).to.equal(23_200);
  });

  it('the sliver between two cuts 10 ms apart is cut with them: no frame of it is kept, and no word or caption in it lands in the output', () => {
    const output = resolve(known(piece('a', 4_000)), [cut('m1', 1_000, 1_500), cut('m2', 1_510, 2_000)]);
    expect(framesOf(output)).to.deep.equal([
      ['file-a', 0, 0, 30],
      ['file-a', 60, 30, 60],
    ]);
    expect(output.cuts).to.deep.equal([{ startMs: 1_000, endMs: 2_000 }]);
    expect(output.spanToOutput(1_500, 1_510)).to.equal(null);
  });

  it('a kept stretch of a whole frame or more stays, even between two cuts', () => {
    const output = resolve(known(piece('a', 4_000)), [cut('m1', 1_000, 1_500), cut('m2', 1_534, 2_000)]);
    expect(framesOf(output)).to.deep.equal([
      ['file-a', 0, 0, 30],
      ['file-a', 45, 30, 1],
      ['file-a', 60, 31, 60],
    ]);
  });

  it('a still plays from its frame 0 whatever part of it is kept (it shows one picture)', () => {
    const output = resolve(known(piece('a', 2_000), piece('s', 3_000)), [cut('c1', 2_500, 3_000)], { stills: new Set(['file-s']) });
    expect(framesOf(output)).to.deep.equal([
      ['file-a', 0, 0, 60],
      ['file-s', 0, 60, 15],
      ['file-s', 0, 75, 60],
    ]);
  });

  it('at 30000/1001 the edges are rational: 30 frames last 1001 ms, and the ms carried read back to the same frame', () => {
    const output = outputTimeline(known(piece('a', 5_000)), [cut('c1', 1_000, 1_734)], { rate: { num: 30000, den: 1001 } });
    expect(framesOf(output)).to.deep.equal([
      ['file-a', 0, 0, 30],
      ['file-a', 52, 30, 98],
    ]);
    expect(output.segments.map((s) => [s.sourceStartMs, s.sourceEndMs, s.outStartMs])).to.deep.equal([[0, 1_001, 0], [1_735, 5_005, 1_001]]);
  });
});
