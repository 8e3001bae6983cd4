import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { allisonPrompt } from '../../hack/fixtures/recorded-speech.ts';
import { wav } from '../../hack/fixtures/recording-conditions.ts';
import { wordErrorRate } from '../support/speech.ts';
import { promptTalk } from '../analysis/talks.ts';

const PROMPTS = ['conf-waitforleader', 'conf-onlyone', 'conf-now-recording', 'conf-placeintoconf', 'privacy-unident', 'vm-tmpexists'];

describe('Whisper server: a quiet sentence among loud ones', function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-quiet-'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('recorded prompts alternating between −3 and −32 dBFS peaks over pink noise at −60 dBFS: the quiet ones, 29 dB under their neighbours, are transcribed too, on their own times (word error rate at most 0.3 over them)', async () => {
    const talk = await promptTalk(PROMPTS, { pauseMs: 1500, peaksDb: [-3, -32], floor: { kind: 'pink', rmsDb: -60 } });
    const path = join(dir, 'alternating.wav');
    await writeFile(path, wav(talk.samples));
    const client = new OpenAI({ baseURL: process.env.WHISPER_BASE_URL, apiKey: 'local', maxRetries: 0, timeout: 90_000 });
    const transcript = await client.audio.transcriptions.create({ file: createReadStream(path), model: 'whisper-1', language: 'en', response_format: 'verbose_json', timestamp_granularities: ['word'] });
    const texts = await Promise.all(PROMPTS.map(async (name) => (await allisonPrompt(name)).text));
    const quiet = talk.prompts.flatMap((prompt, index) => (index % 2 === 1 ? [{ ...prompt, text: texts[index]! }] : []));
    const heard = quiet.flatMap((prompt) => transcript.words!.filter((word) => word.start * 1000 >= prompt.start_ms - 250 && word.end * 1000 <= prompt.end_ms + 250).map((word) => word.word));
    expect(wordErrorRate(quiet.map((prompt) => prompt.text).join(' '), heard), `heard "${heard.join('')}" of "${quiet.map((prompt) => prompt.text).join(' ')}"`).to.be.at.most(0.3);
  });
});
