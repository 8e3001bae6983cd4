import { expect } from 'chai';
import { SNAP_WINDOW_MS } from '../../../job-images/whisper/src/analysis/boundaries.ts';
import type { EnergyEnvelope } from '../../../job-images/whisper/src/analysis/energy.ts';
import { findSilenceCuts, noiseWords, tidySilences, WORD_REACH_MS } from '../../../job-images/whisper/src/analysis/silences.ts';
import type { Span } from '../../../job-images/whisper/src/analysis/spans.ts';
import { WORD_LEAD_IN_MS, WORD_TAIL_MS, type SpokenWord } from '../../../job-images/whisper/src/analysis/words.ts';
import { envelopeOf, gapsOf, wordsAt } from '../../analysis/transcripts.ts';

const BRISK = 400;
// "hello" 1000–1400, "world" 3000–3500, in a 5 s source.
const words = wordsAt([
  ['hello', 1000, 1400],
  ['world', 3000, 3500],
]);
const DURATION = 5000;

function cutsOf(options: { words?: SpokenWord[]; silences?: Span[]; envelope?: EnergyEnvelope | null; minimum?: number } = {}): [number, number][] {
  const spoken = options.words ?? words;
  return findSilenceCuts({
    duration_ms: DURATION,
    words: spoken,
    silences: options.silences ?? gapsOf(spoken, DURATION),
    envelope: options.envelope === undefined ? envelopeOf(spoken, DURATION) : options.envelope,
    minimum_pause_ms: options.minimum ?? BRISK,
  }).map((cut) => [cut.start_ms, cut.end_ms]);
}

/** "hello" and "world" with a word "what" between them, where the recognizer put it. */
const withWord = (start: number, end: number): SpokenWord[] => wordsAt([['hello', 1000, 1400], ['what', start, end], ['world', 3000, 3500]]);

/** The flat envelope of `words`, with frames [from, to) (10 ms each) quieter still. */
function envelopeWithDip(fromFrame: number, toFrame: number): EnergyEnvelope {
  const envelope = envelopeOf(words, DURATION);
  envelope.rms.fill(0.00001, fromFrame, toFrame);
  return envelope;
}

describe('silence cuts are bounded by the words (silences.ts)', () => {
  it('the guard bands are constants: a tail of 100–150 ms after a word, a lead-in of 150–200 ms before one, snapping within 50 ms', () => {
    expect(WORD_TAIL_MS).to.be.within(100, 150);
    expect(WORD_LEAD_IN_MS).to.be.within(150, 200);
    expect(SNAP_WINDOW_MS).to.equal(50);
  });

  it('a pause between two words is cut from the end of the one + the tail to the start of the next − the lead-in', () => {
    expect(cutsOf()[1]).to.deep.equal([1400 + WORD_TAIL_MS, 3000 - WORD_LEAD_IN_MS]);
  });

  it('leading silence is cut from 0 to the lead-in of the first word, trailing silence from the tail of the last word to the end', () => {
    expect(cutsOf()).to.deep.equal([
      [0, 1000 - WORD_LEAD_IN_MS],
      [1400 + WORD_TAIL_MS, 3000 - WORD_LEAD_IN_MS],
      [3500 + WORD_TAIL_MS, DURATION],
    ]);
  });

  it('a boundary snaps to the quietest frame within SNAP_WINDOW_MS of its point', () => {
    // Frames 154–155 (1540–1560 ms) quieter: the boundary between them, 1550, is the quietest.
    expect(cutsOf({ envelope: envelopeWithDip(154, 156) })[1]).to.deep.equal([1550, 2820]);
    // Frames 278–279: the end moves back to 2790.
    expect(cutsOf({ envelope: envelopeWithDip(278, 280) })[1]).to.deep.equal([1520, 2790]);
  });

  it('a boundary never snaps into a guard band, however quiet it is there', () => {
    // 1450–1500 lies in the tail of "hello", 2830–2900 in the lead-in of "world".
    expect(cutsOf({ envelope: envelopeWithDip(145, 150) })[1]).to.deep.equal([1520, 2820]);
    expect(cutsOf({ envelope: envelopeWithDip(283, 290) })[1]).to.deep.equal([1520, 2820]);
  });

  it('a quiet frame beyond the snapping window does not pull a boundary', () => {
    expect(cutsOf({ envelope: envelopeWithDip(200, 202) })[1]).to.deep.equal([1520, 2820]);
  });

  it('without an envelope (or past its end) the boundaries stay where the guard bands put them', () => {
    expect(cutsOf({ envelope: null })[1]).to.deep.equal([1520, 2820]);
    expect(cutsOf({ envelope: { frame_ms: 10, rms: new Float32Array(100).fill(0.001) } })[1]).to.deep.equal([1520, 2820]);
  });

  it('the detector and the recognizer disagree: a cut lies where both heard nothing, with the guard bands kept around what either heard', () => {
    // The detector still hears the decay of "hello" until 1700: its acoustic end bounds the cut, with the tail.
    expect(cutsOf({ silences: [{ start_ms: 1700, end_ms: 3000 }] })).to.deep.equal([[1700 + WORD_TAIL_MS, 2820]]);
    // Its silence reaches into both words: the words win.
    expect(cutsOf({ silences: [{ start_ms: 1300, end_ms: 3100 }] })).to.deep.equal([[1520, 2820]]);
    // It heard a sound the recognizer missed (a breath at 2000–2300): two pauses, each judged alone.
    expect(cutsOf({ silences: [{ start_ms: 1400, end_ms: 2000 }, { start_ms: 2300, end_ms: 3000 }] })).to.deep.equal([[1520, 2000 - WORD_LEAD_IN_MS], [2300 + WORD_TAIL_MS, 2820]]);
    // It heard no silence at all: nothing is cut, whatever the gap between the words.
    expect(cutsOf({ silences: [] })).to.deep.equal([]);
  });

  /** The flat envelope of `spoken` with frames [from, to) at the floor, and the floor level it carries. */
  const floored = (spoken: SpokenWord[], from: number, to: number): EnergyEnvelope => {
    const envelope = envelopeOf(spoken, DURATION);
    envelope.rms.fill(0.0001, from, to);
    envelope.floor_rms = 0.001;
    return envelope;
  };

  it('a quiet word wholly inside a detected silence (a recognizer hearing words in a babble or a hiss) bounds nothing, wherever it lies in it', () => {
    const silences = [{ start_ms: 1400, end_ms: 3000 }];
    const cut = (start: number, end: number) => cutsOf({ words: withWord(start, end), silences, envelope: floored(withWord(start, end), 140, 300) });
    expect(cut(2000, 2300)).to.deep.equal([[1400 + WORD_TAIL_MS, 3000 - WORD_LEAD_IN_MS]]);
    expect(cut(1410, 1700)).to.deep.equal([[1400 + WORD_TAIL_MS, 3000 - WORD_LEAD_IN_MS]]);
    expect(cut(2300, 3000)).to.deep.equal([[1400 + WORD_TAIL_MS, 3000 - WORD_LEAD_IN_MS]]);
    // without the levels (nothing known of the acoustics) every word bounds the pause
    expect(cutsOf({ words: withWord(2000, 2300), silences })).to.deep.equal([[1400 + WORD_TAIL_MS, 2000 - WORD_LEAD_IN_MS], [2300 + WORD_TAIL_MS, 3000 - WORD_LEAD_IN_MS]]);
    // the false-start finder is told the same words (noiseWords), by their positions
    const words = withWord(2000, 2300);
    const phantom = words.findIndex((word) => word.start_ms === 2000);
    expect([...noiseWords(words, silences, floored(words, 140, 300))]).to.deep.equal([phantom]);
    expect([...noiseWords(words, silences, null)]).to.deep.equal([]);
  });

  it('a word stretched from speech over a quiet pause (pocketsphinx in a babble) reaches WORD_REACH_MS into it, no further; one over sound keeps its times', () => {
    const silences = [{ start_ms: 1400, end_ms: 3000 }];
    const cut = (spoken: SpokenWord[], envelope = floored(spoken, 140, 300)) => cutsOf({ words: spoken, silences, envelope });
    // "hello" heard until 2600: the cut starts its tail after 1400 + WORD_REACH_MS
    expect(cut(wordsAt([['hello', 1000, 2600], ['world', 3000, 3500]]))).to.deep.equal([[1400 + WORD_REACH_MS + WORD_TAIL_MS, 3000 - WORD_LEAD_IN_MS]]);
    // "world" heard from 1800: the cut ends its lead-in before 3000 − WORD_REACH_MS
    expect(cut(wordsAt([['hello', 1000, 1400], ['world', 1800, 3500]]))).to.deep.equal([[1400 + WORD_TAIL_MS, 3000 - WORD_REACH_MS - WORD_LEAD_IN_MS]]);
    // a reach up to WORD_REACH_MS is a word's fading tail and the recognizer's timing: kept as heard
    expect(cut(wordsAt([['hello', 1000, 1400 + WORD_REACH_MS - 50], ['world', 3000, 3500]]))).to.deep.equal([[1400 + WORD_REACH_MS - 50 + WORD_TAIL_MS, 3000 - WORD_LEAD_IN_MS]]);
    // a fifth of the frames it reaches over rise over the floor level: it may be the word's sound, and its end stands
    const spoken = wordsAt([['hello', 1000, 2300], ['world', 3000, 3500]]);
    const envelope = floored(spoken, 140, 300);
    envelope.rms.fill(0.002, 150, 160);
    expect(cut(spoken, envelope)).to.deep.equal([[2300 + WORD_TAIL_MS, 3000 - WORD_LEAD_IN_MS]]);
    // "world" moved to 2750 passes "the" (2600–2700, over sound): the words stay in time order, and the cut keeps the lead-in of "the"
    const passed = wordsAt([['hello', 1000, 1400], ['world', 1410, 3400], ['the', 2600, 2700]]);
    const sounded = floored(passed, 140, 300);
    sounded.rms.fill(0.002, 260, 270);
    expect(cut(passed, sounded)).to.deep.equal([[1400 + WORD_TAIL_MS, 2600 - WORD_LEAD_IN_MS]]);
    expect(WORD_REACH_MS).to.be.within(200, 300);
  });

  it('a word inside a silence is noise only while 9 in 10 of its frames stay at or under the floor level and none reaches the onset level: a soft word the detector missed stays', () => {
    const silences = [{ start_ms: 1400, end_ms: 3000 }];
    const spoken = withWord(2000, 2300);
    const envelope = floored(spoken, 140, 300);
    // a few frames of noise over the floor level (a babble's peaks) do not make it a word
    envelope.rms.fill(0.002, 200, 202);
    expect(cutsOf({ words: spoken, silences, envelope })).to.deep.equal([[1400 + WORD_TAIL_MS, 3000 - WORD_LEAD_IN_MS]]);
    // a fifth of its frames over the floor level: it may be a soft word, and it bounds the pause
    envelope.rms.fill(0.002, 200, 206);
    expect(cutsOf({ words: spoken, silences, envelope })).to.deep.equal([[1400 + WORD_TAIL_MS, 2000 - WORD_LEAD_IN_MS], [2300 + WORD_TAIL_MS, 3000 - WORD_LEAD_IN_MS]]);
    // one frame at the level that can start speech: a word's peak, not noise
    envelope.rms.fill(0.0001, 200, 230);
    envelope.onset_rms = 0.01;
    envelope.rms[215] = 0.02;
    expect(cutsOf({ words: spoken, silences, envelope })).to.deep.equal([[1400 + WORD_TAIL_MS, 2000 - WORD_LEAD_IN_MS], [2300 + WORD_TAIL_MS, 3000 - WORD_LEAD_IN_MS]]);
  });

  it('detected silences in any order, overlapping or past the source, are merged and clipped first', () => {
    expect(tidySilences([{ start_ms: 2000.4, end_ms: 3000 }, { start_ms: 1400, end_ms: 2100 }, { start_ms: -50, end_ms: 20 }, { start_ms: 4900, end_ms: 7000 }, { start_ms: 300, end_ms: 200 }], DURATION)).to.deep.equal([
      { start_ms: 0, end_ms: 20 },
      { start_ms: 1400, end_ms: 3000 },
      { start_ms: 4900, end_ms: 5000 },
    ]);
    expect(cutsOf({ silences: [{ start_ms: 2000, end_ms: 3000 }, { start_ms: 1400, end_ms: 2100 }] })).to.deep.equal([[1520, 2820]]);
  });

  it('overlapping and nested words: a pause starts after the latest end so far, not after the last word to start', () => {
    const sloppy = wordsAt([
      ['long', 1000, 2500],
      ['inside', 1200, 1400],
      ['after', 4000, 4200],
    ]);
    expect(cutsOf({ words: sloppy, silences: [{ start_ms: 1400, end_ms: 4000 }] })).to.deep.equal([[2500 + WORD_TAIL_MS, 4000 - WORD_LEAD_IN_MS]]);
  });

  it('a word the recognizer timed past the end of the source: the cut before it stays inside the source', () => {
    const late = wordsAt([
      ['hello', 1000, 1400],
      ['late', 5200, 5400],
    ]);
    expect(cutsOf({ words: late, silences: [{ start_ms: 1400, end_ms: 5000 }] })).to.deep.equal([[1520, DURATION - WORD_LEAD_IN_MS]]);
  });
});
