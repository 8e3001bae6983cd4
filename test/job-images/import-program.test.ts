import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { mediaImportResultSchema } from '../../crds/contract/programs/media-import.ts';
import { producedMediaResultSchema } from '../../crds/contract/programs/media-edit.ts';
import { makeVideo } from '../support/media.ts';
import { runJobProcess, startJobBucket, type JobBucket } from './job-process.ts';

/** A host on loopback answering `routes` (path → redirect location or bytes); counts the requests it got. */
async function startHost(routes: Record<string, string | Buffer>) {
  const hits: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '';
    hits.push(path);
    const route = routes[path];
    if (typeof route === 'string') {
      response.writeHead(302, { location: route });
      return response.end();
    }
    if (route) {
      response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': route.length });
      return response.end(route);
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('media-import program, end to end (node job-images/ffmpeg/src/main.ts)', function () {
  this.timeout(60_000);
  let bucket: JobBucket;
  let dir: string;
  let mp4: Buffer;

  before(async () => {
    bucket = await startJobBucket();
    dir = await mkdtemp(join(tmpdir(), 'cutroom-import-program-'));
    mp4 = await readFile(await makeVideo(dir, 'hosted.mp4', { seconds: 1, width: 160, height: 90 }));
  });
  after(async () => {
    await bucket.close();
    await rm(dir, { recursive: true, force: true });
  });

  const importJob = (downloadUrl: string) =>
    runJobProcess({ jobId: randomUUID(), program: 'media-import', userId: randomUUID(), input: { downloadUrl, maxBytes: 50 * 1024 * 1024 }, outputPrefix: `jobs/media-import/${randomUUID()}` }, bucket.env);

  it('a redirect within the download origin is followed; the result parses with the schema the completion reads', async () => {
    const host = await startHost({ '/Playback1/highest.mp4': '/renditions/Playback1.mp4', '/renditions/Playback1.mp4': mp4 });
    try {
      const outcome = await importJob(`${host.origin}/Playback1/highest.mp4`);
      expect(outcome.result, `${JSON.stringify(outcome.error)} ${outcome.stderr.slice(-500)}`).to.not.equal(null);
      const result = mediaImportResultSchema.parse(outcome.result);
      expect(producedMediaResultSchema.safeParse(result).success).to.equal(true);
      expect(result.size_bytes).to.equal(mp4.length);
      expect(await bucket.exists(result.output_key)).to.equal(true);
      expect(host.hits).to.deep.equal(['/Playback1/highest.mp4', '/renditions/Playback1.mp4']);
    } finally {
      await host.close();
    }
  });

  it('a redirect to another origin fails the job (import.redirect_refused, naming the host); nothing is fetched there', async () => {
    const elsewhere = await startHost({ '/internal/secret.mp4': mp4 });
    const host = await startHost({ '/Playback2/highest.mp4': `${elsewhere.origin}/internal/secret.mp4` });
    try {
      const outcome = await importJob(`${host.origin}/Playback2/highest.mp4`);
      expect(outcome.exitCode).to.equal(1);
      expect(outcome.error).to.deep.include({ code: 'import.redirect_refused', params: { host: new URL(elsewhere.origin).host } });
      expect(elsewhere.hits).to.deep.equal([]);
    } finally {
      await Promise.all([host.close(), elsewhere.close()]);
    }
  });

  it('a download URL that is not http(s) is refused by the input contract', async () => {
    const outcome = await importJob('file:///etc/passwd');
    expect(outcome.exitCode).to.equal(1);
    expect(outcome.error, 'error.json').to.not.equal(null);
    expect(outcome.error?.message ?? '').to.match(/Invalid input for program "media-import"/);
  });
});
