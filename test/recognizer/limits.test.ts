import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import OpenAI, { APIError, RateLimitError } from 'openai';
import { startLocalWhisper, type LocalWhisper, type LocalWhisperOptions } from '../../recognizer/server/server.ts';
import { makeAudio } from '../support/media.ts';
import { makeSpokenTrack, type SpokenTrack } from '../support/speech.ts';
import { eventually } from '../support/wait.ts';

/** Servers of their own, with limits small enough to reach. */
describe('local Whisper server: bounded uploads, recognizers and time', function () {
  this.timeout(180_000);
  let dir: string;
  let track: SpokenTrack;
  const servers: LocalWhisper[] = [];

  async function serverWith(options: LocalWhisperOptions): Promise<OpenAI> {
    const server = await startLocalWhisper(options);
    servers.push(server);
    // Patient: requests queued behind others on a busy machine are answered late, not lost (what these tests assert).
    return new OpenAI({ baseURL: server.url, apiKey: 'local', maxRetries: 0, timeout: 150_000 });
  }

  function transcribe(client: OpenAI): Promise<unknown> {
    return client.audio.transcriptions.create({ file: createReadStream(track.path), model: 'whisper-1', response_format: 'verbose_json', timestamp_granularities: ['word'] });
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-whisper-limits-'));
    track = await makeSpokenTrack(dir, 'phrase.wav', [{ say: 'we keep every request bounded' }]);
  });

  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await rm(dir, { recursive: true, force: true });
  });

  it('a file over the upload limit → 413 naming the file, answered while the client is still sending', async () => {
    const client = await serverWith({ maxUploadBytes: 16 * 1024 });
    const long = await makeAudio(dir, 'long.wav', { seconds: 60 });
    const error = await client.audio.transcriptions.create({ file: createReadStream(long), model: 'whisper-1' }).catch((failure: unknown) => failure);
    expect(error).to.be.instanceOf(APIError);
    expect(error).to.include({ status: 413, param: 'file' });
  });

  it('an upload declaring a Content-Length over the limit → 413 before its file is parsed', async () => {
    const server = await startLocalWhisper({ maxUploadBytes: 16 * 1024 });
    servers.push(server);
    const form = new FormData();
    form.set('model', 'whisper-1');
    form.set('file', new Blob([new Uint8Array(512 * 1024)]), 'big.wav');
    const response = await fetch(`${server.url}/audio/transcriptions`, { method: 'POST', body: form });
    expect(response.status).to.equal(413);
    expect(await response.json()).to.have.nested.property('error.param', 'file');
  });

  it('more requests than recognizers and queue places → 429 rate_limit_exceeded for the extra one', async () => {
    const client = await serverWith({ concurrency: 1, queueLength: 0 });
    const outcomes = await Promise.allSettled([transcribe(client), transcribe(client)]);
    const refused = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).to.have.length(1);
    expect(refused).to.have.length(1);
    expect(refused[0]).to.be.instanceOf(RateLimitError);
    expect(refused[0]).to.include({ status: 429, code: 'rate_limit_exceeded' });
  });

  it('requests beyond the recognizers wait in the queue and are all answered', async () => {
    const client = await serverWith({ concurrency: 1, queueLength: 2 });
    const outcomes = await Promise.allSettled([transcribe(client), transcribe(client), transcribe(client)]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['fulfilled', 'fulfilled', 'fulfilled']);
  });

  it('a client that goes away frees its recognizer for the next request at once', async () => {
    const client = await serverWith({ concurrency: 1, queueLength: 0 });
    const sentences = Array.from({ length: 8 }, () => [{ say: 'this recording goes on for quite a while' }, { pauseMs: 500 }]).flat();
    const long = await makeSpokenTrack(dir, 'long-talk.wav', sentences);
    const leaving = new AbortController();
    const abandoned = client.audio.transcriptions.create({ file: createReadStream(long.path), model: 'whisper-1' }, { signal: leaving.signal }).catch(() => 'abandoned');
    // Uploaded and decoded well within a second; then it holds the only recognizer for seconds.
    await delay(1_000);
    expect(await transcribe(client).catch((error: unknown) => error)).to.be.instanceOf(RateLimitError);
    leaving.abort();
    expect(await abandoned).to.equal('abandoned');
    // The long track takes the recognizer for seconds; killed, it leaves the slot free well before.
    const next = await eventually(async () => transcribe(client).catch((error: unknown) => (error instanceof RateLimitError ? undefined : Promise.reject(error))), 'a free recognizer', 2_000, 50);
    expect(next).to.have.property('text');
  });

  it('a server started warm answers GET /health 503 while its model loads, 200 once it has, and 503 with the reason when it cannot', async () => {
    const warm = await startLocalWhisper({ warm: true });
    servers.push(warm);
    const health = (server: LocalWhisper) => fetch(server.url.replace(/\/v1$/, '/health')).then(async (response) => ({ status: response.status, text: await response.text() }));
    expect((await health(warm)).status).to.equal(503);
    await eventually(async () => ((await health(warm)).status === 200 ? true : undefined), 'the model loaded', 60_000, 200);
    const broken = await startLocalWhisper({ warm: true, weights: 'no-such-weights' });
    servers.push(broken);
    const answer = await eventually(async () => {
      const seen = await health(broken);
      return seen.text.includes('cannot start') ? seen : undefined;
    }, 'the failed start reported', 60_000, 200);
    expect(answer.status).to.equal(503);
    expect(answer.text).to.match(/no-such-weights/);
  });

  it('a recognizer run over its time limit is killed → 504', async () => {
    const client = await serverWith({ recognizerTimeoutMs: 1 });
    const error = await transcribe(client).catch((failure: unknown) => failure);
    expect(error).to.be.instanceOf(APIError);
    expect(error).to.include({ status: 504, type: 'server_error' });
  });
});
