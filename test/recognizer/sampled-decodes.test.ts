import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { WhisperWorker, type WorkerResult } from '../../recognizer/server/whisper-worker.ts';
import { makeSpokenTrack } from '../support/speech.ts';

const run = promisify(execFile);

/** Hot enough that every window's words are drawn at random, not chosen. */
const SAMPLING_TEMPERATURE = 1.4;

describe('Whisper worker: a sampled decode repeats on the same worker (issue 38 item 6)', function () {
  this.timeout(180_000);
  let dir: string;
  let audio: string;
  let worker: WhisperWorker;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-sampled-'));
    const track = await makeSpokenTrack(dir, 'talk.wav', [
      { say: 'hello there, this is a test of the sampled decoding' },
      { pauseMs: 700 },
      { say: 'which should come back the same each time it is asked' },
    ]);
    audio = join(dir, 'talk.raw');
    await run('sox', [track.path, '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', '-t', 'raw', audio]);
    // without the guards, so no sampled window is dropped and the words compared are all there
    worker = await WhisperWorker.start({ weights: 'tiny.en', threads: 1, guards: false, samplingTemperature: SAMPLING_TEMPERATURE });
  });

  after(async () => {
    await worker?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the same audio asked three times of one worker whose every window is sampled: the same words, byte for byte', async () => {
    const results: WorkerResult[] = [];
    for (let time = 0; time < 3; time += 1) results.push(await worker.transcribe({ audio, language: 'en', prompt: null }, { timeoutMs: 120_000 }));
    const temperatures = results.flatMap((result) => result.segments.map((segment) => segment.temperature));
    expect(temperatures, 'windows heard').to.not.be.empty;
    expect(temperatures, 'every window decoded by sampling').to.satisfy((all: number[]) => all.every((t) => t === SAMPLING_TEMPERATURE));
    expect(JSON.stringify(results[1]), 'second request').to.equal(JSON.stringify(results[0]));
    expect(JSON.stringify(results[2]), 'third request').to.equal(JSON.stringify(results[0]));
  });
});
