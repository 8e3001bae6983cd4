import { expect } from 'chai';
import { findFillerCuts } from '../../../job-images/whisper/src/analysis/fillers.ts';
import { planSourceEdits } from '../../../job-images/whisper/src/analysis/plan.ts';
import type { Cut } from '../../../job-images/whisper/src/analysis/spans.ts';
import { WORD_LEAD_IN_MS, WORD_TAIL_MS, type SpokenWord } from '../../../job-images/whisper/src/analysis/words.ts';
import { envelopeOf, spoken } from '../../analysis/transcripts.ts';

function fillerCuts(words: readonly SpokenWord[]): Cut[] {
  return findFillerCuts(words, { duration_ms: words.at(-1)!.end_ms + 1000, envelope: null });
}

/** What each filler edit removes, as said. */
function fillers(script: string): string[] {
  const words = spoken(script);
  return fillerCuts(words).map((cut) => words.slice(cut.words!.from, cut.words!.to).map((word) => word.text).join(' '));
}

describe('fillers: hesitations and set-off fillers, offered inactive (fillers.ts)', () => {
  it('um, uh and erm are fillers wherever they are heard', () => {
    expect(fillers('so um we cut it uh twice erm today')).to.deep.equal(['um', 'uh', 'erm']);
    expect(fillers('Um, so we cut it.')).to.deep.equal(['Um,']);
  });

  it('a filler edit is offered inactive, with a reason that quotes it', () => {
    const words = spoken('we cut |400 um |400 the silences');
    const { edits, counts } = planSourceEdits({ source_index: 0, duration_ms: 3000, words, silences: [], envelope: null }, { pacing_level: 50, false_start_sensitivity: 50 });
    expect(edits.map(({ type, active, reason }) => ({ type, active, reason }))).to.deep.equal([{ type: 'filler', active: false, reason: 'Filler: "um"' }]);
    expect(counts).to.deep.equal({ silence: 0, false_start: 0, filler: 1 });
  });

  it('"like" inside a sentence is a word: "I like this" has no filler', () => {
    expect(fillers('I like this')).to.deep.equal([]);
    expect(fillers('it looks like a cut')).to.deep.equal([]);
  });

  it('"like" set off by commas or by pauses is a filler', () => {
    expect(fillers('it was, like, huge')).to.deep.equal(['like,']);
    expect(fillers('it was |300 like |300 huge')).to.deep.equal(['like']);
    expect(fillers('it was |300 like huge')).to.deep.equal([]);
  });

  it('"you know" and "I mean" set off are fillers; carrying meaning or split by a boundary they are not', () => {
    expect(fillers('it is hard, you know, to cut')).to.deep.equal(['you know,']);
    expect(fillers('I mean, it works')).to.deep.equal(['I mean,']);
    expect(fillers('you know him')).to.deep.equal([]);
    expect(fillers('that is what I mean it')).to.deep.equal([]);
    expect(fillers('and you, know, it')).to.deep.equal([]);
  });

  it('"er" is no filler: it is a word in other languages (German "he")', () => {
    expect(fillers('er kommt morgen')).to.deep.equal([]);
  });

  it('fillers said one after another are one edit', () => {
    expect(fillers('so um, uh, we cut')).to.deep.equal(['um, uh,']);
  });

  it('with room around it, a filler cut keeps the tail of the word before and the lead-in of the word after, and the pause before the filler is what precedes the next word', () => {
    const words = spoken('so |500 um |500 we', 1000);
    const [um, we] = [words[1]!, words[2]!];
    expect(fillerCuts(words).map((cut) => [cut.start_ms, cut.end_ms])).to.deep.equal([[um.start_ms - WORD_LEAD_IN_MS, we.start_ms - WORD_LEAD_IN_MS]]);
  });

  it('squeezed between words, a filler cut still removes the filler whole and never reaches into a neighbour, at the quietest point of each gap', () => {
    const words = spoken('so um so', 1000, 250, 20);
    const [before, um, after] = words as [SpokenWord, SpokenWord, SpokenWord];
    expect(fillerCuts(words).map((cut) => [cut.start_ms, cut.end_ms])).to.deep.equal([[before.end_ms, um.end_ms]]);
    // The guard bands do not fit (20 ms gaps): the boundaries take the quietest frame of each gap.
    const envelope = envelopeOf(words, 3000);
    envelope.rms[126] = 0;
    envelope.rms[153] = 0;
    const [cut] = findFillerCuts(words, { duration_ms: 3000, envelope });
    expect([cut!.start_ms, cut!.end_ms]).to.deep.equal([1260, 1530]);
    expect(cut!.start_ms).to.be.within(before.end_ms, um.start_ms);
    expect(cut!.end_ms).to.be.within(um.end_ms, after.start_ms);
    expect(WORD_TAIL_MS + WORD_LEAD_IN_MS).to.be.greaterThan(20);
  });

  it('a filler too short to cut once its neighbours are kept (under MIN_CUT_MS) is not offered', () => {
    expect(fillerCuts(spoken('so uh so', 1000, 40, 10)).filter((cut) => cut.type === 'filler')).to.deep.equal([]);
  });
});
