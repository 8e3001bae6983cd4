import { expect } from 'chai';
import type { Recognition, RecognizedSegment } from '../../recognizer/server/recognizer.ts';
import { transcriptText, verboseTranscription } from '../../recognizer/server/transcription-response.ts';

function segment(start: number, end: number, text: string, words: [string, number, number][]): RecognizedSegment {
  return {
    start,
    end,
    text,
    tokens: [50364, 2425, 50464],
    temperature: 0,
    avg_logprob: -0.2,
    compression_ratio: 1.3,
    no_speech_prob: 0.02,
    words: words.map(([word, wordStart, wordEnd]) => ({ word, start: wordStart, end: wordEnd, probability: 0.9 })),
  };
}

const RECOGNITION: Recognition = {
  durationSeconds: 5.0004,
  language: 'es',
  segments: [
    segment(0.49, 2.28, ' Hoy quiero hablar.', [[' Hoy', 0.49, 0.74], [' quiero', 0.75, 1.2], [' hablar.', 1.31, 2.28]]),
    segment(4.38, 4.74, ' Primero.', [[' Primero.', 4.38, 4.74]]),
  ],
};

describe('Whisper server: the verbose_json body', () => {
  it("a segment per recognizer segment, numbered, with Whisper's seek in 10 ms frames and no words inside", () => {
    const body = verboseTranscription(RECOGNITION, { words: true });
    expect(body).to.include({ task: 'transcribe', language: 'es', duration: 5, text: 'Hoy quiero hablar. Primero.' });
    expect(body.segments.map(({ id, seek, start, end, text }) => ({ id, seek, start, end, text }))).to.deep.equal([
      { id: 0, seek: 49, start: 0.49, end: 2.28, text: ' Hoy quiero hablar.' },
      { id: 1, seek: 438, start: 4.38, end: 4.74, text: ' Primero.' },
    ]);
    for (const one of body.segments) expect(one).to.not.have.property('words');
  });

  it('words in one flat list across segments, only when asked for', () => {
    expect(verboseTranscription(RECOGNITION, { words: true }).words?.map((word) => word.word)).to.deep.equal([' Hoy', ' quiero', ' hablar.', ' Primero.']);
    expect(verboseTranscription(RECOGNITION, { words: false })).to.not.have.property('words');
  });

  it('no segments → empty text and no words', () => {
    const silent: Recognition = { durationSeconds: 60, language: 'en', segments: [] };
    expect(transcriptText(silent)).to.equal('');
    expect(verboseTranscription(silent, { words: true })).to.include({ text: '' }).and.have.property('words').that.deep.equals([]);
  });
});
