import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { FFMPEG_IMAGE_MAIN, WHISPER_IMAGE_MAIN } from './job-process.ts';

/**
 * Starts an image's entrypoint without a spec (it loads its programs, then fails) and without
 * NODE_COMPILE_CACHE (main.ts enables the cache, by default under the OS temp dir: here
 * `tmpDir`), the compile cache's own log on stderr.
 */
function startWithoutSpec(main: string, tmpDir: string): { status: number | null; stderr: string } {
  const { status, stderr } = spawnSync(process.execPath, [main], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: tmpDir, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
    encoding: 'utf8',
  });
  return { status, stderr };
}

describe('job images start from compiled code (the compile cache)', () => {
  let cacheDir: string;
  beforeEach(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'cutroom-compile-cache-'));
  });
  afterEach(async () => {
    await rm(cacheDir, { recursive: true, force: true });
  });

  for (const [image, main, program] of [
    ['whisper', WHISPER_IMAGE_MAIN, 'analyze-program.ts'],
    ['ffmpeg', FFMPEG_IMAGE_MAIN, 'render-program.ts'],
  ] as const) {
    it(`${image}: a second start reads its program's modules and its packages' from the cache the first one wrote`, () => {
      const first = startWithoutSpec(main, cacheDir);
      expect(first.status, first.stderr).to.equal(1);
      const second = startWithoutSpec(main, cacheDir);
      expect(second.status, second.stderr).to.equal(1);
      const accepted = second.stderr.split('\n').filter((line) => / was accepted/.test(line));
      // enabled after the static imports, the cache would hold nothing of what the program loads
      expect(accepted.some((line) => line.includes(`/${program} `)), second.stderr.slice(0, 2000)).to.equal(true);
      expect(accepted.some((line) => line.includes('/node_modules/@aws-sdk/client-s3/')), 'the S3 client').to.equal(true);
    });

    it(`${image}: the Dockerfile bakes the cache as the user the Job runs as (Node keeps one per user id; read-only at run time)`, async () => {
      const dockerfile = await readFile(new URL(`../../job-images/${image}/Dockerfile`, import.meta.url), 'utf8');
      expect(dockerfile).to.match(/^ENV NODE_COMPILE_CACHE=\/app\/\.compile-cache$/m);
      const afterUser = dockerfile.slice(dockerfile.search(/^USER node$/m));
      expect(afterUser).to.match(new RegExp(`^RUN node job-images/${image}/src/main\\.ts\\b.*; test -n "\\$\\(ls -A \\.compile-cache\\)"$`, 'm'));
    });
  }
});
