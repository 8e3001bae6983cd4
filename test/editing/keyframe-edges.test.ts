import { expect } from 'chai';
import { BREATH_MARGIN_MS, removedRange, type StoredPause } from '../../crds/contract/editing/kept-pause.ts';
import { KEYFRAME_SNAP_MIN_SIDE_MS, KEYFRAME_SNAP_TOLERANCE_MS, snapRemovedToKeyframe } from '../../crds/contract/editing/keyframe-snap.ts';
import { outputTimeline } from '../../api/src/editing/output-timeline.ts';
import { pauseCutsOnKeyframes, type PlayedEdit } from '../../api/src/editing/played-edits.ts';
import { timelineKeyframes } from '../../api/src/editing/resolve-edit.ts';
import { timelineOf, type KnownTimeline } from '../../api/src/timeline/timeline.ts';

const piece = (canvasId: string, durationMs: number) => ({ canvasId, type: 'SINGLE' as const, mediaItemId: `item-${canvasId}`, mediaFileId: `file-${canvasId}`, sourceStartMs: 0, durationMs });
const known = (...pieces: ReturnType<typeof piece>[]) => timelineOf(pieces) as KnownTimeline;
/** Keyframes every 2 s, as the bench's and most cameras' footage. */
const EVERY_2_S = Array.from({ length: 10 }, (_, index) => index * 2_000);

function pauseEdit(id: string, startMs: number, endMs: number, keptMs: number, split: number, extra: Partial<StoredPause> = {}): PlayedEdit {
  const pause: StoredPause = { start_ms: startMs, end_ms: endMs, kept_ms: keptMs, kept_split: split, breath: null, keep_breath: false, ...extra };
  const removed = removedRange(startMs, endMs, { keptMs, keptSplit: split, breath: pause.breath && { startMs: pause.breath.start_ms, endMs: pause.breath.end_ms }, keepBreath: pause.keep_breath })!;
  return { id, type: 'silence', startMs: removed.startMs, endMs: removed.endMs, active: true, pause };
}

describe('keyframe-aware cut edges: a shortened pause slides onto a keyframe inside its pause (issue 42 item 1)', () => {
  it('the contract rule: the removed range keeps its length and moves its end (else its start) onto the nearest keyframe within the tolerance', () => {
    // removes [3_800, 4_800) of [3_500, 5_200): no keyframe within reach of the end; the start slides +200 onto 4_000
    expect(snapRemovedToKeyframe({ startMs: 3_800, endMs: 4_800 }, { startMs: 3_500, endMs: 5_200 }, EVERY_2_S)).to.deep.equal({ startMs: 4_000, endMs: 5_000 });
    // the end reaches a keyframe: it is preferred (the kept stretch after starts on a whole GOP, nothing decoded up to it)
    expect(snapRemovedToKeyframe({ startMs: 5_300, endMs: 5_900 }, { startMs: 5_000, endMs: 6_200 }, EVERY_2_S)).to.deep.equal({ startMs: 5_400, endMs: 6_000 });
    // both edges within reach, the start nearer: the end is still the one put on a keyframe
    expect(snapRemovedToKeyframe({ startMs: 1_950, endMs: 3_900 }, { startMs: 1_650, endMs: 4_200 }, EVERY_2_S)).to.deep.equal({ startMs: 2_050, endMs: 4_000 });
    // no keyframe within reach: unchanged
    expect(snapRemovedToKeyframe({ startMs: 6_500, endMs: 7_200 }, { startMs: 6_300, endMs: 7_400 }, EVERY_2_S)).to.deep.equal({ startMs: 6_500, endMs: 7_200 });
    // a keyframe beyond the tolerance: unchanged
    const far = KEYFRAME_SNAP_TOLERANCE_MS + 50;
    expect(snapRemovedToKeyframe({ startMs: 1_000, endMs: 2_000 - far }, { startMs: 0, endMs: 3_000 }, EVERY_2_S)).to.deep.equal({ startMs: 1_000, endMs: 2_000 - far });
  });

  it('never out of the pause, and each side keeps at least the minimum quiet (or what it kept, if less)', () => {
    // the end would need 150 ms more of the 200 ms kept after it: only 100 may go (KEYFRAME_SNAP_MIN_SIDE_MS)
    expect(KEYFRAME_SNAP_MIN_SIDE_MS).to.equal(100);
    expect(snapRemovedToKeyframe({ startMs: 1_500, endMs: 1_850 }, { startMs: 1_200, endMs: 2_050 }, EVERY_2_S)).to.deep.equal({ startMs: 1_500, endMs: 1_850 });
    expect(snapRemovedToKeyframe({ startMs: 1_500, endMs: 1_850 }, { startMs: 1_200, endMs: 2_150 }, EVERY_2_S)).to.deep.equal({ startMs: 1_650, endMs: 2_000 });
    // the same before the cut: 150 ms kept before, 50 may go; the start would need −150
    expect(snapRemovedToKeyframe({ startMs: 2_150, endMs: 2_600 }, { startMs: 2_000, endMs: 2_900 }, EVERY_2_S)).to.deep.equal({ startMs: 2_150, endMs: 2_600 });
    // a side that kept nothing (a source's edge) cannot give anything
    expect(snapRemovedToKeyframe({ startMs: 2_100, endMs: 2_600 }, { startMs: 2_100, endMs: 2_900 }, EVERY_2_S)).to.deep.equal({ startMs: 2_100, endMs: 2_600 });
  });

  it('the editing core: the output plays the same kept pause length, split anew; the kept stretch before the cut ends on the keyframe', () => {
    const timeline = known(piece('a', 10_000));
    // pause [5_700, 6_400), 420 ms kept 60/40: removes [5_952, 6_232); the end would need −232 (the 252 ms before may give 152), the start +48
    const edits = [pauseEdit('p1', 5_700, 6_400, 420, 0.6)];
    const snapped = pauseCutsOnKeyframes(edits, EVERY_2_S);
    const before = outputTimeline(timeline, edits, { rate: { num: 25, den: 1 } });
    const after = outputTimeline(timeline, snapped, { rate: { num: 25, den: 1 } });
    const kept = (output: typeof before) => output.toOutput(6_400, 'end') - output.toOutput(5_700, 'start');
    expect(kept(after)).to.equal(kept(before));
    expect([snapped[0]!.startMs, snapped[0]!.endMs]).to.deep.equal([6_000, 6_280]);
  });

  it('the core leaves alone a pause removed whole, an edit whose range an override set, an inactive one, and a kept breath’s other side', () => {
    const whole: PlayedEdit = { ...pauseEdit('w', 5_700, 6_400, 420, 0.6), pause: { start_ms: 5_700, end_ms: 6_400, kept_ms: null, kept_split: 0.6, breath: null, keep_breath: false }, startMs: 5_700, endMs: 6_400 };
    expect(pauseCutsOnKeyframes([whole], EVERY_2_S)[0]).to.equal(whole);
    const moved = pauseEdit('m', 5_700, 6_400, 420, 0.6);
    expect(pauseCutsOnKeyframes([moved], EVERY_2_S, { m: { start_ms: 5_900 } })[0]).to.equal(moved);
    const off = { ...pauseEdit('o', 5_700, 6_400, 420, 0.6), active: false };
    expect(pauseCutsOnKeyframes([off], EVERY_2_S)[0]).to.equal(off);
    // a kept breath at [5_300, 5_400) of the pause [5_000, 6_400): the removed range [5_430, 6_280) lies after it; its end would reach
    // 6_000 by −280 over the breath, so it stays
    const breathy = pauseEdit('b', 5_000, 6_400, 300, 0.6, { breath: { start_ms: 5_300, end_ms: 5_400 }, keep_breath: true });
    expect([breathy.startMs, breathy.endMs]).to.deep.equal([5_400 + BREATH_MARGIN_MS, 6_280]);
    expect(pauseCutsOnKeyframes([breathy], EVERY_2_S)[0]).to.equal(breathy);
    // the same range where the breath may go: it slides over it
    const breathless: PlayedEdit = { ...breathy, pause: { ...breathy.pause!, keep_breath: false } };
    expect(pauseCutsOnKeyframes([breathless], EVERY_2_S)[0]).to.include({ startMs: 5_150, endMs: 6_000 });
  });

  it('the spine\'s keyframes on the timeline: each piece\'s source keyframes within what it plays, where it plays them', () => {
    const split = { ...piece('b', 3_000), sourceStartMs: 1_000 };
    const timeline = known(piece('a', 5_000), split);
    // a plays [0, 5_000) of file-a; b plays file-b's [1_000, 4_000) at [5_000, 8_000)
    const keyframes = timelineKeyframes(timeline, (file) => (file === 'file-a' ? [0, 2_000, 4_000, 6_000] : [0, 2_000, 4_000]));
    expect(keyframes).to.deep.equal([0, 2_000, 4_000, 6_000, 8_000]);
  });
});
