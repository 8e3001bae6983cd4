import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { proxyResultSchema, type ProxyResult } from '../../crds/contract/programs/proxy.ts';
import { makeAudio, makeVideo, probeFile, topLevelBoxes } from '../support/media.ts';
import { recordingFfmpeg, runJobProcess, startJobBucket } from './job-process.ts';
import type { JobBucket, JobProcessOutcome } from './job-process.ts';

interface ProxyRun extends JobProcessOutcome {
  result: ProxyResult;
  prefix: string;
  /** Argument lists of every ffmpeg the program started. */
  ffmpegRuns: string[];
}


/** Average luma (0..255) of a region of an image: a blank sprite tile is 0. */
async function meanLuma(path: string, region: { x: number; y: number; width: number; height: number }): Promise<number> {
  const { stdout } = await promisify(execFile)('ffmpeg', [
    '-v', 'error', '-i', path,
    '-vf', `crop=${region.width}:${region.height}:${region.x}:${region.y},signalstats,metadata=print:key=lavfi.signalstats.YAVG:file=-`,
    '-f', 'null', '-',
  ]);
  return Number(/YAVG=([\d.]+)/.exec(stdout)?.[1] ?? Number.NaN);
}

describe('proxy program, end to end (node job-images/ffmpeg/src/main.ts)', function () {
  this.timeout(60_000);
  let bucket: JobBucket;
  let dir: string;
  let ffmpegWrapper: string;
  const userId = randomUUID();

  before(async () => {
    bucket = await startJobBucket();
    dir = await mkdtemp(join(tmpdir(), 'cutroom-proxy-test-'));
    // Counts the program's ffmpeg invocations: the efficiency rule is "one decode pass".
    ffmpegWrapper = await recordingFfmpeg(dir);
  });

  after(async () => {
    await bucket?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function runProxy(name: string, source: string, contentType: string): Promise<ProxyRun> {
    const sourceKey = `uploads/${name}`;
    await bucket.putFile(sourceKey, source, contentType);
    const jobId = randomUUID();
    const prefix = `jobs/proxy/${jobId}`;
    const ffmpegLog = join(dir, `${name}.ffmpeg.log`);
    await writeFile(ffmpegLog, '');
    const outcome = await runJobProcess(
      { jobId, program: 'proxy', userId, mediaFileId: randomUUID(), input: { sourceKey, contentType }, outputPrefix: prefix },
      { ...bucket.env, FFMPEG_PATH: ffmpegWrapper, CUTROOM_TEST_FFMPEG_LOG: ffmpegLog },
    );
    return {
      ...outcome,
      result: (outcome.result ?? {}) as unknown as ProxyResult,
      prefix,
      ffmpegRuns: (await readFile(ffmpegLog, 'utf8')).split('\n').filter(Boolean),
    };
  }

  async function download(key: string, name: string): Promise<string> {
    const path = join(dir, name);
    await bucket.getFile(key, path);
    return path;
  }

  describe('non-web-compatible video (VP9/Opus WebM, 720p)', () => {
    let run: ProxyRun;
    before(async () => {
      run = await runProxy('webm', await makeVideo(dir, 'hd.webm', { codec: 'vp9', width: 1280, height: 720, seconds: 3 }), 'video/webm');
    });

    it('exits 0 with the proxy and sprite keys under the job prefix and the sprite layout', () => {
      expect(run.exitCode, run.stderr).to.equal(0);
      expect(run.result).to.deep.equal({
        proxy_key: `${run.prefix}/proxy.mp4`,
        sprite_key: `${run.prefix}/sprite.jpg`,
        sprite: { tile_width_px: 160, tile_height_px: 90, tiles_per_row: 3, total_tiles: 3, seconds_per_tile: 1 },
      });
    });

    it('proxy and sprite come from one ffmpeg invocation (one decode)', () => {
      expect(run.ffmpegRuns).to.have.length(1);
    });

    it('the proxy is 854×480 H.264 + AAC MP4 with its index in front (faststart)', async () => {
      const proxy = await download(run.result.proxy_key, 'webm-proxy.mp4');
      const probe = await probeFile(proxy);
      expect(probe.streams.map((stream) => stream.codec_name)).to.deep.equal(['h264', 'aac']);
      expect(probe.streams[0]).to.include({ width: 854, height: 480 });
      expect(Number(probe.format.duration)).to.be.closeTo(3, 0.1);
      const boxes = await topLevelBoxes(proxy);
      expect(boxes.indexOf('moov')).to.be.within(0, boxes.indexOf('mdat'));
    });

    it('the sprite sheet is a JPEG grid of one 160×90 tile per second, as its metadata says', async () => {
      const sprite = await download(run.result.sprite_key, 'webm-sprite.jpg');
      expect((await probeFile(sprite)).streams[0]).to.include({ codec_name: 'mjpeg', width: 480, height: 90 });
      for (let tile = 0; tile < 3; tile += 1) {
        expect(await meanLuma(sprite, { x: tile * 160, y: 0, width: 160, height: 90 }), `tile ${tile}`).to.be.above(40);
      }
    });

    it('result.json in S3 is the result, as the contract reads it; progress runs download, probe, process, upload up to 100', async () => {
      expect(proxyResultSchema.parse(await bucket.getJson(`${run.prefix}/result.json`))).to.deep.equal(run.result);
      const progress = run.progress;
      expect([...new Set(progress.map((event) => event.step))]).to.deep.equal(['download', 'probe', 'process', 'upload']);
      const percents = progress.map((event) => event.progress);
      expect(percents).to.deep.equal([...percents].sort((a, b) => a - b));
      expect(percents.at(-1)).to.equal(100);
    });
  });

  it('a silent WebM without a duration (MediaRecorder) gets a silent proxy and a sprite', async () => {
    const run = await runProxy('live', await makeVideo(dir, 'live.webm', { codec: 'vp9', live: true, audio: 'none', seconds: 2 }), 'video/webm');
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(run.result.sprite).to.include({ total_tiles: 2, seconds_per_tile: 1 });
    const probe = await probeFile(await download(run.result.proxy_key, 'live-proxy.mp4'));
    expect(probe.streams.map((stream) => stream.codec_name)).to.deep.equal(['h264']);
  });

  it('a file with no picture has no proxy: exit 1 with a clear message', async () => {
    const run = await runProxy('mp3', await makeAudio(dir, 'tone.mp3', { seconds: 1 }), 'audio/mpeg');
    expect(run.exitCode, run.stderr).to.equal(1);
    expect(run.error?.message ?? '').to.equal('The media file "uploads/mp3" is not a video: it has no proxy');
    expect(await bucket.exists(`${run.prefix}/result.json`)).to.equal(false);
  });
});
