import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { analyzeResultSchema, aiEditsSchema, transcriptSchema, type AnalyzeInput } from '../../crds/contract/programs/analyze.ts';
import { withPinkNoise } from '../support/noise.ts';
import { makeSpokenTrack, wordErrorRate, type SpokenTrack } from '../support/speech.ts';
import { runJobProcess, startJobBucket, WHISPER_IMAGE_MAIN, type JobBucket, type JobProcessOutcome } from './job-process.ts';

/**
 * The whisper image's `analyze` program run as its real entrypoint: against the run's offline
 * recognizer (the OpenAI-compatible server the harness starts), and against a stand-in server
 * that answers the ways a Whisper server fails.
 */
describe('analyze program (node job-images/whisper/src/main.ts)', function () {
  this.timeout(120_000);
  let bucket: JobBucket;
  let dir: string;
  let track: SpokenTrack;
  let stand: { server: Server; url: string; answer: (request: number) => { status: number; body: unknown; afterMs?: number } };
  let requests = 0;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-analyze-program-'));
    bucket = await startJobBucket();
    track = await makeSpokenTrack(dir, 'program.wav', [{ say: 'welcome to the show' }, { pauseMs: 2000 }, { say: 'thank you for watching' }]);
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const { status, body, afterMs = 0 } = stand.answer(++requests);
        setTimeout(() => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)), afterMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stand = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, answer: () => ({ status: 500, body: {} }) };
  });
  after(async () => {
    await new Promise((resolve) => stand.server.close(resolve));
    await bucket.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function analyze(whisperUrl: string, settings: Partial<AnalyzeInput['settings']> = {}, audio = track.path, env: Record<string, string> = {}, durationMs = track.durationMs): Promise<JobProcessOutcome & { prefix: string }> {
    const jobId = randomUUID();
    const audioKey = `media/${jobId}/audio.wav`;
    await bucket.putFile(audioKey, audio, 'audio/wav');
    const prefix = `jobs/analyze/${jobId}`;
    const input: AnalyzeInput = {
      settings: { pacing_level: 50, false_start_sensitivity: 50, language: 'en', analysis_mode: 'ai_edit', ...settings },
      sources: [{ media_file_id: randomUUID(), media_item_id: randomUUID(), audio_key: audioKey, duration_ms: Math.round(durationMs), timeline_offset_ms: 0, source_start_ms: 0 }],
    };
    const outcome = await runJobProcess(
      { jobId, program: 'analyze', userId: randomUUID(), projectId: randomUUID(), input, outputPrefix: prefix, timeoutSeconds: 60 },
      { ...bucket.env, WHISPER_BASE_URL: whisperUrl, ...env },
      WHISPER_IMAGE_MAIN,
    );
    return { ...outcome, prefix };
  }

  function failureOf(outcome: JobProcessOutcome): { code?: string; message: string } {
    expect(outcome.exitCode, outcome.stderr).to.equal(1);
    const error = outcome.error;
    expect(error, 'error.json').to.not.equal(null);
    return error ? { message: error.message, ...(error.code ? { code: error.code } : {}) } : { message: '' };
  }

  it('exits 0 with a small result naming transcript.json and edits.json, which parse with the contract the api reads; progress at every step', async () => {
    const run = await analyze(process.env.WHISPER_BASE_URL!);
    expect(run.exitCode, run.stderr).to.equal(0);
    const result = analyzeResultSchema.parse(run.result);
    expect(result).to.include({ transcript_key: `${run.prefix}/transcript.json`, edits_key: `${run.prefix}/edits.json`, language: 'en' });
    const transcript = transcriptSchema.parse(await bucket.getJson(result.transcript_key));
    const edits = aiEditsSchema.parse(await bucket.getJson(result.edits_key));
    expect(transcript.words.length).to.equal(result.word_count).and.to.be.greaterThan(4);
    expect(edits.filter((edit) => edit.type === 'silence')).to.have.length.at.least(1);
    const steps = run.progress.map((event) => event.step);
    expect([...new Set(steps)]).to.include.members(['preparing', 'detecting_speech', 'transcribing', 'finding_cuts', 'saving']);
  });

  it('a long recording goes in pieces cut at pauses (WHISPER_PIECE_SECONDS): progress moves after each, and the words come back whole, in order, on the file\'s time', async () => {
    const sentences = [
      'we start with the camera and the lens',
      'then we set up the lights around the desk',
      'the microphone goes just out of the frame',
      'now we record a short test and listen back',
      'if the levels look good we start the take',
      'every pause we leave can be cut out later',
      'so do not worry about the little mistakes',
      'thank you for watching and see you next week',
    ];
    const long = await makeSpokenTrack(dir, 'long.wav', sentences.flatMap((say) => [{ say }, { pauseMs: 900 }]));
    const run = await analyze(process.env.WHISPER_BASE_URL!, {}, long.path, { WHISPER_PIECE_SECONDS: '10' }, long.durationMs);
    expect(run.exitCode, run.stderr).to.equal(0);
    const received = run.stderr
      .split('\n')
      .filter((line) => line.includes('transcription received'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)[0];
    expect(received?.pieces, 'pieces sent').to.be.at.least(3);
    const transcribing = run.progress.filter((event) => event.step === 'transcribing').map((event) => event.progress);
    expect(new Set(transcribing).size, `transcribing reports ${transcribing.join(', ')}`).to.be.at.least(Number(received?.pieces));
    transcribing.slice(1).forEach((value, index) => expect(value).to.be.at.least(transcribing[index]!));
    const result = analyzeResultSchema.parse(run.result);
    const words = transcriptSchema.parse(await bucket.getJson(result.transcript_key)).words;
    words.slice(1).forEach((word, index) => expect(word.start_ms, 'in order, none twice').to.be.at.least(words[index]!.end_ms - 50));
    for (const phrase of long.phrases) {
      const heard = words.filter((word) => word.start_ms >= phrase.startMs - 300 && word.end_ms <= phrase.endMs + 300).map((word) => word.word);
      expect(wordErrorRate(phrase.text, heard), `"${phrase.text}" heard as "${heard.join(' ')}"`).to.be.at.most(0.3);
    }
  });

  it('speech is found relative to the recording: over a fan-like pink noise floor at −36 dBFS RMS the long pause is still cut, inside it, and every AI edit says why and how sure (confidence 0–1)', async () => {
    const noisy = await withPinkNoise(track.path, join(dir, 'fan.wav'), -36);
    const run = await analyze(process.env.WHISPER_BASE_URL!, {}, noisy);
    expect(run.exitCode, run.stderr).to.equal(0);
    const result = analyzeResultSchema.parse(run.result);
    expect(result.weak_evidence).to.deep.equal([]);
    const edits = aiEditsSchema.parse(await bucket.getJson(result.edits_key));
    const pause = track.pauses[0]!;
    const inside = edits.filter((edit) => edit.type === 'silence' && edit.active && edit.start_ms >= pause.startMs && edit.end_ms <= pause.endMs);
    expect(inside, JSON.stringify(edits)).to.have.length(1);
    expect(inside[0]!.end_ms - inside[0]!.start_ms).to.be.at.least(1000);
    for (const edit of edits) {
      expect(edit.reason).to.match(/^Pause of \d+\.\d s(, shortened to \d\.\d\d s)?$|^False start|^Filler/);
      expect(edit.confidence).to.be.within(0, 1);
    }
  });

  it('where the evidence is weak, it says so instead of guessing: under a noise floor above −30 dBFS the pauses are offered inactive, with why, and the result records the source and the reason', async () => {
    const noisy = await withPinkNoise(track.path, join(dir, 'loud-floor.wav'), -24);
    const run = await analyze(process.env.WHISPER_BASE_URL!, {}, noisy);
    expect(run.exitCode, run.stderr).to.equal(0);
    const result = analyzeResultSchema.parse(run.result);
    expect(result.weak_evidence).to.have.length(1);
    expect(result.weak_evidence[0]!.source_index).to.equal(0);
    expect(result.weak_evidence[0]!.reason).to.match(/noise floor|over the noise floor/);
    const pauses = aiEditsSchema.parse(await bucket.getJson(result.edits_key)).filter((edit) => edit.type === 'silence');
    expect(pauses, 'the pauses are offered').to.have.length.at.least(1);
    for (const edit of pauses) {
      expect(edit.active).to.equal(false);
      expect(edit.reason).to.contain('offered, not cut');
      expect(edit.confidence).to.be.at.most(0.3);
    }
  });

  it('a split clip: two stretches of one audio file are analysed as two sources on the timeline, its words each in the stretch that holds them', async () => {
    const jobId = randomUUID();
    const audioKey = `media/${jobId}/audio.wav`;
    await bucket.putFile(audioKey, track.path, 'audio/wav');
    const mid = Math.round((track.pauses[0]!.startMs + track.pauses[0]!.endMs) / 2);
    const total = Math.round(track.durationMs);
    const clip = { media_file_id: randomUUID(), media_item_id: randomUUID(), audio_key: audioKey };
    const input: AnalyzeInput = {
      settings: { pacing_level: 50, false_start_sensitivity: 50, language: 'en', analysis_mode: 'ai_edit' },
      sources: [
        { ...clip, duration_ms: mid, timeline_offset_ms: 0, source_start_ms: 0 },
        { ...clip, duration_ms: total - mid, timeline_offset_ms: mid, source_start_ms: mid },
      ],
    };
    const prefix = `jobs/analyze/${jobId}`;
    const run = await runJobProcess({ jobId, program: 'analyze', userId: randomUUID(), projectId: randomUUID(), input, outputPrefix: prefix, timeoutSeconds: 60 }, { ...bucket.env, WHISPER_BASE_URL: process.env.WHISPER_BASE_URL! }, WHISPER_IMAGE_MAIN);
    expect(run.exitCode, run.stderr).to.equal(0);
    const transcript = transcriptSchema.parse(await bucket.getJson(`${prefix}/transcript.json`));
    const [first, second] = [0, 1].map((index) => transcript.words.filter((word) => word.source_index === index));
    expect(first!.length).to.be.greaterThan(1);
    expect(second!.length).to.be.greaterThan(1);
    expect(first!.every((word) => word.end_ms <= mid)).to.equal(true);
    expect(second!.every((word) => word.start_ms >= mid && word.end_ms <= total)).to.equal(true);
  });

  it('attack: a file whose audio runs past what is charged — only the charged stretch is sent for transcription, and its words land in the file\'s time', async () => {
    let received = 0;
    const recorder = createServer((request, response) => {
      let bytes = 0;
      request.on('data', (chunk: Buffer) => (bytes += chunk.length));
      request.on('end', () => {
        received = bytes;
        // one word 0.5 s into what it was sent
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ language: 'en', text: 'hello', words: [{ word: 'hello', start: 0.5, end: 0.9 }] }));
      });
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    try {
      const jobId = randomUUID();
      const audioKey = `media/${jobId}/audio.wav`;
      await bucket.putFile(audioKey, track.path, 'audio/wav');
      const fileBytes = (await stat(track.path)).size;
      // charged: 1.5 s from 1 s into a track of several seconds
      const input: AnalyzeInput = {
        settings: { pacing_level: 50, false_start_sensitivity: 50, language: 'en', analysis_mode: 'captions_only' },
        sources: [{ media_file_id: randomUUID(), media_item_id: randomUUID(), audio_key: audioKey, duration_ms: 1500, timeline_offset_ms: 0, source_start_ms: 1000 }],
      };
      const prefix = `jobs/analyze/${jobId}`;
      const url = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/v1`;
      const run = await runJobProcess({ jobId, program: 'analyze', userId: randomUUID(), projectId: randomUUID(), input, outputPrefix: prefix, timeoutSeconds: 60 }, { ...bucket.env, WHISPER_BASE_URL: url }, WHISPER_IMAGE_MAIN);
      expect(run.exitCode, run.error?.message ?? run.stderr).to.equal(0);
      const chargedBytes = Math.round((fileBytes * 1500) / track.durationMs);
      expect(received, 'the upload holds the charged 1.5 s, not the whole file').to.be.below(chargedBytes + 4096).and.above(chargedBytes - 4096);
      const transcript = transcriptSchema.parse(await bucket.getJson(`${prefix}/transcript.json`));
      // 0.5 s into the stretch sent, which starts 1 s into the file: 500 ms into the source's stretch
      expect(transcript.words.map((word) => [word.word, word.start_ms, word.end_ms])).to.deep.equal([['hello', 500, 900]]);
    } finally {
      await new Promise((resolve) => recorder.close(resolve));
    }
  });

  it('captions_only: the transcript, and no cut', async () => {
    const run = await analyze(process.env.WHISPER_BASE_URL!, { analysis_mode: 'captions_only' });
    expect(run.exitCode, run.stderr).to.equal(0);
    const result = analyzeResultSchema.parse(run.result);
    expect(await bucket.getJson(result.edits_key)).to.deep.equal([]);
    expect(result.word_count).to.be.greaterThan(4);
  });

  it('audio that is no 16-bit PCM WAV → analysis.corrupt_audio, before anything is sent for transcription', async () => {
    const corrupt = join(dir, 'corrupt.wav');
    await writeFile(corrupt, randomBytes(4096));
    requests = 0;
    expect(failureOf(await analyze(stand.url, {}, corrupt)).code).to.equal('analysis.corrupt_audio');
    expect(requests).to.equal(0);
  });

  it('a transcription server that cannot be reached → analysis.transcriber_unavailable', async () => {
    expect(failureOf(await analyze('http://127.0.0.1:9/v1')).code).to.equal('analysis.transcriber_unavailable');
  });

  it('a server that answers 500 → analysis.transcriber_failed, asked once (never silently re-run)', async () => {
    requests = 0;
    stand.answer = () => ({ status: 500, body: { error: { message: 'out of memory' } } });
    expect(failureOf(await analyze(stand.url)).code).to.equal('analysis.transcriber_failed');
    expect(requests).to.equal(1);
  });

  it('an empty `words` array, or `words: null` as some servers answer, is a failure (analysis.no_words), not an empty transcript', async () => {
    for (const words of [[], null]) {
      stand.answer = () => ({ status: 200, body: { task: 'transcribe', language: 'en', duration: 5, text: '', segments: [], words } });
      expect(failureOf(await analyze(stand.url)).code).to.equal('analysis.no_words');
    }
  });

  it("logs the recognizer's own time apart from the program's (`transcription received`): a server that holds its answer 600 ms", async () => {
    stand.answer = () => ({ status: 200, body: { task: 'transcribe', language: 'en', duration: 5, text: 'welcome', words: [{ word: ' welcome', start: 0.1, end: 0.6 }] }, afterMs: 600 });
    const run = await analyze(stand.url);
    expect(run.exitCode, run.stderr).to.equal(0);
    const logged = run.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; transcription_ms?: number; audio_ms?: number; source_index?: number })
      .filter((entry) => entry.msg === 'transcription received');
    expect(logged).to.have.length(1);
    expect(logged[0]).to.include({ source_index: 0, audio_ms: Math.round(track.durationMs) });
    expect(logged[0]!.transcription_ms).to.be.at.least(600).and.below(run.wallSeconds * 1000);
  });

  it('a busy server (429) is asked again: the audio was never transcribed', async () => {
    requests = 0;
    stand.answer = (request) =>
      request === 1
        ? { status: 429, body: { error: { message: 'busy', type: 'rate_limit_exceeded' } } }
        : { status: 200, body: { task: 'transcribe', language: 'en', duration: 5, text: 'welcome', words: [{ word: ' welcome', start: 0.1, end: 0.6 }] } };
    const run = await analyze(stand.url);
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(requests).to.equal(2);
  });
});
