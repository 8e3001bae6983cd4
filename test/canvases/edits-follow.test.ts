import { expect } from 'chai';
import { followContent } from '../../api/src/canvases/edits-follow.ts';
import { timelineOf, type SpinePiece } from '../../api/src/timeline/timeline.ts';

const piece = (canvasId: string, durationMs: number | null): SpinePiece => ({ canvasId, type: 'SINGLE', mediaItemId: canvasId, mediaFileId: canvasId, sourceStartMs: 0, durationMs });

describe('canvases: edits follow their source content', () => {
  it('an edit lying wholly on one moved piece moves by that piece\'s shift; one on an unmoved piece stays', () => {
    const before = timelineOf([piece('a', 5000), piece('b', 3000), piece('c', 1000)]);
    const after = timelineOf([piece('b', 3000), piece('a', 5000), piece('c', 1000)]);
    const follow = followContent(before, after, [
      { id: 'on-a', startMs: 0, endMs: 5000 },
      { id: 'on-b', startMs: 5000, endMs: 6000 },
      { id: 'on-c', startMs: 8000, endMs: 9000 },
    ]);
    expect(follow).to.deep.equal({ moved: [{ id: 'on-a', deltaMs: 3000 }, { id: 'on-b', deltaMs: -5000 }], stranded: [] });
  });

  it('an edit straddling pieces, or on a removed piece, stays put and is stranded when other content plays under it', () => {
    const before = timelineOf([piece('a', 1000), piece('x', 2000), piece('b', 1000)]);
    const after = timelineOf([piece('a', 1000), piece('b', 1000)]);
    const follow = followContent(before, after, [
      { id: 'straddling', startMs: 500, endMs: 1500 },
      { id: 'on-x', startMs: 1200, endMs: 1800 },
      { id: 'on-a', startMs: 100, endMs: 900 },
    ]);
    expect(follow).to.deep.equal({ moved: [], stranded: ['straddling', 'on-x'] });
  });

  it('with a duration unknown before or after, nothing moves and nothing is reported (positions are only lower bounds)', () => {
    const before = timelineOf([piece('a', null), piece('b', 1000)]);
    const after = timelineOf([piece('b', 1000), piece('a', null)]);
    expect(followContent(before, after, [{ id: 'e', startMs: 0, endMs: 500 }])).to.deep.equal({ moved: [], stranded: [] });
  });
});
