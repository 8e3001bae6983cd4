import { expect } from 'chai';
import { JobFailure } from '../../../job-images/lib/job-failure.ts';
import { matchForm, normalizeWords, type RecognizedWord } from '../../../job-images/whisper/src/analysis/words.ts';

function failureOf(words: unknown): JobFailure {
  try {
    normalizeWords(words as RecognizedWord[]);
  } catch (error) {
    expect(error).to.be.instanceOf(JobFailure);
    return error as JobFailure;
  }
  throw new Error('normalizeWords did not fail');
}

describe('recognized words (words.ts)', () => {
  it('a server word " Today," becomes text "Today," (what captions show) and match "today" (what detectors compare), in whole ms', () => {
    const [word] = normalizeWords([{ word: ' Today,', start: 1.2344, end: 1.6006, probability: 0.91 }]);
    expect(word).to.deep.equal({ text: 'Today,', match: 'today', start_ms: 1234, end_ms: 1601, probability: 0.91, punctuated: true, ends_sentence: false });
  });

  it('spaces and punctuation are trimmed from both ends only: "Don’t," → "don\'t", "«¿Qué?»" → "qué", "—so" → "so"', () => {
    expect(['  Don’t,', '«¿Qué?»', '—so', '"Cutroom."', 'e-mail'].map(matchForm)).to.deep.equal(["don't", 'qué', 'so', 'cutroom', 'e-mail']);
  });

  it('vowel signs and other combining marks belong to the word: "नमस्ते।" → "नमस्ते"', () => {
    expect(matchForm('नमस्ते।')).to.equal('नमस्ते');
    expect(matchForm(' कि')).to.equal('कि');
  });

  it('an entry that is only punctuation is no word: it marks the word before as punctuated (a full stop: a sentence end)', () => {
    const words = normalizeWords([
      { word: ' so', start: 0, end: 0.2 },
      { word: ' today', start: 0.2, end: 0.5 },
      { word: '.', start: 0.5, end: 0.5 },
      { word: ' okay', start: 0.9, end: 1.1 },
      { word: '...', start: 1.1, end: 1.1 },
    ]);
    expect(words.map(({ text, punctuated, ends_sentence: endsSentence }) => [text, punctuated, endsSentence])).to.deep.equal([
      ['so', false, false],
      ['today', true, true],
      ['okay', true, false],
    ]);
  });

  it('a full stop, question or exclamation mark ends a sentence; an ellipsis or a dash trails off', () => {
    const ends = normalizeWords(['done.', 'done?', 'done!', 'done…', 'done...', 'done-', 'done,'].map((word, index) => ({ word, start: index, end: index + 0.5 })));
    expect(ends.map((word) => word.ends_sentence)).to.deep.equal([true, true, true, false, false, false, false]);
  });

  it('a sloppy recognizer: words sorted by start, negative times clamped to 0, an end before the start raised to it, probabilities clamped, entries without finite times or text dropped', () => {
    const words = normalizeWords([
      { word: ' b', start: 2, end: 1.5, probability: 1.7 },
      { word: ' a', start: -0.05, end: 0.3, probability: -1 },
      { word: ' lost', start: Number.NaN, end: 1 },
      { word: undefined as unknown as string, start: 3, end: 4 },
      { word: ' c', start: 2.5, end: Infinity },
    ]);
    expect(words.map(({ text, start_ms, end_ms, probability }) => [text, start_ms, end_ms, probability])).to.deep.equal([
      ['a', 0, 300, 0],
      ['b', 2000, 2000, 1],
    ]);
  });

  it('overlapping words are kept as heard (the cut finders bound cuts by the latest end so far)', () => {
    const words = normalizeWords([
      { word: ' long', start: 0, end: 2 },
      { word: ' inside', start: 0.5, end: 1 },
    ]);
    expect(words.map((word) => [word.start_ms, word.end_ms])).to.deep.equal([
      [0, 2000],
      [500, 1000],
    ]);
  });

  for (const [what, words] of [
    ['an empty words array', []],
    ['null words (some servers answer so)', null],
    ['no words field', undefined],
    ['words that are only punctuation', [{ word: '.', start: 0, end: 0.1 }, { word: ' ,', start: 0.2, end: 0.3 }]],
    ['words without finite times', [{ word: ' hi', start: Number.NaN, end: 1 }]],
  ] as const) {
    it(`${what} is a failure with the stable code analysis.no_words, not an empty transcript`, () => {
      const failure = failureOf(words);
      expect(failure.code).to.equal('analysis.no_words');
      expect(failure.message).to.equal('No speech could be recognized in the audio.');
    });
  }
});
