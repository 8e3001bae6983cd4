import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { mediaEditResultSchema, producedMediaResultSchema, type MediaEditResult } from '../../crds/contract/programs/media-edit.ts';
import { probeFile } from '../support/media.ts';
import { runJobProcess, startJobBucket, type JobBucket } from './job-process.ts';

/** An H.264/AAC clip with a keyframe every `gopFrames` frames, so stream copy has places to cut. */
async function makeClip(dir: string, name: string, seconds: number, gopFrames: number): Promise<string> {
  const output = join(dir, name);
  await promisify(execFile)('ffmpeg', [
    '-hide_banner', '-loglevel', 'error', '-y',
    '-f', 'lavfi', '-i', `testsrc2=size=320x180:rate=25:duration=${seconds}`,
    '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', String(gopFrames), '-keyint_min', String(gopFrames), '-sc_threshold', '0',
    '-c:a', 'aac', '-shortest', output,
  ]);
  return output;
}

describe('media-edit program (real ffmpeg)', function () {
  this.timeout(60_000);
  let bucket: JobBucket;
  let dir: string;
  let sourceKey: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-edit-program-'));
    bucket = await startJobBucket();
    const clip = await makeClip(dir, 'source.mp4', 6, 25);
    sourceKey = `media/${randomUUID()}/source`;
    await bucket.putFile(sourceKey, clip, 'video/mp4');
  });
  after(async () => {
    await bucket.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function edit(input: Record<string, unknown>) {
    const outputPrefix = `jobs/media-edit/${randomUUID()}`;
    const outcome = await runJobProcess(
      { jobId: randomUUID(), program: 'media-edit', userId: randomUUID(), input: { sourceKey, contentType: 'video/mp4', durationMs: null, extractAudio: false, fastMode: false, cuts: [], ...input }, outputPrefix },
      bucket.env,
    );
    if (outcome.exitCode !== 0 || !outcome.result) throw new Error(`media-edit failed: ${JSON.stringify(outcome.error)} ${outcome.stderr.slice(-500)}`);
    const result = outcome.result as unknown as MediaEditResult;
    const local = join(dir, `${randomUUID()}-${result.output_key.split('/').at(-1)}`);
    await bucket.getFile(result.output_key, local);
    const probed = await probeFile(local);
    return { result, outputPrefix, probed, seconds: Number(probed.format.duration) };
  }

  it('trim and cuts removed (re-encode): H.264/AAC MP4 lasting the kept time ±0.1 s', async () => {
    const { result, outputPrefix, probed, seconds } = await edit({ startMs: 500, endMs: 5500, cuts: [{ startMs: 1000, endMs: 2000 }, { startMs: 3000, endMs: 3500 }] });
    expect(result.output_key).to.equal(`${outputPrefix}/edited.mp4`);
    expect(result.content_type).to.equal('video/mp4');
    expect(result.stream_copied).to.equal(false);
    expect(seconds).to.be.closeTo(3.5, 0.1);
    expect(probed.streams.map((stream) => stream.codec_name).sort()).to.deep.equal(['aac', 'h264']);
    expect(result.artifact.duration_ms).to.be.closeTo(3500, 100);
    expect(result.size_bytes).to.equal(result.artifact.size_bytes).and.be.greaterThan(0);
    expect(result.artifact.artifacts.thumbnail_key).to.equal(`${outputPrefix}/thumbnail.jpg`);
  });

  it('the result parses with the contract schemas the produced-media completion reads', async () => {
    const { result } = await edit({ endMs: 1000 });
    expect(mediaEditResultSchema.safeParse(result).success).to.equal(true);
    expect(producedMediaResultSchema.safeParse(result).success).to.equal(true);
  });

  it('end beyond the real duration is clamped by the worker', async () => {
    const { seconds } = await edit({ startMs: 4000, endMs: 60_000 });
    expect(seconds).to.be.closeTo(2, 0.1);
  });

  it('fast_mode: stream copy with cuts snapped to keyframes (1 s GOP)', async () => {
    // Keep [0,1.5) and [3.4,6): the second piece starts at the keyframe at 3 s.
    const { result, probed, seconds } = await edit({ fastMode: true, cuts: [{ startMs: 1500, endMs: 3400 }] });
    expect(result.stream_copied).to.equal(true);
    expect(probed.streams.map((stream) => stream.codec_name).sort()).to.deep.equal(['aac', 'h264']);
    expect(seconds).to.be.within(1.5 + 2.6 - 0.15, 1.5 + 3 + 0.15);
  });

  it('extract_audio: an .m4a with AAC audio only', async () => {
    const { result, outputPrefix, probed, seconds } = await edit({ extractAudio: true, startMs: 1000, endMs: 3000 });
    expect(result.output_key).to.equal(`${outputPrefix}/edited.m4a`);
    expect(result.content_type).to.equal('audio/mp4');
    expect(probed.streams.map((stream) => stream.codec_type)).to.deep.equal(['audio']);
    expect(probed.streams[0]?.codec_name).to.equal('aac');
    expect(seconds).to.be.closeTo(2, 0.1);
    expect(result.artifact.kind).to.equal('audio');
  });

  it('cuts that leave nothing fail with a clear message', async () => {
    const outcome = await runJobProcess(
      { jobId: randomUUID(), program: 'media-edit', userId: randomUUID(), outputPrefix: `jobs/media-edit/${randomUUID()}`, input: { sourceKey, contentType: 'video/mp4', durationMs: 6000, extractAudio: false, fastMode: false, cuts: [{ startMs: 0, endMs: 6000 }] } },
      bucket.env,
    );
    expect(outcome.exitCode).to.equal(1);
    expect(outcome.error).to.deep.include({ message: 'Nothing of the source is left once the range is applied and the cuts are removed' });
  });
});
