import { expect } from 'chai';
import { parseRecognizerOutput } from '../../hack/local-whisper/recognizer.ts';
import { verboseTranscription } from '../../hack/local-whisper/transcription-response.ts';

/** `pocketsphinx_continuous -time yes` output as pocketsphinx 5prealpha (Debian 12) prints it. */
const OUTPUT = `so today i want to talk
<s> 0.000 0.480 1.000000
so 0.490 0.740 0.969278
today 0.750 1.200 0.956375
[NOISE] 1.210 1.300 0.990000
i 1.310 1.390 0.951319
want(2) 1.400 1.840 0.611918
to(3) 1.850 1.950 0.809592
<sil> 1.960 2.100 0.997204
talk 2.110 2.270 0.996904
</s> 2.280 2.610 1.000000
first
<s> 4.290 4.370 0.999900
first 4.380 4.730 0.999900
</s> 4.740 4.900 1.000000
`;

describe('local Whisper server: reading pocketsphinx output', () => {
  it('one utterance per <s>…</s>, pronunciation suffixes and <s> </s> <sil> [NOISE] tokens dropped, words with a leading space', () => {
    const utterances = parseRecognizerOutput(OUTPUT);
    expect(utterances.map((words) => words.map((word) => word.word))).to.deep.equal([
      [' so', ' today', ' i', ' want', ' to', ' talk'],
      [' first'],
    ]);
  });

  it("a word ends one 10 ms frame after pocketsphinx's last frame; its posterior is the probability", () => {
    expect(parseRecognizerOutput(OUTPUT)[0]?.[0]).to.deep.equal({ word: ' so', start: 0.49, end: 0.75, probability: 0.969278 });
  });

  it('a posterior printed over 1 is 1; a line without one gives probability null; blank output gives no words', () => {
    expect(parseRecognizerOutput('so\nso 0.100 0.200 1.000100\n')[0]?.[0]?.probability).to.equal(1);
    expect(parseRecognizerOutput('hello\n<s> 0.000 0.100\nhello 0.110 0.500\n</s> 0.510 0.600\n')).to.deep.equal([[{ word: ' hello', start: 0.11, end: 0.51, probability: null }]]);
    expect(parseRecognizerOutput('')).to.deep.equal([]);
  });

  it('verbose_json: a segment per utterance, text joined and trimmed, words only when asked for', () => {
    const recognition = { durationSeconds: 5.0004, utterances: parseRecognizerOutput(OUTPUT) };
    const body = verboseTranscription(recognition, { words: true });
    expect(body).to.include({ task: 'transcribe', language: 'en', duration: 5, text: 'so today i want to talk first' });
    expect(body.segments.map(({ id, start, end, text }) => ({ id, start, end, text }))).to.deep.equal([
      { id: 0, start: 0.49, end: 2.28, text: ' so today i want to talk' },
      { id: 1, start: 4.38, end: 4.74, text: ' first' },
    ]);
    expect(body.words).to.have.length(7);
    expect(verboseTranscription(recognition, { words: false })).to.not.have.property('words');
  });
});
