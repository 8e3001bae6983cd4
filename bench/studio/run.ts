/**
 * The studio's first page: its weight (gzip, what a compressing proxy sends) and its first
 * render on loopback, from a browser with an empty cache to the sign-in form on screen.
 * The api runs as a user starts it (`node api/src/main.ts`, embedded S3); the browser is
 * Debian's Chromium, headless. The same browser loading the api's /healthz (one small JSON
 * answer, nothing to run) in the same run is the floor the render time is set against.
 * Targets (issue 40 item 4): first page ≤ 350 KB gzip, first render ≤ 1 s.
 *
 *   node bench/studio/run.ts     (BENCH_LOADS=9 by default; the medians count)
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';
import { startEmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { API_MAIN, ROOT, benchDatabase, dropRedisKeys, median, startServer } from '../api/servers.ts';

const loads = Number(process.env.BENCH_LOADS ?? 9);
const GZIP_TARGET_BYTES = 350 * 1024;
const RENDER_TARGET_MS = 1000;
const run = promisify(execFile);

await run('bash', [join(ROOT, 'hack/studio.sh'), '--if-stale'], { cwd: ROOT });

// The first page is everything the sign-in screen loads: the page, its script and its stylesheet.
const dist = join(ROOT, 'studio/dist');
const files = ['index.html', ...(await readdir(join(dist, 'assets'))).filter((name) => /\.(js|css)$/.test(name)).map((name) => `assets/${name}`)];
let rawBytes = 0;
let gzipBytes = 0;
for (const file of files) {
  const bytes = await readFile(join(dist, file));
  const gzipped = gzipSync(bytes).length;
  rawBytes += bytes.length;
  gzipBytes += gzipped;
  console.log(`  ${file.padEnd(34)} ${String(bytes.length).padStart(8)} B   gzip ${String(gzipped).padStart(7)} B`);
}
console.log(`first page: ${rawBytes} B, gzip ${gzipBytes} B (${(gzipBytes / 1024).toFixed(1)} KB)`);

const id = randomBytes(4).toString('hex');
const database = await benchDatabase(`cutroom_bench_studio_${id}`);
const scratch = await mkdtemp(join(tmpdir(), 'cutroom-bench-studio-'));
const s3 = await startEmbeddedS3({ directory: join(scratch, 's3'), bucket: 'cutroom-bench' });
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const prefix = `cutroom-bench-studio:${id}:`;
const server = await startServer('cutroom', API_MAIN, {
  DATABASE_URL: database.url,
  REDIS_URL: redisUrl,
  REDIS_KEY_PREFIX: prefix,
  SECRET_KEY: randomBytes(32).toString('base64url'),
  S3_ENDPOINT: s3.endpoint,
  S3_BUCKET: s3.bucket,
  JOB_BACKEND: 'local',
  NODE_COMPILE_CACHE: join(scratch, 'compile-cache'),
});
let browser: Browser | undefined;

/** Milliseconds from navigation start until `selector` is in the page, in a fresh context (empty cache). */
async function timeToSelector(path: string, selector: string): Promise<number> {
  const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}${path}`, { waitUntil: 'commit' });
    await page.waitForSelector(selector, { state: 'attached' });
    // performance.now() counts from the navigation's start (the page's time origin)
    return await page.evaluate(() => performance.now());
  } finally {
    await context.close();
  }
}

try {
  // Debian's Chromium, headless, as the studio tests run it (nothing in bench/ imports test/support/)
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  // one of each first: Chromium's own start-up costs are not the page's
  await timeToSelector('/healthz', 'body');
  await timeToSelector('/studio/', 'h1');
  const floor: number[] = [];
  const studio: number[] = [];
  for (let i = 0; i < loads; i++) {
    floor.push(await timeToSelector('/healthz', 'body'));
    studio.push(await timeToSelector('/studio/', 'form input[name=username]'));
  }
  const floorMs = median(floor);
  const studioMs = median(studio);
  console.log(`first render of the studio (sign-in form on screen, empty cache): median ${studioMs.toFixed(0)} ms of ${loads} (${studio.map((ms) => ms.toFixed(0)).join(', ')})`);
  console.log(`floor (the api's /healthz as a page): median ${floorMs.toFixed(0)} ms (${floor.map((ms) => ms.toFixed(0)).join(', ')}); studio / floor ${(studioMs / floorMs).toFixed(2)}x`);
  console.log(`RESULT studio_first_page_gzip_kb ${(gzipBytes / 1024).toFixed(1)} (target <= ${GZIP_TARGET_BYTES / 1024}) ${gzipBytes <= GZIP_TARGET_BYTES ? 'ok' : 'miss'}`);
  console.log(`RESULT studio_first_render_ms ${studioMs.toFixed(0)} (target <= ${RENDER_TARGET_MS}) ${studioMs <= RENDER_TARGET_MS ? 'ok' : 'miss'}`);
} finally {
  await browser?.close();
  await server.stop();
  await s3.close();
  await dropRedisKeys(redisUrl, prefix);
  await database.drop();
  await rm(scratch, { recursive: true, force: true });
}
