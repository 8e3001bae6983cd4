import { expect } from 'chai';
import { planSourceCuts, planSourceEdits, PRECEDENCE, type SourceSignals } from '../../../job-images/whisper/src/analysis/plan.ts';
import { keptPauseMs } from '../../../job-images/whisper/src/analysis/pacing.ts';
import { SPLIT_AFTER_SENTENCE, SPLIT_IN_SENTENCE } from '../../../job-images/whisper/src/analysis/silences.ts';
import { MIN_CUT_MS } from '../../../job-images/whisper/src/analysis/spans.ts';
import { WORD_LEAD_IN_MS, WORD_TAIL_MS, type SpokenWord } from '../../../job-images/whisper/src/analysis/words.ts';
import { envelopeOf, gapsOf, spoken } from '../../analysis/transcripts.ts';

const BRISK = { pacing_level: 100, false_start_sensitivity: 50 };
/** What a pause cut at BRISK keeps of itself (issue 39): after the speech before it, split by whether that ended a sentence, and before the speech after it. */
const KEPT = keptPauseMs(BRISK.pacing_level);
const AFTER_SENTENCE = Math.round(KEPT * SPLIT_AFTER_SENTENCE);
const AFTER_WORD = Math.round(KEPT * SPLIT_IN_SENTENCE);

/** A source of `words` with a perfect silence detector (every gap of 300 ms or more). */
function sourceOf(words: SpokenWord[], durationMs = words.at(-1)!.end_ms, sourceIndex = 0): SourceSignals {
  return { source_index: sourceIndex, duration_ms: durationMs, words, silences: gapsOf(words, durationMs), envelope: envelopeOf(words, durationMs) };
}

function summary(signals: SourceSignals, settings = BRISK): [string, number, number][] {
  return planSourceCuts(signals, settings).map((cut) => [cut.type, cut.start_ms, cut.end_ms]);
}

describe('the cut plan of one source (plan.ts)', () => {
  it('precedence is documented data: false start, then silence, then filler', () => {
    expect(PRECEDENCE).to.deep.equal(['false_start', 'silence', 'filler']);
  });

  it('a false start wins over the pauses inside it and after it: one edit; the pause before it stays a silence cut of its own (up to the false start, which takes its kept part before the take)', () => {
    const words = spoken('Hello there. |1500 so today I want |1200 so today I want to show you');
    const [there, take, restart] = [words[1]!, words[2]!, words[6]!];
    expect(summary(sourceOf(words))).to.deep.equal([
      ['silence', there.end_ms + AFTER_SENTENCE, take.start_ms - WORD_LEAD_IN_MS],
      ['false_start', take.start_ms - WORD_LEAD_IN_MS, restart.start_ms - WORD_LEAD_IN_MS],
    ]);
  });

  it('turning the false start off leaves the silence cuts that stand alone (each edit is safe by itself)', () => {
    const words = spoken('Hello there. |1500 so today I want |1200 so today I want to show you');
    expect(summary(sourceOf(words), { pacing_level: 100, false_start_sensitivity: 0 }).map(([type]) => type)).to.deep.equal(['silence', 'silence']);
  });

  it('an active silence cut is never hidden inside an offered filler cut: the filler keeps what is left, with its word', () => {
    const words = spoken('so we |300 um |1500 cut it');
    const [um, cut] = [words[2]!, words[3]!];
    expect(summary(sourceOf(words))).to.deep.equal([
      ['filler', um.start_ms - WORD_LEAD_IN_MS, um.end_ms + AFTER_WORD],
      ['silence', um.end_ms + AFTER_WORD, cut.start_ms - (KEPT - AFTER_WORD)],
    ]);
  });

  it('a filler inside a false take goes with the false start: no filler edit of its own', () => {
    const words = spoken('so today um I want |800 so today I want to show you');
    expect(summary(sourceOf(words)).map(([type]) => type)).to.deep.equal(['false_start']);
  });

  it('cuts shorter than MIN_CUT_MS are dropped, and so are pieces of a filler cut that a silence cut leaves without the filler', () => {
    expect(MIN_CUT_MS).to.equal(100);
    // A 40 ms "uh" squeezed between words: 50 ms to cut at most.
    expect(summary(sourceOf(spoken('so uh so', 0, 40, 10)))).to.deep.equal([]);
    // The detector hears a sound 70 ms, then 220 ms, before the lead-in of "cut": the pause ends there, so its kept part before the speech stays before that sound, and the filler cut reaches past it.
    const words = spoken('so we |300 um |1500 cut it');
    const [um, cut] = [words[2]!, words[3]!];
    for (const short of [70, 220]) {
      const silences = [{ start_ms: um.end_ms, end_ms: cut.start_ms - WORD_LEAD_IN_MS - short }];
      expect(summary({ ...sourceOf(words), silences }), `${short} ms`).to.deep.equal([
        ['filler', um.start_ms - WORD_LEAD_IN_MS, um.end_ms + AFTER_WORD],
        ['silence', um.end_ms + AFTER_WORD, cut.start_ms - WORD_LEAD_IN_MS - short - (KEPT - AFTER_WORD)],
      ]);
    }
  });

  it('cuts are in SOURCE time, carry their source index, and are counted by type; fillers inactive, the rest active', () => {
    const words = spoken('um |600 so today I want |600 so today I want to show you |2000 bye', 1000);
    const { edits, counts } = planSourceEdits(sourceOf(words, words.at(-1)!.end_ms + 2000, 3), BRISK);
    expect(edits.map(({ type, active, source_index: sourceIndex }) => [type, active, sourceIndex])).to.deep.equal([
      ['silence', true, 3],
      ['filler', false, 3],
      ['silence', true, 3],
      ['false_start', true, 3],
      ['silence', true, 3],
      ['silence', true, 3],
    ]);
    // the pause at the source's start keeps only what stays before a sentence
    expect(edits[0]).to.include({ start_ms: 0, end_ms: 1000 - (KEPT - AFTER_SENTENCE) });
    expect(counts).to.deep.equal({ silence: 4, false_start: 1, filler: 1 });
  });

  it('deterministic: the same signals give the same plan, whatever order the detector listed its silences in', () => {
    const signals = sourceOf(spoken('um |600 so today I want |600 so today I want to show you |2000 bye', 1000), 12_000);
    const reversed = { ...signals, silences: [...signals.silences].reverse() };
    expect(planSourceEdits(reversed, BRISK)).to.deep.equal(planSourceEdits(signals, BRISK));
    expect(planSourceEdits(signals, BRISK)).to.deep.equal(planSourceEdits(signals, BRISK));
  });
});
