import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Transcriber } from '../../job-images/whisper/src/transcriber.ts';

/**
 * Issue 22 item 7: director notes change what the analysis does: they are the recognizer's
 * prompt (Whisper follows it for names, terms and spelling). A loopback server speaking the
 * transcription API records the form the program sends.
 */
describe('director notes reach the transcription server as its prompt', () => {
  let server: Server;
  let baseUrl: string;
  let dir: string;
  const forms: FormData[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-prompt-'));
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        void new Response(Buffer.concat(chunks), { headers: { 'content-type': request.headers['content-type'] ?? '' } }).formData().then((form) => {
          forms.push(form);
          response.setHeader('content-type', 'application/json');
          response.end(JSON.stringify({ language: 'en', duration: 1, text: 'hello', segments: [], words: [{ word: ' hello', start: 0.1, end: 0.5 }] }));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('notes are sent as the prompt (their last 800 characters); none or blank sends no prompt', async () => {
    const wav = join(dir, 'a.wav');
    await writeFile(wav, Buffer.alloc(64));
    const transcriber = new Transcriber({ baseUrl, model: 'whisper-1', timeoutMs: 10_000 });
    const signal = new AbortController().signal;
    await transcriber.transcribe(wav, 'en', signal, 'Guest: Siobhán Ní Chonaill. Product: Cutroom.');
    await transcriber.transcribe(wav, 'en', signal, `${'x'.repeat(1000)}END`);
    await transcriber.transcribe(wav, 'en', signal, '   ');
    await transcriber.transcribe(wav, 'en', signal);
    expect(forms.map((form) => form.get('prompt'))).to.deep.equal(['Guest: Siobhán Ní Chonaill. Product: Cutroom.', `${'x'.repeat(797)}END`, null, null]);
  });
});
