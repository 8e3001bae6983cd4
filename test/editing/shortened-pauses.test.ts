import { expect } from 'chai';
import { BREATH_MARGIN_MS, removedRange, type StoredPause } from '../../crds/contract/editing/kept-pause.ts';
import { outputTimeline } from '../../api/src/editing/output-timeline.ts';
import { editsAsPlayed, type PlayedEdit, type PlayedOverrides } from '../../api/src/editing/played-edits.ts';
import { timelineOf, type KnownTimeline } from '../../api/src/timeline/timeline.ts';

const piece = (canvasId: string, durationMs: number) => ({ canvasId, type: 'SINGLE' as const, mediaItemId: `item-${canvasId}`, mediaFileId: `file-${canvasId}`, sourceStartMs: 0, durationMs });
const known = (...pieces: ReturnType<typeof piece>[]) => timelineOf(pieces) as KnownTimeline;

/** A silence edit over the pause [startMs, endMs) keeping `keptMs` of it, split `split`, as the analysis writes it (start/end what it removes). */
function pauseEdit(id: string, startMs: number, endMs: number, keptMs: number, split: number, breath: StoredPause['breath'] = null): PlayedEdit {
  const pause: StoredPause = { start_ms: startMs, end_ms: endMs, kept_ms: keptMs, kept_split: split, breath, keep_breath: false };
  const removed = removedRange(startMs, endMs, { keptMs, keptSplit: split, breath: null, keepBreath: false })!;
  return { id, type: 'silence', startMs: removed.startMs, endMs: removed.endMs, active: true, pause };
}

/** The output's silences where the pause was: how long the output plays from where the speech before ended to where the speech after begins. */
function keptOf(timeline: KnownTimeline, edits: PlayedEdit[], pause: { startMs: number; endMs: number }, overrides: PlayedOverrides = {}) {
  const output = outputTimeline(timeline, edits, { rate: { num: 25, den: 1 }, overrides });
  return output.toOutput(pause.endMs, 'end') - output.toOutput(pause.startMs, 'start');
}

describe('shortened pauses: a pause cut keeps a chosen length of itself, in the editing core (issue 39)', () => {
  it('the contract rule: keptMs split by keptSplit around the removed middle; keeping all of it removes nothing', () => {
    expect(removedRange(1_000, 3_000, { keptMs: 400, keptSplit: 0.6, breath: null, keepBreath: false })).to.deep.equal({ startMs: 1_240, endMs: 2_840 });
    expect(removedRange(1_000, 3_000, { keptMs: 400, keptSplit: 0.4, breath: null, keepBreath: false })).to.deep.equal({ startMs: 1_160, endMs: 2_760 });
    expect(removedRange(1_000, 3_000, { keptMs: null, keptSplit: null, breath: null, keepBreath: false })).to.deep.equal({ startMs: 1_000, endMs: 3_000 });
    expect(removedRange(1_000, 3_000, { keptMs: 2_000, keptSplit: 0.5, breath: null, keepBreath: false })).to.equal(null);
  });

  it('a kept breath stays whole with its margin: the removed range is the longer side of it; a removed one goes with the pause', () => {
    const breath = { startMs: 2_300, endMs: 2_650 };
    expect(removedRange(1_000, 3_000, { keptMs: 250, keptSplit: 0.6, breath, keepBreath: true })).to.deep.equal({ startMs: 1_150, endMs: breath.startMs - BREATH_MARGIN_MS });
    expect(removedRange(1_000, 3_000, { keptMs: 250, keptSplit: 0.6, breath, keepBreath: false })).to.deep.equal({ startMs: 1_150, endMs: 2_900 });
    // a breath early in the pause: the removed range lies after it
    expect(removedRange(1_000, 3_000, { keptMs: 250, keptSplit: 0.6, breath: { startMs: 1_200, endMs: 1_400 }, keepBreath: true })).to.deep.equal({ startMs: 1_430, endMs: 2_900 });
  });

  it('the output keeps the chosen length of the pause (within one frame at 25 fps), split at the speech edges', () => {
    const timeline = known(piece('a', 10_000));
    const edit = pauseEdit('p', 2_000, 4_500, 420, 0.6);
    expect(keptOf(timeline, [edit], { startMs: 2_000, endMs: 4_500 })).to.be.within(420 - 40, 420 + 40);
    const output = outputTimeline(timeline, [edit], { rate: { num: 25, den: 1 } });
    // 252 ms stay after the speech before (2000 → 2240 on the 40 ms grid), 168 before the speech after
    expect(output.segments.map((segment) => [segment.sourceStartMs, segment.sourceEndMs])).to.deep.equal([
      [0, 2_240],
      [4_320, 10_000],
    ]);
  });

  it('a draft override of kept_ms places the removed range anew; keep_breath keeps the breath; a removed-whole override (kept all) cuts nothing', () => {
    const timeline = known(piece('a', 10_000));
    const edit = pauseEdit('p', 2_000, 4_500, 420, 0.6, { start_ms: 3_800, end_ms: 4_150 });
    const pause = { startMs: 2_000, endMs: 4_500 };
    expect(keptOf(timeline, [edit], pause, { p: { kept_ms: 1_000 } })).to.be.within(1_000 - 40, 1_000 + 40);
    expect(keptOf(timeline, [edit], pause, { p: { kept_ms: 2_500 } })).to.equal(2_500);
    const [played] = editsAsPlayed([edit], { p: { keep_breath: true } });
    expect([played!.startMs, played!.endMs]).to.deep.equal([2_252, 3_800 - BREATH_MARGIN_MS]);
    // the breath and its margins stay: 252 + (4500 − 3770) kept
    expect(keptOf(timeline, [edit], pause, { p: { keep_breath: true } })).to.be.within(982 - 40, 982 + 40);
    // an override that sets the range itself keeps that range
    expect(editsAsPlayed([edit], { p: { kept_ms: 1_000, start_ms: 2_500 } }).map((one) => [one.startMs, one.endMs])).to.deep.equal([[2_500, edit.endMs]]);
  });

  it('an edit without a pause is cut whole as before; a pause field in an override of it is ignored', () => {
    const plain: PlayedEdit = { id: 'm', type: 'manual', startMs: 1_000, endMs: 2_000, active: true };
    expect(editsAsPlayed([plain], { m: { kept_ms: 500 } })).to.deep.equal([plain]);
  });
});
