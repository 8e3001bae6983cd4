import { expect } from 'chai';
import { LINE_BREAKING_PAUSE_MS, planCaptionLines, type CutSpan, type TimedWord } from '../../api/src/captions/lines.ts';

/** A small deterministic generator, so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const PUNCTUATION = ['', '', '', '', ',', '.', '?', ';'];

function transcript(next: () => number): { words: TimedWord[]; cuts: CutSpan[] } {
  const words: TimedWord[] = [];
  let at = Math.floor(next() * 1000);
  const count = 1 + Math.floor(next() * 80);
  for (let index = 0; index < count; index++) {
    const length = 80 + Math.floor(next() * 500);
    words.push({ word: `w${index}${PUNCTUATION[Math.floor(next() * PUNCTUATION.length)]}`, start_ms: at, end_ms: at + length });
    at += length + Math.floor(next() < 0.15 ? next() * 1500 : next() * 120);
  }
  const cuts: CutSpan[] = Array.from({ length: Math.floor(next() * 5) }, () => {
    const start = Math.floor(next() * at);
    return { start_ms: start, end_ms: start + 50 + Math.floor(next() * 2500) };
  });
  return { words, cuts };
}

const mid = (word: TimedWord) => (word.start_ms + word.end_ms) / 2;
const inCut = (word: TimedWord, cuts: CutSpan[]) => cuts.some((cut) => cut.start_ms <= mid(word) && mid(word) < cut.end_ms);

describe('caption line planning (3000 generated transcripts)', () => {
  it('every line has at most max_words words; every word outside the cuts is captioned once, in order; none inside a cut', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const next = random(seed);
      const { words, cuts } = transcript(next);
      const maxWords = 2 + Math.floor(next() * 19);
      const lines = planCaptionLines(words, cuts, maxWords);
      for (const line of lines) expect(line.text.split(' ').length, `seed ${seed}`).to.be.within(1, maxWords);
      expect(lines.flatMap((line) => line.text.split(' ')), `seed ${seed}`).to.deep.equal(words.filter((word) => !inCut(word, cuts)).map((word) => word.word));
    }
  });

  it('no line straddles a cut, a sentence end or a pause of 1 s; each line spans its first word’s start to its last word’s end', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const next = random(seed);
      const { words, cuts } = transcript(next);
      const lines = planCaptionLines(words, cuts, 2 + Math.floor(next() * 19));
      const byText = new Map(words.map((word) => [word.word, word]));
      for (const line of lines) {
        const own = line.text.split(' ').map((text) => byText.get(text)!);
        expect(line.start_ms, `seed ${seed}`).to.equal(own[0]!.start_ms);
        expect(line.end_ms, `seed ${seed}`).to.equal(own.at(-1)!.end_ms);
        for (let index = 1; index < own.length; index++) {
          const [before, after] = [own[index - 1]!, own[index]!];
          expect(cuts.some((cut) => cut.start_ms < mid(after) && cut.end_ms > mid(before)), `seed ${seed}: cut inside "${line.text}"`).to.equal(false);
          expect(/[.?!]$/.test(before.word), `seed ${seed}: sentence end inside "${line.text}"`).to.equal(false);
          expect(after.start_ms - before.end_ms, `seed ${seed}: pause inside "${line.text}"`).to.be.below(LINE_BREAKING_PAUSE_MS);
        }
      }
    }
  });

  it('a stretch that must be split takes the fewest lines, broken at punctuation first, then at a pause, then evenly', () => {
    const at = (texts: string[], gaps: number[] = []) => {
      let time = 0;
      return texts.map((word, index) => {
        time += index ? (gaps[index - 1] ?? 50) : 0;
        const timed = { word, start_ms: time, end_ms: time + 200 };
        time += 200;
        return timed;
      });
    };
    const texts = (words: TimedWord[], max: number) => planCaptionLines(words, [], max).map((line) => line.text);
    expect(texts(at(['a', 'b,', 'c', 'd', 'e', 'f']), 4)).to.deep.equal(['a b,', 'c d e f']);
    expect(texts(at(['a', 'b', 'c', 'd', 'e', 'f'], [50, 50, 50, 400, 50]), 4)).to.deep.equal(['a b c d', 'e f']);
    expect(texts(at(['a', 'b', 'c', 'd', 'e', 'f']), 4)).to.deep.equal(['a b c', 'd e f']);
  });
});
