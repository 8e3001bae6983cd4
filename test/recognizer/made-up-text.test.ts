import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { TranscriptionVerbose } from 'openai/resources/audio/transcriptions';
import { startLocalWhisper, type LocalWhisper } from '../../recognizer/server/server.ts';

const run = promisify(execFile);
const SECONDS = 60;

/** sox's measure of a file's RMS level, dBFS. */
async function rmsDb(path: string): Promise<number> {
  const { stderr } = await run('sox', [path, '-n', 'stats']);
  const level = /RMS lev dB\s+(-?[\d.]+)/.exec(stderr)?.[1];
  if (level === undefined) throw new Error(`sox stats printed no RMS level for ${path}`);
  return Number(level);
}

/** `raw` brought to `targetDb` RMS as 16 kHz mono WAV. */
async function atLevel(raw: string, out: string, targetDb: number): Promise<string> {
  await run('sox', [raw, '-r', '16000', '-c', '1', '-b', '16', out, 'gain', String(targetDb - (await rmsDb(raw)))]);
  return out;
}

/** A minute of pink room tone at −45 dBFS. */
async function roomTone(dir: string): Promise<string> {
  const raw = join(dir, 'tone-raw.wav');
  await run('sox', ['-n', '-r', '16000', '-c', '1', '-b', '16', raw, 'synth', String(SECONDS), 'pinknoise', 'gain', '-10']);
  return atLevel(raw, join(dir, 'room-tone.wav'), -45);
}

/** A minute of a music bed at −20 dBFS: a plucked melody over a bass line, two bars repeated. */
async function musicBed(dir: string): Promise<string> {
  const notes = ['C4:C2', 'E4:C2', 'G4:A1', 'A4:A1', 'F4:F1', 'D4:F1', 'G3:G1', 'B3:G1'];
  const files = await Promise.all(
    notes.map(async (pair, index) => {
      const [melody, bass] = pair.split(':') as [string, string];
      const file = join(dir, `note-${index}.wav`);
      await run('sox', ['-n', '-r', '16000', '-c', '1', '-b', '16', file, 'synth', '0.5', 'pluck', melody, 'synth', '0.5', 'sine', 'mix', bass, 'fade', '0.01', '0.5', '0.1']);
      return file;
    }),
  );
  const bar = join(dir, 'bars.wav');
  await run('sox', [...files, bar]);
  const raw = join(dir, 'music-raw.wav');
  await run('sox', [bar, raw, 'repeat', String(SECONDS / 4 - 1)]);
  return atLevel(raw, join(dir, 'music-bed.wav'), -20);
}

function transcribe(url: string, path: string): Promise<TranscriptionVerbose> {
  const client = new OpenAI({ baseURL: url, apiKey: 'local', maxRetries: 0, timeout: 120_000 });
  return client.audio.transcriptions.create({ file: createReadStream(path), model: 'whisper-1', response_format: 'verbose_json', timestamp_granularities: ['word'] });
}

describe('Whisper server: no text made up over room tone or music', function () {
  this.timeout(240_000);
  let dir: string;
  let tone: string;
  let music: string;
  let unguarded: LocalWhisper;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-made-up-text-'));
    [tone, music] = await Promise.all([roomTone(dir), musicBed(dir)]);
    unguarded = await startLocalWhisper({ concurrency: 1, guards: false });
  });

  after(async () => {
    await unguarded?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the inputs are what they claim: a minute each, the tone at −45 dBFS and the music at −20 dBFS', async () => {
    expect(await rmsDb(tone)).to.be.closeTo(-45, 0.5);
    expect(await rmsDb(music)).to.be.closeTo(-20, 0.5);
  });

  it('Whisper without the guards makes text up over them (what the guards are for)', async () => {
    const heard = await Promise.all([tone, music].map(async (path) => (await transcribe(unguarded.url, path)).words ?? []));
    expect(heard.flat().length, 'made-up words over tone and music together').to.be.greaterThan(0);
  });

  it('with the guards, a minute of room tone at −45 dBFS gives no words and no text', async () => {
    const answer = await transcribe(process.env.WHISPER_BASE_URL!, tone);
    expect(answer.words).to.deep.equal([]);
    expect(answer.text).to.equal('');
    expect(answer.duration).to.be.closeTo(SECONDS, 0.1);
  });

  it('with the guards, a minute of a music bed gives no words and no text', async () => {
    const answer = await transcribe(process.env.WHISPER_BASE_URL!, music);
    expect(answer.words).to.deep.equal([]);
    expect(answer.text).to.equal('');
  });
});
