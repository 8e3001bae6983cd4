import { expect } from 'chai';
import { removedRange } from '../../../crds/contract/editing/kept-pause.ts';
import { BRISKEST_KEPT_MS, keptPauseMs, minimumPauseMs, MOST_PATIENT_KEPT_MS, pacingCurve } from '../../../job-images/whisper/src/analysis/pacing.ts';
import { planSourceEdits } from '../../../job-images/whisper/src/analysis/plan.ts';
import { DETECTED_END_LAG_MS, DETECTED_ONSET_LEAD_MS, findSilenceCuts, SHORTEST_KEPT_SIDE_MS, SPLIT_AFTER_SENTENCE, SPLIT_IN_SENTENCE } from '../../../job-images/whisper/src/analysis/silences.ts';
import { MIN_CUT_MS, spansOverlap } from '../../../job-images/whisper/src/analysis/spans.ts';
import { envelopeOf, gapsOf, wordsAt } from '../../analysis/transcripts.ts';

describe('shortened pauses: a cut pause keeps part of itself, split at the speech edges (issue 39)', () => {
  it('pacing_level → the kept length, as documented: 0 → 700 ms … 50 → 420 … 100 → 250, never rising, always under the shortest pause cut', () => {
    expect(pacingCurve().map((point) => [point.pacing_level, point.kept_pause_ms])).to.deep.equal([
      [0, 700],
      [10, 630],
      [20, 570],
      [30, 510],
      [40, 460],
      [50, 420],
      [60, 380],
      [70, 340],
      [80, 310],
      [90, 280],
      [100, 250],
    ]);
    for (let level = 1; level <= 100; level += 1) {
      expect(keptPauseMs(level), `level ${level}`).to.be.at.most(keptPauseMs(level - 1));
      expect(keptPauseMs(level) % 10).to.equal(0);
    }
    for (let level = 0; level <= 100; level += 1) {
      expect(minimumPauseMs(level) - keptPauseMs(level), `level ${level}`).to.be.at.least(MIN_CUT_MS);
      // each side of a kept pause next to a word keeps at least SHORTEST_KEPT_SIDE_MS
      expect(Math.round(keptPauseMs(level) * Math.min(SPLIT_AFTER_SENTENCE, SPLIT_IN_SENTENCE, 1 - SPLIT_AFTER_SENTENCE, 1 - SPLIT_IN_SENTENCE)), `level ${level}`).to.be.at.least(SHORTEST_KEPT_SIDE_MS);
    }
    expect([keptPauseMs(-5), keptPauseMs(150), keptPauseMs(Number.NaN)]).to.deep.equal([MOST_PATIENT_KEPT_MS, BRISKEST_KEPT_MS, MOST_PATIENT_KEPT_MS]);
  });

  it('after a sentence end 60 % of the kept length stays after it and 40 % before the next word; within a sentence 40 / 60', () => {
    const words = wordsAt([
      ['done.', 0, 400],
      ['So', 2_400, 2_700],
      ['we', 2_800, 3_000],
      ['go', 5_000, 5_300],
    ]);
    const cuts = findSilenceCuts({ duration_ms: 5_300, words, silences: gapsOf(words, 5_300), envelope: null, minimum_pause_ms: minimumPauseMs(50), kept_pause_ms: 420 });
    expect(cuts.map((cut) => [cut.start_ms, cut.end_ms])).to.deep.equal([
      [400 + Math.round(420 * SPLIT_AFTER_SENTENCE), 2_400 - (420 - Math.round(420 * SPLIT_AFTER_SENTENCE))],
      [3_000 + Math.round(420 * SPLIT_IN_SENTENCE), 5_000 - (420 - Math.round(420 * SPLIT_IN_SENTENCE))],
    ]);
    expect(cuts.map((cut) => cut.kept)).to.deep.equal([
      { before_ms: 252, after_ms: 168, breath: null },
      { before_ms: 168, after_ms: 252, breath: null },
    ]);
    for (const cut of cuts) for (const word of words) expect(spansOverlap(cut, word), `${cut.start_ms}–${cut.end_ms} against ${word.text}`).to.equal(false);
  });

  it('at a source edge only the speech side keeps its part (two sources joined keep one pause); a pause under the shortest cut is untouched', () => {
    const words = wordsAt([
      ['Hello.', 1_500, 1_900],
      ['again', 2_300, 2_700],
    ]);
    const cuts = findSilenceCuts({ duration_ms: 4_700, words, silences: gapsOf(words, 4_700), envelope: null, minimum_pause_ms: minimumPauseMs(50), kept_pause_ms: 420 });
    // the 400 ms pause between the words is natural (under 890 ms): no cut
    expect(cuts.map((cut) => [cut.start_ms, cut.end_ms, cut.kept?.before_ms, cut.kept?.after_ms])).to.deep.equal([
      [0, 1_500 - 168, 0, 168],
      [2_700 + 168, 4_700, 168, 0],
    ]);
  });

  it('the plan writes the pause with its kept length, split and breath, and removes what the contract rule makes of them; its reason says so', () => {
    const words = wordsAt([
      ['First.', 0, 500],
      ['Second', 3_000, 3_500],
    ]);
    const envelope = envelopeOf(words, 3_500);
    const breath = { start_ms: 2_300, end_ms: 2_650 };
    const plan = planSourceEdits({ source_index: 0, duration_ms: 3_500, words, silences: gapsOf(words, 3_500), breaths: [breath], envelope }, { pacing_level: 50, false_start_sensitivity: 50 });
    const [edit] = plan.edits;
    expect(plan.edits).to.have.length(1);
    expect(edit!.pause).to.deep.equal({ start_ms: 500, end_ms: 3_000, kept_ms: 420, kept_split: 0.6, breath });
    expect(removedRange(500, 3_000, { keptMs: 420, keptSplit: 0.6, breath: null, keepBreath: false })).to.deep.equal({ startMs: edit!.start_ms, endMs: edit!.end_ms });
    expect(edit!.reason).to.equal('Pause of 2.5 s, shortened to 0.42 s (a breath in it, removed with it)');
    expect(edit!.active).to.equal(true);
  });

  it("a word timed past the detector's edge bounds the pause only where it reaches over sound beyond the detector's measured lag: a last faint frame at the edge does not make the pause start at the word", () => {
    // "one" sounds 0–400 ms, its last frame (400–410) faint: over the room's noise, under the detector's off; "two" from 3000
    const rms = new Float32Array(340).fill(0.001);
    rms.fill(0.3, 0, 40).fill(0.3, 300, 340);
    rms[40] = 0.005;
    const envelope = { frame_ms: 10, rms, floor_rms: 0.01, noise_rms: 0.002, onset_rms: 0.1 };
    // the recognizer ends "one" 40 ms late
    const words = wordsAt([
      ['one', 0, 440],
      ['two', 3_000, 3_400],
    ]);
    const [cut] = findSilenceCuts({ duration_ms: 3_400, words, silences: [{ start_ms: 400, end_ms: 3_000 }], envelope, minimum_pause_ms: minimumPauseMs(50), kept_pause_ms: 420, detected_silences: true });
    // the pause as heard: the detector's silence widened by its lag and lead (385–3024), split 168 / 252
    expect([cut!.start_ms, cut!.end_ms]).to.deep.equal([400 - DETECTED_END_LAG_MS + 168, 3_000 + DETECTED_ONSET_LEAD_MS - 252]);
  });
});
