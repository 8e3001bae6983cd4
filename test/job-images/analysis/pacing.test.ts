import { expect } from 'chai';
import { BRISKEST_PAUSE_MS, minimumPauseMs, MOST_PATIENT_PAUSE_MS, pacingCurve } from '../../../job-images/whisper/src/analysis/pacing.ts';
import { findSilenceCuts } from '../../../job-images/whisper/src/analysis/silences.ts';
import { MIN_CUT_MS, spansOverlap, type Span } from '../../../job-images/whisper/src/analysis/spans.ts';
import { WORD_LEAD_IN_MS, WORD_TAIL_MS } from '../../../job-images/whisper/src/analysis/words.ts';
import { envelopeOf, gapsOf, SeededRandom, speechCorpusEntry, wordsAt } from '../../analysis/transcripts.ts';

/** Silence cuts of "one" and "two" with `pauseMs` of silence between them, and silence around them. */
function cutsAroundPause(pauseMs: number, pacingLevel: number): Span[] {
  const words = wordsAt([
    ['one', 0, 300],
    ['two', 300 + pauseMs, 600 + pauseMs],
  ]);
  return findSilenceCuts({ duration_ms: 600 + pauseMs, words, silences: gapsOf(words, 600 + pauseMs, 1), envelope: null, minimum_pause_ms: minimumPauseMs(pacingLevel) });
}

describe('pacing_level → the shortest pause that gets cut (pacing.ts)', () => {
  it('the curve, as documented: 0 → 2000 ms … 50 → 890 ms … 100 → 400 ms', () => {
    expect(pacingCurve().map((point) => [point.pacing_level, point.minimum_pause_ms])).to.deep.equal([
      [0, 2000],
      [10, 1700],
      [20, 1450],
      [30, 1230],
      [40, 1050],
      [50, 890],
      [60, 760],
      [70, 650],
      [80, 550],
      [90, 470],
      [100, 400],
    ]);
  });

  it('never rises from one level to the next, in whole 10 ms frames; out-of-range levels are clamped', () => {
    for (let level = 1; level <= 100; level += 1) {
      expect(minimumPauseMs(level), `level ${level}`).to.be.at.most(minimumPauseMs(level - 1));
      expect(minimumPauseMs(level) % 10).to.equal(0);
    }
    expect([minimumPauseMs(-5), minimumPauseMs(150), minimumPauseMs(Number.NaN)]).to.deep.equal([MOST_PATIENT_PAUSE_MS, BRISKEST_PAUSE_MS, MOST_PATIENT_PAUSE_MS]);
  });

  it('the briskest pause still leaves a cut of MIN_CUT_MS once the tail and the lead-in are kept', () => {
    expect(BRISKEST_PAUSE_MS).to.equal(WORD_TAIL_MS + WORD_LEAD_IN_MS + MIN_CUT_MS);
  });

  it('at every level, a pause 10 ms shorter than the minimum is never cut, one of the minimum is', () => {
    for (let level = 0; level <= 100; level += 1) {
      const minimum = minimumPauseMs(level);
      expect(cutsAroundPause(minimum - 10, level), `level ${level}, pause ${minimum - 10} ms`).to.deep.equal([]);
      expect(cutsAroundPause(minimum, level), `level ${level}, pause ${minimum} ms`).to.have.length(1);
    }
  });

  it('over generated speech at random levels: a gap between words is cut exactly when it is at least the minimum pause', () => {
    const random = new SeededRandom(31);
    for (let entry = 0; entry < 150; entry += 1) {
      const { words, duration_ms: duration } = speechCorpusEntry(random);
      const level = random.int(0, 100);
      const cuts = findSilenceCuts({ duration_ms: duration, words, silences: gapsOf(words, duration, 1), envelope: envelopeOf(words, duration), minimum_pause_ms: minimumPauseMs(level) });
      const gaps = gapsOf(words, duration, 1);
      for (const gap of gaps) {
        const cut = cuts.filter((candidate) => spansOverlap(candidate, gap));
        expect(cut, `level ${level}, gap ${gap.start_ms}–${gap.end_ms}`).to.have.length(gap.end_ms - gap.start_ms >= minimumPauseMs(level) ? 1 : 0);
      }
      expect(cuts.length).to.be.at.most(gaps.length);
    }
  });
});
