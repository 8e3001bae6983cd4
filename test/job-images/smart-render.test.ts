import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { renderInputSchema, renderResultSchema, type RenderInput, type RenderRequestInput } from '../../crds/contract/programs/render.ts';
import { createJobLog } from '../../job-images/lib/job-log.ts';
import { probeSource, type MediaProbe } from '../../job-images/ffmpeg/src/media/probe.ts';
import { planRender } from '../../job-images/ffmpeg/src/render/render-plan.ts';
import { renderFiles } from '../../job-images/ffmpeg/src/render/render-export.ts';
import { planSmartRender, smartPlanRefusal, type SmartPlan, type SourcePacket, type SourcePicture } from '../../job-images/ffmpeg/src/render/smart-plan.ts';
import { readSmartSource } from '../../job-images/ffmpeg/src/render/smart-source.ts';
import { smartRender, smartRenderEligibility, SmartRenderNotWorthIt } from '../../job-images/ffmpeg/src/render/smart-render.ts';
import { keptRangesRenderInput } from '../../hack/fixtures/render-input.ts';
import { runJobProcess, startJobBucket, type JobBucket } from './job-process.ts';

const run = promisify(execFile);
const FPS = 30;
const FRAME_SECONDS = 1 / FPS;
const tools = { ffmpeg: 'ffmpeg', ffprobe: 'ffprobe' };
const silentLog = createJobLog({}, () => {});

// ------------------------------------------------------------------ synthetic packets

/**
 * A 30 fps picture in 512-tick frames (time base 1/15360): GOPs of `gop` frames, each
 * I then P/B pairs in decode order (I0 P2 B1 P4 B3 …), one frame of reorder delay.
 */
function picture(options: { frames: number; gop: number; openGopAt?: number[]; jitterAt?: number }): SourcePicture {
  const { frames, gop } = options;
  const order: number[] = [];
  for (let start = 0; start < frames; start += gop) {
    const end = Math.min(frames, start + gop);
    order.push(start);
    let next = start + 2;
    for (; next < end; next += 2) order.push(next, next - 1);
    if (next - 1 < end && next - 1 > start && !order.includes(next - 1)) order.push(next - 1);
  }
  // An open GOP: the frame shown just before the keyframe decodes after it (a leading picture).
  for (const key of options.openGopAt ?? []) {
    order.splice(order.indexOf(key - 1), 1);
    order.splice(order.indexOf(key) + 1, 0, key - 1);
  }
  const packets: SourcePacket[] = order.map((frame, index) => ({
    pts: frame * 512 + (frame === options.jitterAt ? 200 : 0),
    dts: (index - 1) * 512,
    keyframe: frame % gop === 0,
    duration: 512,
  }));
  return { timeBase: { num: 1, den: 15360 }, startTicks: 0, packets };
}

const rate30 = { num: 30, den: 1 };
const frameTicks = (frame: number): number => frame * 512;
const parts = (plan: ReturnType<typeof planSmartRender>) =>
  plan.parts.map((part) => ({ kind: part.kind, from: part.startPts / 512, to: part.endPts / 512 }));

describe('smart render plan (the plan as data)', () => {
  it('a kept range is a re-encoded head up to its first keyframe, copied frames up to the last split of decode order in it, and the frames after that split re-encoded', () => {
    // Decode order I0 P2 B1 P4 B3 …: every odd frame starts a split (frames before it decode without any after it).
    const plan = planSmartRender(picture({ frames: 300, gop: 60 }), [{ sourceStartMs: 700, sourceEndMs: 6333 }], rate30);
    expect(parts(plan)).to.deep.equal([
      { kind: 'encode', from: 21, to: 60 },
      { kind: 'copy', from: 60, to: 189 },
      { kind: 'encode', from: 189, to: 190 },
    ]);
    expect(plan.parts[0]?.leadInFrames).to.equal(21);
    // The one re-encoded frame after the split decodes from its GOP's keyframe.
    expect(plan.parts[2]).to.include({ keyframePts: frameTicks(180), leadInFrames: 9 });
    expect(plan.frameCount).to.equal(169);
  });

  it('a kept range ending on a split of decode order is copied to its end: no re-encoded tail', () => {
    const plan = planSmartRender(picture({ frames: 300, gop: 60 }), [{ sourceStartMs: 700, sourceEndMs: 6300 }], rate30);
    expect(parts(plan)).to.deep.equal([
      { kind: 'encode', from: 21, to: 60 },
      { kind: 'copy', from: 60, to: 189 },
    ]);
    expect(plan.encodedFrames).to.equal(39);
  });

  it('a copy never ends where a frame before the split decodes after a frame shown later (inside a B-frame pair)', () => {
    // End 188: frame 187 decodes after 188 (… P188 B187 …), so the copy ends at 187 and frame 187 is re-encoded.
    const plan = planSmartRender(picture({ frames: 300, gop: 60 }), [{ sourceStartMs: 700, sourceEndMs: 6267 }], rate30);
    expect(parts(plan).slice(1)).to.deep.equal([
      { kind: 'copy', from: 60, to: 187 },
      { kind: 'encode', from: 187, to: 188 },
    ]);
  });

  it("a range keeps the frames between the frame edges nearest its ends, as the full render does (the contract's one rule)", () => {
    // 1000 ms is frame 30's start exactly; 1034 ms is nearest frame 31's (1033.3 ms), 1051 ms frame 32's (1066.7 ms)
    const plan = planSmartRender(picture({ frames: 300, gop: 60 }), [{ sourceStartMs: 1000, sourceEndMs: 1034 }], rate30);
    expect(plan.segments).to.deep.equal([{ startPts: frameTicks(30), endPts: frameTicks(31), frames: 1 }]);
    const later = planSmartRender(picture({ frames: 300, gop: 60 }), [{ sourceStartMs: 1000, sourceEndMs: 1051 }], rate30);
    expect(later.segments).to.deep.equal([{ startPts: frameTicks(30), endPts: frameTicks(32), frames: 2 }]);
  });

  it('a range holding no keyframe to copy from is re-encoded as one part', () => {
    const plan = planSmartRender(picture({ frames: 300, gop: 60 }), [{ sourceStartMs: 2100, sourceEndMs: 3900 }], rate30);
    expect(parts(plan)).to.deep.equal([{ kind: 'encode', from: 63, to: 117 }]);
  });

  it('a range running to the end of the source copies its last GOP', () => {
    const plan = planSmartRender(picture({ frames: 300, gop: 60 }), [{ sourceStartMs: 6700, sourceEndMs: 20_000 }], rate30);
    expect(parts(plan)).to.deep.equal([
      { kind: 'encode', from: 201, to: 240 },
      { kind: 'copy', from: 240, to: 300 },
    ]);
  });

  it('ranges that continue each other in the source are one stretch (no seam, no fade)', () => {
    const plan = planSmartRender(picture({ frames: 300, gop: 60 }), [{ sourceStartMs: 0, sourceEndMs: 3000 }, { sourceStartMs: 3000, sourceEndMs: 6000 }], rate30);
    expect(plan.segments).to.have.length(1);
    expect(parts(plan)).to.deep.equal([{ kind: 'copy', from: 0, to: 180 }]);
  });

  it('an open-GOP keyframe (a leading picture decodes after it) never starts a copy', () => {
    const plan = planSmartRender(picture({ frames: 300, gop: 60, openGopAt: [120] }), [{ sourceStartMs: 1000, sourceEndMs: 10_000 }], rate30);
    expect(parts(plan)).to.deep.equal([
      { kind: 'encode', from: 30, to: 60 },
      { kind: 'copy', from: 60, to: 300 },
    ]);
    const cutAtOpen = planSmartRender(picture({ frames: 300, gop: 60, openGopAt: [120] }), [{ sourceStartMs: 3000, sourceEndMs: 10_000 }], rate30);
    expect(parts(cutAtOpen)[0]).to.deep.equal({ kind: 'encode', from: 90, to: 180 });
  });

  it('will not pay: re-encoding the partial GOPs would be over half the work', () => {
    // Frames 30–104: 30 re-encoded and 30 decoded to reach them, against 75 kept.
    const plan = planSmartRender(picture({ frames: 300, gop: 60 }), [{ sourceStartMs: 1000, sourceEndMs: 3500 }], rate30);
    expect(smartPlanRefusal(plan)).to.match(/re-encoding the partial GOPs would be 52% of a full render's work/);
    const pays = planSmartRender(picture({ frames: 300, gop: 60 }), [{ sourceStartMs: 700, sourceEndMs: 6300 }], rate30);
    expect(smartPlanRefusal(pays)).to.equal(null);
  });

  it('a 29.97 fps source in a 1/600 time base (frames of 20 and 21 ticks) is on its frame grid', () => {
    // Phones write 29.97 fps in 1/600: each frame starts at the tick nearest i × 1001/30000 s.
    const packets: SourcePacket[] = Array.from({ length: 300 }, (_, frame) => ({ pts: Math.round((frame * 600 * 1001) / 30000), dts: Math.round((frame * 600 * 1001) / 30000), keyframe: frame % 60 === 0, duration: 20 }));
    const plan = planSmartRender({ timeBase: { num: 1, den: 600 }, startTicks: 0, packets }, [{ sourceStartMs: 2500, sourceEndMs: 9000 }], { num: 30000, den: 1001 });
    expect(plan.onFrameGrid).to.equal(true);
    // Frames 75 (2.5025 s) to 269 (8.9756 s): the first and last whose grid times lie in [2.5 s, 9 s).
    expect(plan.frameCount).to.equal(195);
    expect(smartPlanRefusal(plan)).to.equal(null);
  });

  it('cannot apply: a variable frame rate, which only the full render makes constant', () => {
    const plan = planSmartRender(picture({ frames: 300, gop: 60, jitterAt: 150 }), [{ sourceStartMs: 0, sourceEndMs: 10_000 }], rate30);
    expect(smartPlanRefusal(plan)).to.match(/variable frame rate/);
  });
});

// ------------------------------------------------------------------ real media

/**
 * 10 s (or `seconds`) of 1280x720 H.264 at 30 fps with B-frames and a keyframe every 2 s
 * (or `gopFrames`); a white square flashes on every whole second's frame while a 1 kHz
 * beep sounds for that frame.
 */
async function makeFlashBeepSource(dir: string, options: { seconds: number; gopFrames: number } = { seconds: 10, gopFrames: 60 }): Promise<string> {
  const { seconds, gopFrames } = options;
  const output = join(dir, `flash-beep-${seconds}s.mp4`);
  await run('ffmpeg', [
    '-hide_banner', '-loglevel', 'error', '-y',
    '-f', 'lavfi', '-i', `testsrc2=size=1280x720:rate=${FPS}:duration=${seconds},drawbox=x=0:y=0:w=160:h=160:color=white:t=fill:enable='eq(mod(n\\,${FPS})\\,0)'`,
    '-f', 'lavfi', '-i', `aevalsrc='if(lt(mod(t\\,1)\\,${FRAME_SECONDS})\\,0.8*sin(2*PI*1000*t)\\,0)':s=48000:d=${seconds}`,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-bf', '2', '-g', String(gopFrames), '-keyint_min', String(gopFrames), '-sc_threshold', '0', '-pix_fmt', 'yuv420p',
    '-c:a', 'aac', '-b:a', '128k', '-shortest', output,
  ]);
  return output;
}

function cutOnlyInput(ranges: readonly [number, number][], overrides: Partial<RenderRequestInput> = {}, sourceDurationMs = 10_000): RenderInput {
  const { settings, ...extra } = overrides;
  return renderInputSchema.parse(
    keptRangesRenderInput({ sourceKey: 'media/footage/source', sourceDurationMs, ranges, settings: { resolution: '720p', ...settings }, extra }),
  );
}

/** The plan the smart render makes of `input` on `source`, read as the render reads it. */
async function sourcePlan(source: string, probe: MediaProbe, input: RenderInput): Promise<SmartPlan> {
  const read = await readSmartSource(tools, source, probe, AbortSignal.timeout(10_000));
  if (!read) throw new Error('the source has no timestamps to plan by');
  return planSmartRender(read.picture, input.segments, { num: FPS, den: 1 });
}

/** Output frame indexes of the plan's copied parts. */
function copiedOutputFrames(plan: SmartPlan): number[] {
  const frames: number[] = [];
  let at = 0;
  for (const part of plan.parts) {
    if (part.kind === 'copy') frames.push(...Array.from({ length: part.frames }, (_, index) => at + index));
    at += part.frames;
  }
  return frames;
}

async function ffprobeJson(args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-print_format', 'json', ...args], { maxBuffer: 64 << 20 });
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** Output times (s) of frames whose top-left square is white. */
async function flashTimes(path: string): Promise<number[]> {
  const json = await ffprobeJson(['-f', 'lavfi', '-i', `movie=${path},crop=160:160:0:0,signalstats`, '-show_entries', 'frame=pts_time:frame_tags=lavfi.signalstats.YAVG']);
  const frames = json.frames as { pts_time: string; tags: Record<string, string> }[];
  return frames.filter((frame) => Number(frame.tags['lavfi.signalstats.YAVG']) > 200).map((frame) => Number(frame.pts_time));
}

/** Output times (s) where a beep starts: the ends of silence (silencedetect also ends one at the end of the file). */
async function beepOnsets(path: string): Promise<number[]> {
  const { stderr } = await run('ffmpeg', ['-hide_banner', '-nostats', '-i', path, '-map', '0:a', '-af', 'silencedetect=n=-30dB:d=0.05', '-f', 'null', '-']);
  const ends = [...stderr.matchAll(/silence_end: ([\d.]+)/g)].map((match) => Number(match[1]));
  const starts = [...stderr.matchAll(/silence_start: ([\d.]+)/g)].map((match) => Number(match[1]));
  return ends.filter((end) => starts.some((start) => start > end));
}

describe('smart render on a 1280x720 H.264 source with B-frames and 2 s GOPs (real ffmpeg)', function () {
  this.timeout(120_000);
  let dir: string;
  let source: string;
  let probe: MediaProbe;
  let output: string;
  let result: { frameCount: number; durationMs: number };
  let plan: SmartPlan;
  // Frames 21–188 and 201–299: a re-encoded head, copied GOPs and a re-encoded tail each side of a join.
  const ranges: [number, number][] = [[700, 6300], [6700, 10_000]];
  const keptSourceFrames = [...Array.from({ length: 168 }, (_, index) => 21 + index), ...Array.from({ length: 99 }, (_, index) => 201 + index)];
  const input = cutOnlyInput(ranges);
  const probes = () => new Map([['footage', probe]]);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-smart-render-'));
    source = await makeFlashBeepSource(dir);
    probe = await probeSource(tools, source, 'footage', AbortSignal.timeout(10_000));
    plan = await sourcePlan(source, probe, input);
    output = join(dir, 'smart.mp4');
    result = await smartRender({
      input,
      sourcePaths: new Map([['footage', source]]),
      probes: probes(),
      outputPath: output,
      workDir: dir,
      signal: AbortSignal.timeout(60_000),
      onProgress: () => {},
      log: silentLog,
    });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("frame count equals the plan's: the source frames whose start time t satisfies start ≤ t < end", async () => {
    const json = await ffprobeJson(['-select_streams', 'v:0', '-count_frames', '-show_entries', 'stream=nb_read_frames', output]);
    const decoded = Number((json.streams as { nb_read_frames: string }[])[0]?.nb_read_frames);
    expect(decoded).to.equal(keptSourceFrames.length);
    expect(result.frameCount).to.equal(keptSourceFrames.length);
    // The full render's plan counts the same frames.
    const full = planRender(input, probes(), renderFiles(dir, new Map([['footage', source]]), join(dir, 'full.mp4'), {}));
    expect(full.frameCount).to.equal(result.frameCount);
  });

  it('no frozen or repeated frame at a segment start: every output frame is the source frame it stands for, copied GOPs bit-exact', async () => {
    const reference = ranges.map(([from, to], index) => `[1:v]trim=start_frame=${Math.round((from / 1000) * FPS)}:end_frame=${Math.round((to / 1000) * FPS)},setpts=PTS-STARTPTS[r${index}]`);
    const stats = join(dir, 'psnr.log');
    await run('ffmpeg', [
      '-hide_banner', '-loglevel', 'error', '-i', output, '-i', source,
      '-filter_complex', `${reference.join(';')};[r0][r1]concat=n=2:v=1:a=0[ref];[0:v][ref]psnr=stats_file=${stats}`,
      '-f', 'null', '-',
    ]);
    const psnr = (await readFile(stats, 'utf8')).trim().split('\n').map((line) => Number(/psnr_avg:(\S+)/.exec(line)?.[1] === 'inf' ? Infinity : /psnr_avg:(\S+)/.exec(line)?.[1]));
    expect(psnr).to.have.length(keptSourceFrames.length);
    // A neighbouring frame of testsrc2 scores under 30 dB; a re-encoded seam frame over 40.
    expect(Math.min(...psnr)).to.be.greaterThan(40);
    // The copied frames, whole GOPs and the first range's last GOP up to its last split of decode order (past its keyframe at 180).
    const copied = copiedOutputFrames(plan);
    expect(plan.parts.find((part) => part.kind === 'copy' && part.segment === 0)?.endPts).to.be.above(180 * 512);
    expect(copied.length).to.be.above(180);
    expect(copied.every((frame) => psnr[frame] === Infinity)).to.equal(true);
    // The first frames of both segments (re-encoded) are the source frames at their starts.
    expect(psnr[0]).to.be.greaterThan(40);
    expect(psnr[168]).to.be.greaterThan(40);
  });

  it('audio/video offset within one frame at every join: each flash has its beep', async () => {
    const flashes = await flashTimes(output);
    const beeps = await beepOnsets(output);
    // Source seconds 1–6 and 7–9 land at 0.3 … 5.3 and 5.9, 6.9, 7.9 s in the output.
    expect(flashes.map((time) => Math.round(time * 10) / 10)).to.deep.equal([0.3, 1.3, 2.3, 3.3, 4.3, 5.3, 5.9, 6.9, 7.9]);
    expect(beeps).to.have.length(flashes.length);
    flashes.forEach((flash, index) => expect(Math.abs((beeps[index] ?? Infinity) - flash)).to.be.at.most(FRAME_SECONDS));
  });

  it("duration within one frame of the plan's, for the picture, the sound and the file", async () => {
    const expected = keptSourceFrames.length / FPS;
    const json = await ffprobeJson(['-show_entries', 'stream=codec_type,duration:format=duration', output]);
    const streams = json.streams as { codec_type: string; duration: string }[];
    expect(Number((json.format as { duration: string }).duration)).to.be.closeTo(expected, FRAME_SECONDS);
    for (const stream of streams) expect(Number(stream.duration), stream.codec_type).to.be.closeTo(expected, FRAME_SECONDS);
    expect(result.durationMs).to.equal(Math.round(expected * 1000));
  });

  it('the whole output decodes without an error, and decode timestamps rise at every join', async () => {
    const { stderr } = await run('ffmpeg', ['-hide_banner', '-nostats', '-v', 'error', '-i', output, '-f', 'null', '-']);
    expect(stderr.trim()).to.equal('');
    const json = await ffprobeJson(['-select_streams', 'v:0', '-show_entries', 'packet=dts,pts', output]);
    const packets = json.packets as { dts: number; pts: number }[];
    expect(packets.every((packet, index) => index === 0 || packet.dts > (packets[index - 1]?.dts ?? -Infinity))).to.equal(true);
    expect(packets.every((packet) => packet.pts >= packet.dts)).to.equal(true);
  });

  it("the re-encoded seams match the source: profile, level, pixel format, time base", async () => {
    const json = await ffprobeJson(['-select_streams', 'v:0', '-show_entries', 'stream=profile,level,pix_fmt,time_base,width,height', output]);
    const [written] = json.streams as { profile: string; level: number; pix_fmt: string; time_base: string; width: number; height: number }[];
    expect(written).to.deep.equal({ profile: probe.video?.profile, level: probe.video?.level, pix_fmt: 'yuv420p', time_base: '1/15360', width: 1280, height: 720 });
  });

  it('will not pay: ranges whose partial GOPs are most of the work are refused with SmartRenderNotWorthIt and nothing is written', async () => {
    const error = await smartRender({
      // Frames 30–74: 30 re-encoded and 30 decoded to reach them, 15 copied.
      input: cutOnlyInput([[1000, 2500]]),
      sourcePaths: new Map([['footage', source]]),
      probes: probes(),
      outputPath: join(dir, 'not-worth-it.mp4'),
      workDir: dir,
      signal: AbortSignal.timeout(30_000),
      onProgress: () => {},
      log: silentLog,
    }).catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(SmartRenderNotWorthIt);
    expect((error as SmartRenderNotWorthIt).reason).to.match(/re-encoding the partial GOPs would be \d+% of a full render's work/);
  });

  describe('eligibility refuses every setting that touches a frame', () => {
    const refusals: [string, Partial<RenderRequestInput>, RegExp][] = [
      ['captions burned in', { settings: { ...input.settings, captions: { style: 'classic', fontSize: 32 } }, captions: [{ outStartMs: 0, outEndMs: 1000, text: 'hello', words: [] }] }, /captions/],
      ['the watermark', { watermark: true }, /watermark/],
      ['a crop', { settings: { ...input.settings, crop: { zoom: 1.5, panX: 0, panY: 0 } } }, /cropped/],
      ['a horizontal flip', { settings: { ...input.settings, flipH: true } }, /flipped/],
      ['a vertical flip', { settings: { ...input.settings, flipV: true } }, /flipped/],
      ['loudness normalisation', { settings: { ...input.settings, audio: { ...input.settings.audio, normalize: true } } }, /loudness/],
      ['noise reduction', { settings: { ...input.settings, audio: { ...input.settings.audio, noiseReduction: true } } }, /noise reduction/],
      ['a main volume other than 100%', { settings: { ...input.settings, audio: { ...input.settings.audio, mainVolumePercent: 80 } } }, /volume/],
      ['censored words muted', { settings: { ...input.settings, censorship: 'mute' }, censored: [{ outStartMs: 100, outEndMs: 400 }] }, /muted/],
      ['a 9:16 letterbox (output size differs from the source)', { settings: { ...input.settings, aspectRatio: '9:16' } }, /scaled or letterboxed/],
      ['a 1080p output from a 720p source (scaled)', { settings: { ...input.settings, resolution: '1080p' } }, /scaled or letterboxed/],
      [
        'an asset overlay',
        {
          assets: [{ sourceId: 'footage', outStartMs: 0, outEndMs: 1000, assetOffsetMs: 0, visualMode: 'overlay', audioMode: 'mute', position: 'center', sizePercent: 30, opacityPercent: 100, x: 0.5, y: 0.5, flipH: false, flipV: false, rotationDeg: 0, volumePercent: 100, duckMain: false }],
        },
        /asset/,
      ],
    ];
    for (const [name, overrides, reason] of refusals) {
      it(`refuses ${name}`, () => {
        const verdict = smartRenderEligibility(cutOnlyInput(ranges, overrides), probes());
        expect(verdict.eligible).to.equal(false);
        expect(verdict.eligible ? '' : verdict.reason).to.match(reason);
      });
    }

    it('refuses an inserted segment and a second source', () => {
      const inserted = cutOnlyInput(ranges);
      inserted.sources.clip = { key: 'media/clip/source', kind: 'video', durationMs: 1000, hasAudio: true };
      inserted.segments.push({ sourceId: 'clip', sourceStartMs: 0, sourceEndMs: 1000, outStartMs: 8900, inserted: true });
      expect(smartRenderEligibility(inserted, new Map([...probes(), ['clip', probe]]))).to.deep.equal({ eligible: false, reason: 'assets are inserted between the segments' });
      inserted.segments[2] = { ...(inserted.segments[2] as RenderInput['segments'][number]), inserted: false };
      expect(smartRenderEligibility(inserted, new Map([...probes(), ['clip', probe]]))).to.deep.equal({ eligible: false, reason: 'the segments come from more than one source' });
    });

    it('refuses a source the output cannot carry: not H.264, not 4:2:0 8-bit, not MP4/MOV, rotated', () => {
      const video = probe.video as NonNullable<MediaProbe['video']>;
      const variants: [MediaProbe, RegExp][] = [
        [{ ...probe, video: { ...video, codec: 'hevc' } }, /not H\.264/],
        [{ ...probe, video: { ...video, pixelFormat: 'yuv420p10le' } }, /not 8-bit 4:2:0/],
        [{ ...probe, container: 'matroska,webm' }, /not MP4 or MOV/],
        [{ ...probe, video: { ...video, rotationDeg: 90 } }, /rotated/],
      ];
      for (const [variant, reason] of variants) {
        const verdict = smartRenderEligibility(input, new Map([['footage', variant]]));
        expect(verdict.eligible ? '' : verdict.reason).to.match(reason);
      }
    });

    it('accepts a cut-only export of the source at its own size, also with censorship but nothing censored, or a caption style but no caption', () => {
      expect(smartRenderEligibility(input, probes())).to.deep.equal({ eligible: true });
      expect(smartRenderEligibility(cutOnlyInput(ranges, { settings: { ...input.settings, censorship: 'bleep' } }), probes())).to.deep.equal({ eligible: true });
      expect(smartRenderEligibility(cutOnlyInput(ranges, { settings: { ...input.settings, captions: { style: 'bold', fontSize: 40 } } }), probes())).to.deep.equal({ eligible: true });
    });
  });

  describe('through the render program', () => {
    let bucket: JobBucket;
    const sourceKey = `media/${randomUUID()}/source`;
    before(async () => {
      bucket = await startJobBucket();
      await bucket.putFile(sourceKey, source, 'video/mp4');
    });
    after(async () => {
      await bucket?.close();
    });

    async function renderProgram(ranges: [number, number][]) {
      const programInput = cutOnlyInput(ranges);
      programInput.sources.footage = { key: sourceKey, kind: 'video', durationMs: 10_000, hasAudio: true };
      const outcome = await runJobProcess({ jobId: randomUUID(), program: 'render', userId: randomUUID(), input: programInput, outputPrefix: `jobs/render/${randomUUID()}` }, bucket.env);
      if (outcome.exitCode !== 0 || !outcome.result) throw new Error(`render failed: ${JSON.stringify(outcome.error)} ${outcome.stderr.slice(-800)}`);
      return renderResultSchema.parse(outcome.result);
    }

    it('a cut-only export takes the smart path, with the plan\'s frames and duration', async () => {
      const rendered = await renderProgram(ranges);
      expect(rendered).to.include({ path: 'smart', frame_count: 267, duration_ms: 8900, width: 1280, height: 720 });
      expect(rendered.fallback_reason).to.equal(undefined);
    });

    it('falls back to the full render when the smart path will not pay, and says why', async () => {
      // 2.1–3.9 s lies inside one GOP: nothing could be copied.
      const rendered = await renderProgram([[2100, 3900]]);
      expect(rendered.path).to.equal('full');
      expect(rendered.frame_count).to.equal(54);
      expect(rendered.fallback_reason).to.equal('no kept range holds a keyframe to copy from, so nothing could be copied');
    });
  });
});

describe('smart render of many seams: one encoder run for up to 8 of them (real ffmpeg)', function () {
  this.timeout(180_000);
  let dir: string;
  let output: string;
  let workDir: string;
  let plan: SmartPlan;
  // 30 s with a keyframe every second; ten kept ranges, each a re-encoded head, one copied
  // GOP and the next GOP's frames up to the last split of decode order, and a re-encoded tail
  // after that split unless the range ends on one: 19 seams here (the third range ends on the
  // split after its keyframe, frame 240), so three encoder runs (8, 8 and 3). The second
  // range's head is one frame (frame 29).
  const ranges: [number, number][] = Array.from({ length: 10 }, (_, index) => [index * 3000 + (index === 1 ? 967 : 700), index * 3000 + (index === 2 ? 2034 : 2100)]);
  const keptSourceFrames = ranges.flatMap(([from, to]) => {
    const first = Math.round((from / 1000) * FPS);
    return Array.from({ length: Math.round((to / 1000) * FPS) - first }, (_, index) => first + index);
  });
  const input = cutOnlyInput(ranges, {}, 30_000);
  let source: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-smart-seams-'));
    source = await makeFlashBeepSource(dir, { seconds: 30, gopFrames: FPS });
    const probe = await probeSource(tools, source, 'footage', AbortSignal.timeout(10_000));
    plan = await sourcePlan(source, probe, input);
    output = join(dir, 'smart.mp4');
    workDir = join(dir, 'work');
    await smartRender({ input, sourcePaths: new Map([['footage', source]]), probes: new Map([['footage', probe]]), outputPath: output, workDir, signal: AbortSignal.timeout(150_000), onProgress: () => {}, log: silentLog });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("the plan's 19 seams come from three encoder runs, 8 files, 8 and 3, one a part", async () => {
    expect(plan.parts.filter((part) => part.kind === 'encode')).to.have.length(19);
    const files = await readdir(workDir);
    expect([0, 1, 2, 3].map((run) => files.filter((file) => file.startsWith(`smart-seams-${run}-`)).length)).to.deep.equal([8, 8, 3, 0]);
  });

  it('every output frame is the source frame it stands for (one-frame seams included), copied GOPs bit-exact, none repeated or lost', async () => {
    const json = await ffprobeJson(['-select_streams', 'v:0', '-count_frames', '-show_entries', 'stream=nb_read_frames', output]);
    expect(Number((json.streams as { nb_read_frames: string }[])[0]?.nb_read_frames)).to.equal(keptSourceFrames.length);
    const reference = ranges.map(([from, to], index) => `[1:v]trim=start_frame=${Math.round((from / 1000) * FPS)}:end_frame=${Math.round((to / 1000) * FPS)},setpts=PTS-STARTPTS[r${index}]`);
    const stats = join(dir, 'psnr.log');
    await run('ffmpeg', [
      '-hide_banner', '-loglevel', 'error', '-i', output, '-i', source,
      '-filter_complex', `${reference.join(';')};${ranges.map((_, index) => `[r${index}]`).join('')}concat=n=${ranges.length}:v=1:a=0[ref];[0:v][ref]psnr=stats_file=${stats}`,
      '-f', 'null', '-',
    ]);
    const psnr = (await readFile(stats, 'utf8')).trim().split('\n').map((line) => {
      const value = /psnr_avg:(\S+)/.exec(line)?.[1];
      return value === 'inf' ? Infinity : Number(value);
    });
    expect(psnr).to.have.length(keptSourceFrames.length);
    // A neighbouring frame of testsrc2 scores under 30 dB; a re-encoded seam frame over 40.
    expect(Math.min(...psnr)).to.be.greaterThan(40);
    // Source frames 30–59 of every range are a copied GOP.
    const copied = keptSourceFrames.flatMap((frame, index) => (frame % 90 >= 30 && frame % 90 < 60 ? [psnr[index]] : []));
    expect(copied).to.have.length(300);
    expect(copied.every((value) => value === Infinity)).to.equal(true);
  });

  it('audio/video offset within one frame at every join: each flash has its beep', async () => {
    const flashes = await flashTimes(output);
    const beeps = await beepOnsets(output);
    // Each range shows the flashes of its source seconds 1 and 2 (a copied and a re-encoded frame).
    expect(flashes).to.have.length(20);
    expect(beeps).to.have.length(flashes.length);
    flashes.forEach((flash, index) => expect(Math.abs((beeps[index] ?? Infinity) - flash)).to.be.at.most(FRAME_SECONDS));
  });

  it('the whole output decodes without an error, and decode timestamps rise at every join', async () => {
    const { stderr } = await run('ffmpeg', ['-hide_banner', '-nostats', '-v', 'error', '-i', output, '-f', 'null', '-']);
    expect(stderr.trim()).to.equal('');
    const json = await ffprobeJson(['-select_streams', 'v:0', '-show_entries', 'packet=dts,pts', output]);
    const packets = json.packets as { dts: number; pts: number }[];
    expect(packets.every((packet, index) => index === 0 || packet.dts > (packets[index - 1]?.dts ?? -Infinity))).to.equal(true);
  });
});

describe('smart render on other sources: a phone-like one and a silent one (real ffmpeg)', function () {
  this.timeout(60_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-smart-phone-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("29.97 fps in a 1/600 time base, no B-frames, mono 44.1 kHz: the full render's frames, no decode error, sound and picture end together", async () => {
    const source = join(dir, 'phone.mp4');
    await run('ffmpeg', [
      '-hide_banner', '-loglevel', 'error', '-y',
      '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=30000/1001:duration=6',
      '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100:duration=6',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-bf', '0', '-g', '30', '-keyint_min', '30', '-sc_threshold', '0', '-pix_fmt', 'yuv420p',
      '-video_track_timescale', '600', '-c:a', 'aac', '-ac', '1', '-shortest', source,
    ]);
    const probe = await probeSource(tools, source, 'phone', AbortSignal.timeout(10_000));
    const probes = new Map([['footage', probe]]);
    const input = cutOnlyInput([[300, 3500], [3900, 6000]]);
    const output = join(dir, 'smart.mp4');
    const result = await smartRender({ input, sourcePaths: new Map([['footage', source]]), probes, outputPath: output, workDir: dir, signal: AbortSignal.timeout(45_000), onProgress: () => {}, log: silentLog });

    const full = planRender(input, probes, renderFiles(dir, new Map([['footage', source]]), join(dir, 'full.mp4'), {}));
    expect(result.frameCount).to.equal(full.frameCount).and.equal(159);
    const { stderr } = await run('ffmpeg', ['-hide_banner', '-nostats', '-v', 'error', '-i', output, '-f', 'null', '-']);
    expect(stderr.trim()).to.equal('');
    const json = await ffprobeJson(['-show_entries', 'stream=codec_type,nb_frames,duration,time_base', output]);
    const [picture, sound] = json.streams as { nb_frames: string; duration: string; time_base: string }[];
    expect(picture).to.include({ nb_frames: '159', time_base: '1/600' });
    expect(Number(sound?.duration)).to.be.closeTo(Number(picture?.duration), 1001 / 30000);
  });

  it('a source without sound gets a silent track as long as the picture, as in the full render', async () => {
    const source = join(dir, 'silent.mp4');
    await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=30:duration=6', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '60', '-pix_fmt', 'yuv420p', source]);
    const probe = await probeSource(tools, source, 'silent', AbortSignal.timeout(10_000));
    const output = join(dir, 'silent-smart.mp4');
    // Both ranges are whole GOPs (the second runs to the end): copied, nothing re-encoded.
    await smartRender({ input: cutOnlyInput([[0, 2000], [3900, 6000]]), sourcePaths: new Map([['footage', source]]), probes: new Map([['footage', probe]]), outputPath: output, workDir: dir, signal: AbortSignal.timeout(30_000), onProgress: () => {}, log: silentLog });
    const json = await ffprobeJson(['-show_entries', 'stream=codec_type,nb_frames,duration', output]);
    const streams = json.streams as { codec_type: string; nb_frames: string; duration: string }[];
    expect(streams.map((stream) => [stream.codec_type, Number(stream.duration)])).to.deep.equal([['video', 4.1], ['audio', 4.1]]);
  });
});
