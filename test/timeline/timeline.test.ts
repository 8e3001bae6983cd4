import { expect } from 'chai';
import {
  cutRanges,
  keptSegments,
  outputDurationMs,
  sourceToTimeline,
  timelineOf,
  timelineToSource,
  withOverrides,
  type EditSpan,
  type KnownTimeline,
  type SpinePiece,
  type Timeline,
} from '../../api/src/timeline/timeline.ts';

const piece = (canvasId: string, durationMs: number | null, type: SpinePiece['type'] = 'SINGLE', sourceStartMs = 0): SpinePiece => ({
  canvasId,
  type,
  mediaItemId: `item-${canvasId}`,
  mediaFileId: `file-${canvasId}`,
  sourceStartMs,
  durationMs,
});

function known(timeline: Timeline): KnownTimeline {
  if (!timeline.known) throw new Error('expected every duration known');
  return timeline;
}

let nextId = 0;
const edit = (type: string, startMs: number, endMs: number, active = true): EditSpan => ({ id: `edit-${++nextId}`, type, startMs, endMs, active });

/** Kept segments as [canvas, sourceStart, sourceEnd] triples: the assertions read like the spine. */
const triples = (timeline: KnownTimeline, edits: EditSpan[], overrides = {}) =>
  keptSegments(timeline, edits, overrides).map((segment) => [segment.canvasId, segment.sourceStartMs, segment.sourceEndMs]);

describe('timeline: the spine as data', () => {
  describe('duration', () => {
    it('SINGLE sources play one after another: the total is the sum of their durations', () => {
      const timeline = known(timelineOf([piece('a', 4000), piece('b', 6000)]));
      expect(timeline.durationMs).to.equal(10_000);
      expect(timeline.pieces.map((p) => p.timelineStartMs)).to.deep.equal([0, 4000]);
    });

    it('an INSERT canvas adds its own duration where it sits in the sequence', () => {
      const timeline = known(timelineOf([piece('a', 4000), piece('i', 1500, 'INSERT'), piece('b', 6000)]));
      expect(timeline.durationMs).to.equal(11_500);
      expect(timeline.pieces.map((p) => p.timelineStartMs)).to.deep.equal([0, 4000, 5500]);
    });

    it('no pieces → a known duration of 0 with no media', () => {
      const timeline = timelineOf([]);
      expect(timeline).to.deep.include({ known: true, durationMs: 0, pieces: [] });
    });

    it('a source with duration_ms null → duration unknown, naming that source; later offsets are lower bounds', () => {
      const timeline = timelineOf([piece('a', 4000), piece('b', null), piece('c', 2000)]);
      expect(timeline.known).to.equal(false);
      if (timeline.known) return;
      expect(timeline.unknown.map((p) => p.canvasId)).to.deep.equal(['b']);
      expect(timeline).to.not.have.property('durationMs');
      expect(timeline.pieces.map((p) => p.timelineStartMs)).to.deep.equal([0, 4000, 4000]);
    });
  });

  describe('source ↔ timeline mapping', () => {
    const timeline = known(timelineOf([piece('a', 4000), piece('i', 1000, 'INSERT'), piece('b', 6000)]));

    it('a source time of the second source lands after the first source and the insert', () => {
      expect(sourceToTimeline(timeline, 'b', 2500)).to.equal(7500);
      expect(timelineToSource(timeline, 7500)).to.deep.equal({ canvasId: 'b', mediaItemId: 'item-b', mediaFileId: 'file-b', sourceMs: 2500 });
    });

    it('round trips: timeline → source → timeline gives the same time at every 250 ms, boundaries and end included', () => {
      for (let t = 0; t <= timeline.durationMs; t += 250) {
        const point = timelineToSource(timeline, t)!;
        expect(sourceToTimeline(timeline, point.canvasId, point.sourceMs), `t=${t}`).to.equal(t);
      }
    });

    it('round trips: source → timeline → source for every piece', () => {
      for (const p of timeline.pieces) {
        for (const sourceMs of [0, Math.floor(p.durationMs / 2), p.durationMs - 1]) {
          const t = sourceToTimeline(timeline, p.canvasId, sourceMs)!;
          expect(timelineToSource(timeline, t)).to.include({ canvasId: p.canvasId, sourceMs });
        }
      }
    });

    it('a boundary belongs to the piece starting there; the very end to the last piece', () => {
      expect(timelineToSource(timeline, 4000)).to.include({ canvasId: 'i', sourceMs: 0 });
      expect(timelineToSource(timeline, 11_000)).to.include({ canvasId: 'b', sourceMs: 6000 });
    });

    it('outside the timeline, outside a source or another canvas → null', () => {
      expect(timelineToSource(timeline, -1)).to.equal(null);
      expect(timelineToSource(timeline, 11_001)).to.equal(null);
      expect(sourceToTimeline(timeline, 'a', 4001)).to.equal(null);
      expect(sourceToTimeline(timeline, 'missing', 0)).to.equal(null);
    });

    it('a source of duration 0 takes no timeline time: its start maps to the next source', () => {
      const withEmpty = known(timelineOf([piece('a', 1000), piece('z', 0), piece('b', 1000)]));
      expect(timelineToSource(withEmpty, 1000)).to.include({ canvasId: 'b', sourceMs: 0 });
      expect(sourceToTimeline(withEmpty, 'z', 0)).to.equal(1000);
    });
  });

  describe('kept segments', () => {
    const spine = known(timelineOf([piece('a', 10_000), piece('b', 10_000)]));

    it('given two 10 s sources and no edit → each source whole', () => {
      expect(triples(spine, [])).to.deep.equal([['a', 0, 10_000], ['b', 0, 10_000]]);
    });

    it('given a silence, a false start and a manual cut → the timeline minus the three, in order, with output positions', () => {
      const edits = [edit('silence', 2000, 3000), edit('false_start', 9000, 12_000), edit('manual', 15_000, 16_000)];
      const segments = keptSegments(spine, edits);
      expect(segments.map((s) => [s.canvasId, s.sourceStartMs, s.sourceEndMs])).to.deep.equal([
        ['a', 0, 2000],
        ['a', 3000, 9000],
        ['b', 2000, 5000],
        ['b', 6000, 10_000],
      ]);
      expect(segments.map((s) => [s.startMs, s.endMs, s.outputStartMs])).to.deep.equal([
        [0, 2000, 0],
        [3000, 9000, 2000],
        [12_000, 15_000, 8000],
        [16_000, 20_000, 11_000],
      ]);
      expect(outputDurationMs(segments)).to.equal(15_000);
    });

    it('inactive cuts and asset edits cut nothing (a filler is offered inactive)', () => {
      const edits = [edit('filler', 1000, 2000, false), edit('asset', 4000, 6000), edit('manual', 7000, 8000, false)];
      expect(triples(spine, edits)).to.deep.equal([['a', 0, 10_000], ['b', 0, 10_000]]);
    });

    it('overlapping cuts remove their union; cuts past the end are clipped', () => {
      const edits = [edit('silence', 1000, 3000), edit('filler', 2000, 4000), edit('manual', 18_000, 25_000)];
      expect(cutRanges(edits, 20_000)).to.deep.equal([{ startMs: 1000, endMs: 4000 }, { startMs: 18_000, endMs: 20_000 }]);
      expect(triples(spine, edits)).to.deep.equal([['a', 0, 1000], ['a', 4000, 10_000], ['b', 0, 8000]]);
    });

    it('a cut covering a whole source leaves nothing of it', () => {
      expect(triples(spine, [edit('manual', 9000, 20_000)])).to.deep.equal([['a', 0, 9000]]);
    });

    it('edit_overrides: switch a cut off, another on, and move a third', () => {
      const off = edit('silence', 1000, 2000);
      const on = edit('filler', 3000, 4000, false);
      const moved = edit('manual', 5000, 6000);
      const overrides = { [off.id]: { active: false }, [on.id]: { active: true }, [moved.id]: { start_ms: 12_000, end_ms: 13_000 }, 'not-an-edit': { active: false } };
      expect(withOverrides([off, on, moved], overrides).map((e) => [e.active, e.startMs, e.endMs])).to.deep.equal([[false, 1000, 2000], [true, 3000, 4000], [true, 12_000, 13_000]]);
      expect(triples(spine, [off, on, moved], overrides)).to.deep.equal([['a', 0, 3000], ['a', 4000, 10_000], ['b', 0, 2000], ['b', 3000, 10_000]]);
    });

    it('an INSERT canvas is kept like a source, as its asset', () => {
      const withInsert = known(timelineOf([piece('a', 5000), piece('i', 2000, 'INSERT'), piece('b', 5000)]));
      const segments = keptSegments(withInsert, [edit('manual', 6000, 8000)]);
      expect(segments.map((s) => [s.canvasId, s.type, s.mediaItemId, s.sourceStartMs, s.sourceEndMs])).to.deep.equal([
        ['a', 'SINGLE', 'item-a', 0, 5000],
        ['i', 'INSERT', 'item-i', 0, 1000],
        ['b', 'SINGLE', 'item-b', 1000, 5000],
      ]);
    });
  });

  describe('a split clip plays its stretch of the source', () => {
    it('two canvases on one source, [0, 4000) and [4000, 10000): the timeline is 10 s, each source time lands once, and kept segments name the source stretch', () => {
      const timeline = known(timelineOf([piece('first', 4000, 'SINGLE', 0), { ...piece('second', 6000, 'SINGLE', 4000), mediaFileId: 'file-first', mediaItemId: 'item-first' }]));
      expect(timeline.durationMs).to.equal(10_000);
      expect(timelineToSource(timeline, 5000)).to.include({ canvasId: 'second', sourceMs: 5000 });
      expect(sourceToTimeline(timeline, 'second', 4000)).to.equal(4000);
      expect(sourceToTimeline(timeline, 'second', 3000), 'outside the stretch it plays').to.equal(null);
      const kept = keptSegments(timeline, [{ id: 'cut', type: 'silence', startMs: 3000, endMs: 5000, active: true }]);
      expect(kept.map((segment) => [segment.canvasId, segment.sourceStartMs, segment.sourceEndMs])).to.deep.equal([
        ['first', 0, 3000],
        ['second', 5000, 10_000],
      ]);
    });
  });
});
