import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { renderInputSchema, type RenderRequestInput, type RenderResult } from '../../crds/contract/programs/render.ts';
import { runFfmpeg } from '../../hack/fixtures/media.ts';
import { topLevelBoxes } from '../support/media.ts';
import { runJobProcess, startJobBucket } from './job-process.ts';
import type { JobBucket, JobProcessOutcome } from './job-process.ts';

const run = promisify(execFile);
const FPS = 30;
const FRAME = 1 / FPS;
const SAMPLE_RATE = 48_000;

// ------------------------------------------------------------------ reading the output

/** ffmpeg's raw output of a file (video frames or samples) as one buffer. */
function ffmpegBytes(args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', ['-v', 'error', '-nostdin', ...args, '-'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`ffmpeg ${code}: ${stderr}`))));
  });
}

/** The sound, mono float at 48 kHz. */
async function samplesOf(path: string): Promise<Float32Array> {
  const bytes = await ffmpegBytes(['-i', path, '-map', '0:a:0', '-ac', '1', '-ar', String(SAMPLE_RATE), '-f', 'f32le']);
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
}

const window = (samples: Float32Array, from: number, to: number): Float32Array => samples.subarray(Math.round(from * SAMPLE_RATE), Math.round(to * SAMPLE_RATE));

function rmsDb(samples: Float32Array): number {
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return 10 * Math.log10(sum / Math.max(1, samples.length) + 1e-20);
}

/** The largest step between neighbouring samples: a cut without a fade is a big one (a click). */
function largestStep(samples: Float32Array): number {
  let largest = 0;
  for (let index = 1; index < samples.length; index += 1) largest = Math.max(largest, Math.abs((samples[index] ?? 0) - (samples[index - 1] ?? 0)));
  return largest;
}

/** Where sound starts after at least 50 ms of quiet, in seconds. */
function soundOnsets(samples: Float32Array, threshold = 0.05): number[] {
  const onsets: number[] = [];
  let quiet = SAMPLE_RATE;
  for (let index = 0; index < samples.length; index += 1) {
    if (Math.abs(samples[index] ?? 0) > threshold) {
      if (quiet >= SAMPLE_RATE * 0.05) onsets.push(index / SAMPLE_RATE);
      quiet = 0;
    } else quiet += 1;
  }
  return onsets;
}

/** Mean luma of every frame, in order (16×9 grey thumbnails). */
async function frameLumas(path: string): Promise<number[]> {
  const bytes = await ffmpegBytes(['-i', path, '-map', '0:v:0', '-vf', 'scale=16:9,format=gray', '-f', 'rawvideo']);
  const lumas: number[] = [];
  for (let offset = 0; offset + 144 <= bytes.length; offset += 144) lumas.push(bytes.subarray(offset, offset + 144).reduce((sum, value) => sum + value, 0) / 144);
  return lumas;
}

/** Every frame as a 16×9 grey thumbnail, in order. */
async function frameThumbnails(path: string): Promise<Buffer[]> {
  const bytes = await ffmpegBytes(['-i', path, '-map', '0:v:0', '-vf', 'scale=16:9,format=gray', '-f', 'rawvideo']);
  const thumbnails: Buffer[] = [];
  for (let offset = 0; offset + 144 <= bytes.length; offset += 144) thumbnails.push(bytes.subarray(offset, offset + 144));
  return thumbnails;
}

/** The RGB pixels of a region of the frame at `seconds`. */
async function regionPixels(path: string, seconds: number, region: { x: number; y: number; width: number; height: number }): Promise<Buffer> {
  return ffmpegBytes([
    '-ss', String(seconds), '-i', path, '-frames:v', '1',
    '-vf', `crop=${region.width}:${region.height}:${region.x}:${region.y}`, '-pix_fmt', 'rgb24', '-f', 'rawvideo',
  ]);
}

/** The average colour of an 8×8 box around (x, y). */
async function colourAt(path: string, seconds: number, x: number, y: number): Promise<[number, number, number]> {
  const pixels = await regionPixels(path, seconds, { x: x - 4, y: y - 4, width: 8, height: 8 });
  const sum = [0, 0, 0];
  for (let index = 0; index < pixels.length; index += 1) sum[index % 3] = (sum[index % 3] ?? 0) + (pixels[index] ?? 0);
  const count = pixels.length / 3;
  return [Math.round((sum[0] ?? 0) / count), Math.round((sum[1] ?? 0) / count), Math.round((sum[2] ?? 0) / count)];
}

/** Share of a region's pixels that differ clearly from a colour. */
async function shareUnlike(path: string, seconds: number, region: { x: number; y: number; width: number; height: number }, rgb: [number, number, number]): Promise<number> {
  const pixels = await regionPixels(path, seconds, region);
  let unlike = 0;
  for (let index = 0; index + 2 < pixels.length; index += 3) {
    const distance = Math.abs((pixels[index] ?? 0) - rgb[0]) + Math.abs((pixels[index + 1] ?? 0) - rgb[1]) + Math.abs((pixels[index + 2] ?? 0) - rgb[2]);
    if (distance > 120) unlike += 1;
  }
  return unlike / (pixels.length / 3);
}

async function probeJson(path: string): Promise<{ streams: Record<string, string | number>[]; format: { duration: string } }> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path]);
  return JSON.parse(stdout) as { streams: Record<string, string | number>[]; format: { duration: string } };
}

/** Integrated loudness (LUFS) as ffmpeg's EBU R128 meter reads it. */
async function integratedLoudness(path: string): Promise<number> {
  const { stderr } = await run('ffmpeg', ['-nostats', '-hide_banner', '-i', path, '-map', '0:a:0', '-af', 'ebur128', '-f', 'null', '-']);
  const values = [...stderr.matchAll(/^\s+I:\s+(-?[\d.]+) LUFS/gm)].map((match) => Number(match[1]));
  return values.at(-1) ?? Number.NaN;
}


// ------------------------------------------------------------------ the sources

/** 8 s at 30 fps whose picture flashes white on frames 30–32 (+60k) exactly while its sound beeps 1 kHz. */
async function makeFlashAndBeep(dir: string): Promise<string> {
  const path = join(dir, 'flash-beep.mp4');
  await runFfmpeg([
    '-f', 'lavfi', '-i', "testsrc2=size=320x180:rate=30:duration=8,drawbox=x=0:y=0:w=iw:h=ih:color=white:t=fill:enable='between(mod(t,2),0.99,1.09)'",
    '-f', 'lavfi', '-i', "aevalsrc='0.5*sin(2*PI*1000*t)*between(mod(t,2),1,1.1)':s=48000:d=8",
    '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '30', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '192k', '-shortest', path,
  ]);
  return path;
}

/** 4 s: left half red, right half blue, a steady 440 Hz tone. */
async function makeHalves(dir: string): Promise<string> {
  const path = join(dir, 'halves.mp4');
  await runFfmpeg([
    '-f', 'lavfi', '-i', 'color=c=red:size=320x180:rate=30:duration=4,drawbox=x=160:y=0:w=160:h=180:color=blue:t=fill',
    '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=4',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '192k', '-shortest', path,
  ]);
  return path;
}

/** 200×100: left half yellow, right half blue. */
async function makeLogo(dir: string): Promise<string> {
  const path = join(dir, 'logo.png');
  await runFfmpeg(['-f', 'lavfi', '-i', 'color=c=blue:size=200x100,drawbox=x=0:y=0:w=100:h=100:color=yellow:t=fill', '-frames:v', '1', path]);
  return path;
}

async function makeTone(dir: string): Promise<string> {
  const path = join(dir, 'tone.m4a');
  await runFfmpeg(['-f', 'lavfi', '-i', 'sine=frequency=660:sample_rate=48000:duration=3', '-c:a', 'aac', path]);
  return path;
}

// ------------------------------------------------------------------ running the program

const SETTINGS = {
  resolution: '720p',
  aspectRatio: '16:9',
  letterboxColor: '#000000',
  flipH: false,
  flipV: false,
  crop: null,
  audio: { normalize: false, targetLufs: -14, noiseReduction: false, noiseFloorDb: -25, mainVolumePercent: 100 },
  censorship: 'none',
  captions: null,
} as const;

type InputOverrides = Partial<Omit<RenderRequestInput, 'settings'>> & { settings?: Partial<RenderRequestInput['settings']> };

interface RenderRun extends JobProcessOutcome {
  result: RenderResult;
  prefix: string;
  /** The downloaded export (when the job succeeded). */
  output: string;
}

describe('render program, end to end (node job-images/ffmpeg/src/main.ts)', function () {
  this.timeout(60_000);
  let bucket: JobBucket;
  let dir: string;
  const keys: Record<string, string> = {};
  const userId = randomUUID();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-render-test-'));
    const [started, flash, halves, logo, tone] = await Promise.all([startJobBucket(), makeFlashAndBeep(dir), makeHalves(dir), makeLogo(dir), makeTone(dir)]);
    bucket = started;
    for (const [name, path, type] of [
      ['flash', flash, 'video/mp4'],
      ['halves', halves, 'video/mp4'],
      ['logo', logo, 'image/png'],
      ['tone', tone, 'audio/mp4'],
    ] as const) {
      keys[name] = `media/${name}`;
      await bucket.putFile(keys[name], path, type);
    }
  });

  after(async () => {
    await bucket?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** What every render's input lists (the program downloads and probes each). */
  const SOURCES: Record<string, { kind: 'video' | 'audio' | 'image'; durationMs: number | null; hasAudio: boolean }> = {
    flash: { kind: 'video', durationMs: 8000, hasAudio: true },
    halves: { kind: 'video', durationMs: 4000, hasAudio: true },
    logo: { kind: 'image', durationMs: null, hasAudio: false },
    tone: { kind: 'audio', durationMs: 3000, hasAudio: true },
  };

  async function render(name: string, overrides: InputOverrides, options: { env?: Record<string, string>; timeoutSeconds?: number } = {}): Promise<RenderRun> {
    const { settings, ...rest } = overrides;
    // only what the timeline uses, as the api sends it
    const used = new Set([...(overrides.segments ?? []), ...(overrides.assets ?? [])].map((item) => item.sourceId));
    const sources = Object.fromEntries(Object.entries(SOURCES).flatMap(([id, source]) => (used.has(id) ? [[id, { ...source, key: keys[id] }]] : [])));
    const input = renderInputSchema.parse({ sources, settings: { ...SETTINGS, ...settings }, watermark: false, segments: [], ...rest });
    const jobId = randomUUID();
    const prefix = `jobs/render/${jobId}`;
    const outcome = await runJobProcess(
      { jobId, program: 'render', userId, input, outputPrefix: prefix, ...(options.timeoutSeconds ? { timeoutSeconds: options.timeoutSeconds } : {}) },
      { ...bucket.env, CUTROOM_RENDER_PATH: 'full', ...options.env },
    );
    const result = (outcome.result ?? {}) as unknown as RenderResult;
    const output = join(dir, `${name}.mp4`);
    if (outcome.exitCode === 0) await bucket.getFile(result.output_key, output);
    return { ...outcome, result, prefix, output };
  }

  describe('cuts only, 16:9 720p (three stretches of a flash-and-beep source)', () => {
    let job: RenderRun;
    // flashes on source frames 30–32, 90–92, 150–152; the kept frames are 15–44, 81–101, 144–167
    const segments = [
      { sourceId: 'flash', sourceStartMs: 500, sourceEndMs: 1500, outStartMs: 0 },
      { sourceId: 'flash', sourceStartMs: 2700, sourceEndMs: 3400, outStartMs: 1000 },
      { sourceId: 'flash', sourceStartMs: 4800, sourceEndMs: 5600, outStartMs: 1700 },
    ];
    before(async () => {
      job = await render('cuts', { segments });
    });

    it('exits 0 with a small result: the export under the job prefix, its size, frames, duration and path', async () => {
      expect(job.exitCode, job.stderr).to.equal(0);
      expect(job.result).to.deep.equal({
        output_key: `${job.prefix}/export.mp4`,
        size_bytes: job.result.size_bytes,
        duration_ms: 2500,
        width: 1280,
        height: 720,
        frame_count: 75,
        path: 'full',
        loudness_linear: null,
      });
      expect(job.result.size_bytes).to.be.above(10_000);
      expect(await bucket.getJson(`${job.prefix}/result.json`)).to.deep.equal(job.result);
    });

    it('the output lasts the kept segments within one frame and holds exactly the planned frames', async () => {
      const probe = await probeJson(job.output);
      expect(Number(probe.format.duration)).to.be.closeTo(2.5, FRAME);
      const video = probe.streams.find((stream) => stream.codec_type === 'video');
      expect(Number(video?.nb_frames)).to.equal(75);
      expect(Number(video?.duration)).to.be.closeTo(2.5, FRAME);
    });

    it('is H.264 High yuv420p + AAC 48 kHz stereo in MP4 with the index before the media (faststart)', async () => {
      const probe = await probeJson(job.output);
      expect(probe.streams.map((stream) => stream.codec_name)).to.deep.equal(['h264', 'aac']);
      expect(probe.streams[0]).to.include({ profile: 'High', pix_fmt: 'yuv420p', width: 1280, height: 720, r_frame_rate: '30/1' });
      expect(probe.streams[1]).to.include({ sample_rate: '48000', channels: 2 });
      const boxes = await topLevelBoxes(job.output);
      expect(boxes.indexOf('moov')).to.be.within(0, boxes.indexOf('mdat'));
    });

    it('segments start and end on the exact frames their times select: the flashes land on output frames 15–17, 39–41, 57–59', async () => {
      const lumas = await frameLumas(job.output);
      expect(lumas).to.have.length(75);
      const flashes = lumas.flatMap((luma, index) => (luma > 200 ? [index] : []));
      expect(flashes).to.deep.equal([15, 16, 17, 39, 40, 41, 57, 58, 59]);
    });

    it('audio stays in sync after the cuts: every beep starts within one frame of its flash', async () => {
      const onsets = soundOnsets(await samplesOf(job.output));
      expect(onsets).to.have.length(3);
      [15, 39, 57].forEach((frame, index) => expect(onsets[index]).to.be.closeTo(frame * FRAME, FRAME));
    });

    it('progress passes 5, 30 and 85 in order, and the encode step carries the encoder-based time left', () => {
      const progress = job.progress;
      const percents = progress.map((event) => event.progress);
      expect(percents).to.deep.equal([...percents].sort((a, b) => a - b));
      expect(percents[0]).to.be.below(5);
      expect(percents.at(-1)).to.equal(100);
      for (const boundary of [5, 30, 85]) expect(percents.some((percent) => percent >= boundary), `passes ${boundary}`).to.equal(true);
      const steps = progress.map((event) => ({ name: event.step, etaSeconds: event.eta_seconds ?? null }));
      expect([...new Set(steps.map((step) => step.name))]).to.deep.equal(['download', 'probe', 'encode', 'mux', 'upload']);
      expect(steps.some((step) => step.name === 'encode' && step.etaSeconds !== null)).to.equal(true);
    });
  });

  describe('9:16 letterbox, flip, captions, censor mute and a cut through a steady tone', () => {
    let job: RenderRun;
    // a 440 Hz tone cut after frame 30 and before frame 66 (times are frame edges, as the editing core writes them): the phase jumps there, so an unfaded join clicks
    const segments = [
      { sourceId: 'halves', sourceStartMs: 0, sourceEndMs: 1033, outStartMs: 0 },
      { sourceId: 'halves', sourceStartMs: 2200, sourceEndMs: 3500, outStartMs: 1033 },
    ];
    const join = 31 * FRAME;
    before(async () => {
      job = await render('vertical', {
        segments,
        settings: { aspectRatio: '9:16', letterboxColor: '#00ff00', flipH: true, captions: { style: 'boxed', fontSize: 64 }, censorship: 'mute' },
        captions: [{ outStartMs: 0, outEndMs: 1000, text: 'Hello there', words: [] }],
        censored: [{ outStartMs: 1500, outEndMs: 2000 }],
      });
      expect(job.exitCode, job.stderr).to.equal(0);
    });

    it('is 720×1280 with the 16:9 picture centred on bars of the letterbox colour', async () => {
      expect(job.result).to.include({ width: 720, height: 1280, frame_count: 70 });
      const [red, green, blue] = await colourAt(job.output, 1.5, 360, 200);
      expect(green, 'bar').to.be.above(200);
      expect(red + blue, 'bar').to.be.below(80);
    });

    it('flip_h mirrors the picture: the source\'s red left half is on the right', async () => {
      const left = await colourAt(job.output, 1.5, 180, 640);
      const right = await colourAt(job.output, 1.5, 540, 640);
      expect(left[2], 'left is blue').to.be.above(180);
      expect(right[0], 'right is red').to.be.above(180);
    });

    it('captions are visibly burned in while their line is on, and gone after', async () => {
      const area = { x: 0, y: 860, width: 720, height: 220 };
      expect(await shareUnlike(job.output, 0.5, area, [0, 255, 0])).to.be.above(0.03);
      expect(await shareUnlike(job.output, 1.5, area, [0, 255, 0])).to.be.below(0.002);
    });

    it('censor mute silences exactly the censored words; the tone plays either side', async () => {
      const samples = await samplesOf(job.output);
      expect(rmsDb(window(samples, 1.52, 1.98))).to.be.below(-60);
      expect(rmsDb(window(samples, 1.2, 1.45))).to.be.above(-30);
      expect(rmsDb(window(samples, 2.05, 2.3))).to.be.above(-30);
    });

    it('no cut clicks: the largest sample step at the join stays within the tone\'s own', async () => {
      const samples = await samplesOf(job.output);
      const steady = largestStep(window(samples, 0.3, 0.6));
      expect(largestStep(window(samples, join - 0.015, join + 0.015))).to.be.below(steady * 1.5);
    });
  });

  describe('loudness normalisation', () => {
    let job: RenderRun;
    before(async () => {
      job = await render('loud', {
        segments: [{ sourceId: 'halves', sourceStartMs: 0, sourceEndMs: 3000, outStartMs: 0 }],
        settings: { audio: { normalize: true, targetLufs: -16, noiseReduction: true, noiseFloorDb: -25, mainVolumePercent: 50 } },
      });
      expect(job.exitCode, job.stderr).to.equal(0);
    });

    it('two-pass EBU R128 reaches the target within 1 LU, and the result says the second pass was linear', async () => {
      expect(await integratedLoudness(job.output)).to.be.closeTo(-16, 1);
      expect(job.result.loudness_linear).to.equal(true);
      expect(job.stderr).to.include('loudness normalised in linear mode');
    });

    it('the normalised export keeps its length and frames', async () => {
      expect(job.result).to.include({ frame_count: 90, duration_ms: 3000 });
      expect(Number((await probeJson(job.output)).format.duration)).to.be.closeTo(3, FRAME);
    });

    it('a target one gain cannot reach under the true-peak ceiling is normalised dynamically: loudness_linear false and a warning', async () => {
      const loud = await render('too-loud', {
        // short loud beeps in silence: a high peak for their loudness
        segments: [{ sourceId: 'flash', sourceStartMs: 0, sourceEndMs: 4000, outStartMs: 0 }],
        settings: { audio: { normalize: true, targetLufs: -5, noiseReduction: false, noiseFloorDb: -25, mainVolumePercent: 100 } },
      });
      expect(loud.exitCode, loud.stderr).to.equal(0);
      expect(loud.result.loudness_linear).to.equal(false);
      expect(loud.stderr).to.include('loudness normalisation could not run in linear mode');
    });

    it('progress still passes 85 after the encode, through loudness and mux', () => {
      const steps = job.progress.map((event) => ({ name: event.step, progress: event.progress }));
      expect(steps.find((step) => step.name === 'mux')?.progress).to.be.at.least(85);
    });
  });

  describe('asset edits, an inserted image, main volume 0 and the watermark', () => {
    let job: RenderRun;
    before(async () => {
      job = await render('assets', {
        segments: [
          { sourceId: 'halves', sourceStartMs: 0, sourceEndMs: 1000, outStartMs: 0 },
          { sourceId: 'logo', sourceStartMs: 0, sourceEndMs: 500, outStartMs: 1000, inserted: true },
          { sourceId: 'halves', sourceStartMs: 1000, sourceEndMs: 2000, outStartMs: 1500 },
        ],
        settings: { letterboxColor: '#ff00ff', audio: { ...SETTINGS.audio, mainVolumePercent: 0 } },
        assets: [
          {
            sourceId: 'logo', outStartMs: 0, outEndMs: 1000, assetOffsetMs: 0, visualMode: 'overlay', audioMode: 'mix', position: 'top_left',
            sizePercent: 25, opacityPercent: 100, x: 0.5, y: 0.5, flipH: false, flipV: false, rotationDeg: 0, volumePercent: 100, duckMain: false,
          },
          {
            sourceId: 'tone', outStartMs: 1600, outEndMs: 2300, assetOffsetMs: 500, visualMode: 'none', audioMode: 'mix', position: 'center',
            sizePercent: 100, opacityPercent: 100, x: 0.5, y: 0.5, flipH: false, flipV: false, rotationDeg: 0, volumePercent: 100, duckMain: false,
          },
        ],
        watermark: true,
      });
      expect(job.exitCode, job.stderr).to.equal(0);
    });

    it('the insert extends the timeline: 30 + 15 + 30 frames', () => {
      expect(job.result).to.include({ frame_count: 75, duration_ms: 2500 });
    });

    it('main volume 0 is silence; the mixed asset plays only in its span', async () => {
      const samples = await samplesOf(job.output);
      expect(rmsDb(window(samples, 0.05, 1.55))).to.be.below(-60);
      expect(rmsDb(window(samples, 1.65, 2.25))).to.be.above(-35);
      expect(rmsDb(window(samples, 2.35, 2.48))).to.be.below(-60);
    });

    it('the overlay sits top-left at 25% of the width for its span, then the picture shows through', async () => {
      const during = await colourAt(job.output, 0.5, 22 + 60, 22 + 80);
      expect(during[0] + during[1], 'yellow').to.be.above(400);
      expect(during[2], 'yellow').to.be.below(90);
      const after = await colourAt(job.output, 2.0, 22 + 60, 22 + 80);
      expect(after[0], 'red').to.be.above(180);
      expect(after[1], 'red').to.be.below(80);
    });

    it('the inserted image plays its still, letterboxed in the letterbox colour', async () => {
      const still = await colourAt(job.output, 1.25, 320, 360);
      expect(still[0] + still[1], 'yellow half').to.be.above(400);
      const bar = await colourAt(job.output, 1.25, 640, 15);
      expect(bar[0] + bar[2], 'magenta bar').to.be.above(400);
      expect(bar[1], 'magenta bar').to.be.below(80);
    });

    it('the watermark is burned in bottom-right', async () => {
      const corner = { x: 1280 - 260, y: 720 - 70, width: 240, height: 50 };
      expect(await shareUnlike(job.output, 2.0, corner, [0, 0, 255])).to.be.above(0.05);
    });
  });

  describe('stills of one image between cuts of one source (one input each, split into the pieces)', () => {
    let job: RenderRun;
    // flash kept frames 15–44, 81–101, 144–167 around two half-second stills: output frames
    // 0–29 flash (its flash on 15–17), 30–44 still, 45–65 flash (54–56), 66–80 still, 81–104 flash (87–89)
    const segments = [
      { sourceId: 'flash', sourceStartMs: 500, sourceEndMs: 1500, outStartMs: 0 },
      { sourceId: 'logo', sourceStartMs: 0, sourceEndMs: 500, outStartMs: 1000 },
      { sourceId: 'flash', sourceStartMs: 2700, sourceEndMs: 3400, outStartMs: 1500 },
      { sourceId: 'logo', sourceStartMs: 0, sourceEndMs: 500, outStartMs: 2200 },
      { sourceId: 'flash', sourceStartMs: 4800, sourceEndMs: 5600, outStartMs: 2700 },
    ];
    before(async () => {
      job = await render('stills-between-cuts', { segments });
      expect(job.exitCode, job.stderr).to.equal(0);
    });

    it('every piece is on its exact frames: the stills on 30–44 and 66–80, the flashes on 15–17, 54–56, 87–89', async () => {
      expect(job.result).to.include({ frame_count: 105, duration_ms: 3500 });
      const thumbnails = await frameThumbnails(job.output);
      expect(thumbnails).to.have.length(105);
      const still = thumbnails[37] as Buffer;
      const isStill = (thumbnail: Buffer): boolean => thumbnail.every((value, index) => Math.abs(value - (still[index] ?? 0)) <= 6);
      const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, index) => from + index);
      expect(thumbnails.flatMap((thumbnail, index) => (isStill(thumbnail) ? [index] : []))).to.deep.equal([...range(30, 44), ...range(66, 80)]);
      const lumas = await frameLumas(job.output);
      expect(lumas.flatMap((luma, index) => (luma > 200 ? [index] : []))).to.deep.equal([15, 16, 17, 54, 55, 56, 87, 88, 89]);
    });

    it('the sound stays in sync across the stills: every beep within one frame of its flash, silence under the stills', async () => {
      const samples = await samplesOf(job.output);
      const onsets = soundOnsets(samples);
      expect(onsets).to.have.length(3);
      [15, 54, 87].forEach((frame, index) => expect(onsets[index]).to.be.closeTo(frame * FRAME, FRAME));
      expect(rmsDb(window(samples, 31 * FRAME, 44 * FRAME))).to.be.below(-60);
      expect(rmsDb(window(samples, 67 * FRAME, 80 * FRAME))).to.be.below(-60);
    });
  });

  describe('the smart seam', () => {
    it('a cut-only export of a source the output can carry tries the smart path, else says why it fell back', async () => {
      // exactly the output's size and a keyframe every half second: whole GOPs lie inside the kept ranges
      const source = join(dir, 'carried.mp4');
      await runFfmpeg([
        '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=30:duration=3', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=3',
        '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '15', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-movflags', '+faststart', source,
      ]);
      keys.carried = 'media/carried';
      await bucket.putFile(keys.carried, source, 'video/mp4');
      SOURCES.carried = { kind: 'video', durationMs: 3000, hasAudio: true };
      const job = await render(
        'smart',
        { segments: [{ sourceId: 'carried', sourceStartMs: 0, sourceEndMs: 1000, outStartMs: 0 }, { sourceId: 'carried', sourceStartMs: 2000, sourceEndMs: 3000, outStartMs: 1000 }] },
        { env: { CUTROOM_RENDER_PATH: '' } },
      );
      expect(job.exitCode, job.stderr).to.equal(0);
      expect(job.result.frame_count).to.equal(60);
      if (job.result.path === 'full') expect(job.result.fallback_reason, 'a full render of an eligible export says why').to.be.a('string');
      else expect(job.result).not.to.have.property('fallback_reason');
    });

    it('an export that changes frames is rendered in full with no fallback reason (it was never eligible)', async () => {
      const job = await render('never-smart', { segments: [{ sourceId: 'halves', sourceStartMs: 0, sourceEndMs: 500, outStartMs: 0 }], settings: { flipV: true } }, { env: { CUTROOM_RENDER_PATH: '' } });
      expect(job.exitCode, job.stderr).to.equal(0);
      expect(job.result.path).to.equal('full');
      expect(job.result).not.to.have.property('fallback_reason');
    });
  });

  it('a render past its deadline is stopped and ends failed: error.json says job.timed_out, no result', async () => {
    const job = await render(
      'late',
      { segments: [{ sourceId: 'flash', sourceStartMs: 0, sourceEndMs: 8000, outStartMs: 0 }], settings: { resolution: '1080p', audio: { ...SETTINGS.audio, noiseReduction: true } } },
      { timeoutSeconds: 1 },
    );
    expect(job.exitCode).to.equal(1);
    expect(job.error).to.include({ code: 'job.timed_out' });
    expect(await bucket.exists(`${job.prefix}/result.json`)).to.equal(false);
    expect(job.wallSeconds).to.be.below(10);
  });
});
