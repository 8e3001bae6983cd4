import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import OpenAI, { BadRequestError } from 'openai';
import type { TranscriptionVerbose, TranscriptionWord } from 'openai/resources/audio/transcriptions';
import { makeCorruptFile, makeEmptyFile } from '../support/media.ts';
import { makeSpokenTrack, makeSpokenVideo, wordErrorRate, type SpokenTrack, type TimedPhrase } from '../support/speech.ts';

/** Whisper's word edges drift by up to about 200 ms from the phrase's (its timing comes from attention, not frames). */
const EDGE_TOLERANCE_MS = 250;
const FIRST = 'so today I want to talk about editing';
const SECOND = 'first we cut the long pauses out of the video';

/** The run's local Whisper server (test/support/global.ts), through the client the analysis program uses. */
function whisperClient(): OpenAI {
  return new OpenAI({ baseURL: process.env.WHISPER_BASE_URL, apiKey: 'local', maxRetries: 0, timeout: 60_000 });
}

async function transcribeWords(path: string, extra: { language?: string } = {}): Promise<TranscriptionVerbose> {
  return whisperClient().audio.transcriptions.create({
    file: createReadStream(path),
    model: 'whisper-1',
    response_format: 'verbose_json',
    timestamp_granularities: ['word'],
    ...extra,
  });
}

function wordsWithin(words: readonly TranscriptionWord[], phrase: TimedPhrase): TranscriptionWord[] {
  return words.filter((word) => word.start * 1000 >= phrase.startMs - EDGE_TOLERANCE_MS && word.end * 1000 <= phrase.endMs + EDGE_TOLERANCE_MS);
}

describe('Whisper server: POST /v1/audio/transcriptions over faster-whisper', function () {
  this.timeout(90_000);
  let dir: string;
  let track: SpokenTrack;
  let transcript: TranscriptionVerbose;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-whisper-'));
    track = await makeSpokenTrack(dir, 'two-phrases.wav', [{ pauseMs: 300 }, { say: FIRST }, { pauseMs: 1200 }, { say: SECOND }, { pauseMs: 300 }]);
    transcript = await transcribeWords(track.path);
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('answers verbose_json as a faster-whisper server does: task, language en, duration, text, segments, words with a leading space', () => {
    expect(transcript).to.include({ task: 'transcribe', language: 'en' });
    expect(transcript.duration).to.be.closeTo(track.durationMs / 1000, 0.01);
    expect(transcript.segments).to.have.length.greaterThan(0);
    expect(transcript.words).to.be.an('array').with.length.greaterThan(0);
    for (const word of transcript.words!) {
      expect(word.word).to.match(/^ \S+$/, 'a leading space, then one word');
      expect(word.end).to.be.greaterThan(word.start);
      expect((word as TranscriptionWord & { probability: unknown }).probability).to.be.within(0, 1);
    }
    expect(transcript.text).to.equal(transcript.words!.map((word) => word.word).join('').trim());
  });

  it('words of a two-phrase track come back in order, inside the known phrase spans, mostly right', () => {
    const words = transcript.words!;
    words.slice(1).forEach((word, index) => expect(word.start).to.be.at.least(words[index]!.end));
    const [first, second] = track.phrases as [TimedPhrase, TimedPhrase];
    const inFirst = wordsWithin(words, first);
    const inSecond = wordsWithin(words, second);
    expect(inFirst.length + inSecond.length, 'every word lies inside a phrase span').to.equal(words.length);
    for (const [phrase, heard] of [[first, inFirst], [second, inSecond]] as const) {
      expect(heard[0]!.start * 1000).to.be.closeTo(phrase.startMs, EDGE_TOLERANCE_MS);
      expect(heard.at(-1)!.end * 1000).to.be.closeTo(phrase.endMs, EDGE_TOLERANCE_MS);
      expect(wordErrorRate(phrase.text, heard.map((word) => word.word)), `heard "${heard.map((word) => word.word).join('')}"`).to.be.at.most(0.25);
    }
  });

  it('a 1200 ms pause between phrases is a gap of at least 1000 ms between consecutive words', () => {
    const [pause] = track.pauses.filter((span) => span.endMs - span.startMs === 1200);
    const words = transcript.words!;
    const next = words.findIndex((word) => word.start * 1000 >= pause!.endMs - EDGE_TOLERANCE_MS);
    expect(next).to.be.greaterThan(0);
    expect((words[next]!.start - words[next - 1]!.end) * 1000).to.be.at.least(1000);
  });

  it('an H.264/AAC MP4 is transcribed from its audio track, on the same times', async () => {
    const video = await makeSpokenVideo(dir, 'two-phrases.mp4', track);
    const fromVideo = await transcribeWords(video.path);
    expect(fromVideo.words!.map((word) => word.word)).to.deep.equal(transcript.words!.map((word) => word.word));
    fromVideo.words!.forEach((word, index) => expect(word.start).to.be.closeTo(transcript.words![index]!.start, 0.05));
  });

  it("a language Whisper does not know ('zz') → 400 invalid_request_error on param language", async () => {
    const error = await transcribeWords(track.path, { language: 'zz' }).then(
      () => expect.fail("a transcription in language 'zz' was accepted"),
      (failure: unknown) => failure,
    );
    expect(error).to.be.instanceOf(BadRequestError);
    expect(error).to.include({ status: 400, type: 'invalid_request_error', param: 'language', code: 'unsupported_language' });
  });

  it("language 'en' and an absent language both transcribe", async () => {
    const english = await transcribeWords(track.path, { language: 'en' });
    expect(english.words!.map((word) => word.word)).to.deep.equal(transcript.words!.map((word) => word.word));
  });

  it('an empty file → 400 naming the file', async () => {
    const error = await transcribeWords(await makeEmptyFile(dir, 'empty.wav')).catch((failure: unknown) => failure);
    expect(error).to.be.instanceOf(BadRequestError);
    expect(error).to.include({ status: 400, param: 'file' });
    expect((error as Error).message).to.match(/empty/);
  });

  it('a file that is no audio → 400 naming the file and what ffmpeg said', async () => {
    const error = await transcribeWords(await makeCorruptFile(dir, 'garbage.wav')).catch((failure: unknown) => failure);
    expect(error).to.be.instanceOf(BadRequestError);
    expect(error).to.include({ status: 400, param: 'file' });
    expect((error as Error).message).to.match(/Invalid file format/).and.not.match(new RegExp(tmpdir()));
  });

  it("the suite's flite phrases come back as their script: word error rate at most 0.15 over a dozen of them", async () => {
    const phrases = [
      'so today I want to talk about editing',
      'first we cut the long pauses out of the video',
      'we keep every request bounded',
      'this recording goes on for quite a while',
      'welcome to the show',
      'thank you for watching',
      'we start with the camera',
      'then we set up the lights',
      'and finally the sound',
      'here comes the second clip',
      'this is the first clip',
      'today we look at three cameras',
    ];
    const script = await makeSpokenTrack(dir, 'dozen.wav', phrases.flatMap((say) => [{ say }, { pauseMs: 700 }]));
    const heard = (await transcribeWords(script.path, { language: 'en' })).words!.map((word) => word.word);
    expect(wordErrorRate(phrases.join(' '), heard), `heard "${heard.join('')}"`).to.be.at.most(0.15);
  });

  it("response_format json → only the text", async () => {
    const json = await whisperClient().audio.transcriptions.create({ file: createReadStream(track.path), model: 'whisper-1', response_format: 'json' });
    expect(json).to.deep.equal({ text: transcript.text });
  });
});
