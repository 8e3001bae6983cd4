/**
 * Render benchmark, on generated 1080p30 H.264 talking-head-like footage with 2-second
 * GOPs (hack/fixtures/talking-head.ts, cached under .data/bench-media), in one run:
 *
 *  (a) cut-only exports of a 5-minute talk at 3 and at 10 cuts a minute on the smart path
 *      against the full path of the same render (CUTROOM_RENDER_PATH=full), same timeline
 *      and output settings, the two alternated: speed-up ≥ 10× and ≥ 4× (issue 42), the same
 *      duration, sound and picture within one frame (claps). Each cut is a shortened pause
 *      (420 ms kept, 60/40); each rate is measured with the cuts as placed (`_unsnapped`) and
 *      slid onto the source's keyframes as the editing core does by default;
 *  (b) a full export (9:16 letterbox, captions, loudness) against one hand-written ffmpeg
 *      command line making the same output, both loudness passes on both sides: ≥ 0.9× its speed;
 *  (c) the render's peak memory, its node process and ffmpeg children together;
 *  (d) memory as the pieces grow: exports of N one-second pieces (N = 10, 50, 100, 250, the
 *      EXPORT_MAX_SEGMENTS cap), once as N stills of one 1080p image, once as cuts alternating
 *      between two videos, on the full path; the ffmpeg child's peak resident memory (its
 *      VmHWM) and the render's time, each against N = 10 in the same run.
 *
 *   node bench/render/run.ts                 (a 5-minute source for (a), a 2-minute one for (b))
 *   BENCH_QUICK=1 node bench/render/run.ts   (30-second sources, to iterate)
 *   node bench/render/run.ts --cut-only      ((a) alone; --rounds N pairs of smart and full renders each, the median taken;
 *                                            --snapped-only: the snapped cases only)
 *   node bench/render/run.ts --pieces-only   ((d) alone; --pieces 10,50 to choose the counts, --case stills|alternating)
 */
import { execFile, spawn } from 'node:child_process';
import { readdir, readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { outputFrameSize, type RenderCaption, type RenderRequestInput } from '../../crds/contract/programs/render.ts';
import { captionsAss } from '../../job-images/ffmpeg/src/render/captions-ass.ts';
import { CLAP_SQUARE_FRACTION, CLAP_TONE_HZ, makeTalkingHead } from '../../hack/fixtures/talking-head.ts';
import type { LocalRenderResult } from '../../job-images/ffmpeg/src/render/render-export.ts';
import { CUT_ONLY_SETTINGS, keptRangesRenderInput } from '../../hack/fixtures/render-input.ts';
import { makeH264Video } from '../../hack/fixtures/bench-media.ts';
import type { RenderOnceSpec } from './render-once.ts';
import { snapRemovedToKeyframe } from '../../crds/contract/editing/keyframe-snap.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const FPS = 30;
const FOOTAGE = { seconds: QUICK ? 30 : 120, width: 1920, height: 1080, fps: FPS, gopSeconds: 2, clapEverySeconds: 2.5 };
/** The cut-only case's talk: 5 minutes, as issue 42's audit measured. */
const TALK = { ...FOOTAGE, seconds: QUICK ? 30 : 300 };
const TARGET = { smartSpeedup: { 3: 10, 10: 4 } as Record<number, number>, handwrittenSpeed: 0.9, avOffsetMs: 1000 / FPS, durationDiffFrames: 0, peakRssMb: 1024, piecesRssRatio: 2, piecesTimePerSecondRatio: 1.5 };
/** (a)'s cases: each cut rate with the editing core's keyframe snapping (the default, whose figures carry issue 42's targets) and without it. */
const CUT_CASES = (process.argv.includes('--snapped-only') ? [true] : [false, true]).flatMap((snap) => [3, 10].map((perMinute) => ({ perMinute, snap })));
const PIECES_ONLY = process.argv.includes('--pieces-only');
const CUT_ONLY = process.argv.includes('--cut-only');
/** Smart and full renders of each cut-only timeline, alternated; the medians are compared. */
const ROUNDS = process.argv.includes('--rounds') ? Number(process.argv[process.argv.indexOf('--rounds') + 1]) : 1;
/** --case stills|alternating: one of (d)'s two cases only. */
const PIECES_CASE = process.argv.includes('--case') ? process.argv[process.argv.indexOf('--case') + 1] : undefined;
const PIECE_COUNTS = (() => {
  const at = process.argv.indexOf('--pieces');
  const counts = at >= 0 ? (process.argv[at + 1] ?? '').split(',').map(Number) : [10, 50, 100, 250];
  if (counts.length === 0 || counts.some((count) => !Number.isInteger(count) || count < 2)) throw new Error('--pieces takes counts of 2 or more, comma-separated');
  return counts;
})();
const RENDER_ONCE = new URL('./render-once.ts', import.meta.url).pathname;
const FONTS_DIR = process.env.CUTROOM_FONTS_DIR || '/usr/share/fonts/truetype/dejavu';
const run = promisify(execFile);

// ------------------------------------------------------------------ the timelines

/** Three cuts a minute, one in every 20 s, at places and of lengths that fall nowhere near a keyframe. */
function keptRanges(seconds: number): [number, number][] {
  return rangesAround(seconds, 20, [8.3, 7.93, 6.55, 9.1, 5.41, 8.77], [2.6, 3.35, 1.7, 2.2, 3.05, 1.45]);
}

/**
 * A talk's pauses cut at `perMinute` cuts a minute: one cut in every 60 / perMinute s, at
 * offsets and of lengths (0.45–1.6 s, pauses) that repeat with no relation to the 2 s GOPs.
 */
function pauseCuts(seconds: number, perMinute: number): [number, number][] {
  if (perMinute === 3) return keptRanges(seconds);
  const every = 60 / perMinute;
  const offsets = [2.13, 3.71, 1.46, 4.02, 2.89, 3.27, 1.94];
  const lengths = [0.62, 1.35, 0.45, 0.98, 1.6, 0.77, 1.12];
  return rangesAround(seconds, every, offsets.map((offset) => (offset * every) / 6), lengths);
}

function rangesAround(seconds: number, every: number, offsets: readonly number[], lengths: readonly number[]): [number, number][] {
  const ranges: [number, number][] = [];
  let from = 0;
  for (let cut = 0; (cut + 1) * every <= seconds; cut += 1) {
    const start = cut * every + (offsets[cut % offsets.length] ?? every / 2);
    ranges.push([from, Math.round(start * 1000)]);
    from = Math.round((start + (lengths[cut % lengths.length] ?? 1)) * 1000);
  }
  ranges.push([from, seconds * 1000]);
  return ranges;
}

/**
 * The pause each cut shortens: its removed range with 420 ms kept (pacing 50), 60 % of it
 * before the cut (after a sentence end), as the analysis places a shortened pause.
 */
const KEPT_PAUSE = { ms: 420, before: 0.6 };

/**
 * The cuts as the editing core sends them with keyframe snapping on (its default): each
 * cut's removed range slid within its pause onto a keyframe of the source by the contract's
 * rule (crds/contract/editing/keyframe-snap.ts), the kept ranges following.
 */
function snappedCuts(ranges: readonly [number, number][], keyframesMs: readonly number[]): [number, number][] {
  const snapped = ranges.map(([from, to]): [number, number] => [from, to]);
  for (let cut = 0; cut + 1 < snapped.length; cut += 1) {
    const before = snapped[cut] as [number, number];
    const after = snapped[cut + 1] as [number, number];
    const keptBefore = Math.round(KEPT_PAUSE.ms * KEPT_PAUSE.before);
    const removed = { startMs: before[1], endMs: after[0] };
    const room = { startMs: removed.startMs - keptBefore, endMs: removed.endMs + KEPT_PAUSE.ms - keptBefore };
    const slid = snapRemovedToKeyframe(removed, room, keyframesMs);
    before[1] = slid.startMs;
    after[0] = slid.endMs;
  }
  return snapped;
}

/** The source's keyframes (key packets' presentation times), ms, ascending. */
async function keyframeTimesMs(path: string): Promise<number[]> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', path], { maxBuffer: 64 << 20 });
  return stdout
    .split('\n')
    .filter((line) => line.includes('K'))
    .map((line) => Number(line.split(',')[0]) * 1000)
    .sort((a, b) => a - b);
}

const WORDS = ['today', 'we', 'cut', 'the', 'pauses', 'out', 'of', 'this', 'video', 'and', 'keep', 'every', 'word'];

/** A caption line every 2.5 s of output, four words each, word times spread over the line. */
function captionsFor(outputMs: number): RenderCaption[] {
  const captions: RenderCaption[] = [];
  for (let start = 0, line = 0; start + 2000 <= outputMs; start += 2500, line += 1) {
    const words = Array.from({ length: 4 }, (_, index) => ({ outStartMs: start + index * 500, outEndMs: start + index * 500 + 450, text: WORDS[(line * 4 + index) % WORDS.length] ?? 'word' }));
    captions.push({ outStartMs: start, outEndMs: start + 2000, text: words.map((word) => word.text).join(' '), words });
  }
  return captions;
}

function renderInput(ranges: readonly [number, number][], settings: Partial<RenderRequestInput['settings']>, extra: Partial<RenderRequestInput> = {}, sourceSeconds = FOOTAGE.seconds): RenderRequestInput {
  return keptRangesRenderInput({ sourceKey: 'bench/footage', sourceDurationMs: sourceSeconds * 1000, ranges, settings, extra });
}

// ------------------------------------------------------------------ measuring

/** Resident memory of a process and all its descendants, and the largest peak (VmHWM) of an ffmpeg among them, from /proc (bytes). */
async function treeRss(root: number): Promise<{ total: number; ffmpegPeak: number }> {
  const parents = new Map<number, number>();
  const rss = new Map<number, number>();
  const ffmpegs: number[] = [];
  for (const entry of await readdir('/proc')) {
    // Descendants were started after the root, so (short of pid wrap-around) have larger pids: fewer files to read.
    if (!/^\d+$/.test(entry) || Number(entry) < root) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): state, ppid, … rss is field 24.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === 'ffmpeg') ffmpegs.push(Number(entry));
      parents.set(Number(entry), Number(fields[1]));
      rss.set(Number(entry), Number(fields[21]) * 4096);
    } catch {
      // the process ended while we looked
    }
  }
  const inTree = (pid: number): boolean => {
    for (let at: number | undefined = pid; at !== undefined && at > 1; at = parents.get(at)) if (at === root) return true;
    return false;
  };
  let total = 0;
  for (const [pid, bytes] of rss) if (inTree(pid)) total += bytes;
  let ffmpegPeak = 0;
  for (const pid of ffmpegs.filter(inTree)) {
    try {
      const hwm = /VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
      ffmpegPeak = Math.max(ffmpegPeak, Number(hwm?.[1] ?? 0) * 1024);
    } catch {
      // ended
    }
  }
  return { total, ffmpegPeak };
}

interface Timed<T> {
  seconds: number;
  peakRssBytes: number;
  /** The largest peak resident memory (VmHWM) of one ffmpeg child, as last read before it ended (sampled). */
  ffmpegPeakBytes: number;
  value: T;
}

/** How often the process tree's memory is read: often enough for ffmpeg's peaks, rarely enough to cost the render nothing measurable. */
const RSS_SAMPLE_MS = 200;

/** Runs a command to its end, timing it and sampling its process tree's memory. */
function measure(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Timed<{ stdout: string; stderr: string }>> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    let ffmpegPeak = 0;
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    let sampling = false;
    const sampler = setInterval(() => {
      if (!child.pid || sampling) return;
      sampling = true;
      void treeRss(child.pid)
        .then((bytes) => {
          peak = Math.max(peak, bytes.total);
          ffmpegPeak = Math.max(ffmpegPeak, bytes.ffmpegPeak);
        })
        .finally(() => (sampling = false));
    }, RSS_SAMPLE_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      clearInterval(sampler);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code !== 0) reject(new Error(`${command} ${args.slice(0, 3).join(' ')}… exited ${code}: ${stderr.slice(-1500)}`));
      else resolve({ seconds, peakRssBytes: peak, ffmpegPeakBytes: ffmpegPeak, value: { stdout, stderr } });
    });
  });
}

type RenderOutcome = Omit<LocalRenderResult, 'plan'> & { inputs: number | null; cpuSeconds: number };

async function renderOnce(dir: string, name: string, input: RenderRequestInput, source: string | Record<string, string>, env: Record<string, string> = {}): Promise<Timed<RenderOutcome> & { output: string }> {
  const output = join(dir, `${name}.mp4`);
  const sourcePaths = typeof source === 'string' ? { footage: source } : source;
  const spec: RenderOnceSpec = { input, sourcePaths, outputPath: output, workDir: join(dir, `${name}-work`) };
  const specPath = join(dir, `${name}.json`);
  await writeFile(specPath, JSON.stringify(spec));
  const timed = await measure(process.execPath, [RENDER_ONCE, specPath], { ...process.env, CUTROOM_FONTS_DIR: FONTS_DIR, ...env });
  await rm(spec.workDir, { recursive: true, force: true });
  return { ...timed, output, value: JSON.parse(timed.value.stdout.trim().split('\n').at(-1) ?? '{}') as RenderOutcome };
}

async function probe(path: string): Promise<{ width: number; height: number; frames: number; videoSeconds: number; audioSeconds: number; seconds: number }> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,width,height,nb_frames,duration:format=duration', '-print_format', 'json', path]);
  const json = JSON.parse(stdout) as { streams: { codec_type: string; width?: number; height?: number; nb_frames?: string; duration?: string }[]; format: { duration: string } };
  const video = json.streams.find((stream) => stream.codec_type === 'video');
  const audio = json.streams.find((stream) => stream.codec_type === 'audio');
  return {
    width: video?.width ?? 0,
    height: video?.height ?? 0,
    frames: Number(video?.nb_frames),
    videoSeconds: Number(video?.duration),
    audioSeconds: Number(audio?.duration),
    seconds: Number(json.format.duration),
  };
}

/** Each clap's picture (the corner square white) and sound (the tone's onset), in output seconds. */
async function claps(path: string): Promise<{ flashes: number[]; beeps: number[] }> {
  const square = Math.floor(FOOTAGE.height * CLAP_SQUARE_FRACTION) - 4;
  const [pictures, sounds] = await Promise.all([
    run('ffprobe', ['-v', 'error', '-f', 'lavfi', '-i', `movie=${path},crop=${square}:${square}:0:0,signalstats`, '-show_entries', 'frame=pts_time:frame_tags=lavfi.signalstats.YAVG', '-print_format', 'json'], { maxBuffer: 64 << 20 }),
    run('ffmpeg', ['-hide_banner', '-nostats', '-i', path, '-map', '0:a', '-af', `highpass=f=${CLAP_TONE_HZ / 2},highpass=f=${CLAP_TONE_HZ / 2},highpass=f=${CLAP_TONE_HZ / 2},silencedetect=n=-30dB:d=0.1`, '-f', 'null', '-']),
  ]);
  const frames = (JSON.parse(pictures.stdout) as { frames: { pts_time: string; tags: Record<string, string> }[] }).frames;
  const flashes = frames.filter((frame) => Number(frame.tags['lavfi.signalstats.YAVG']) > 200).map((frame) => Number(frame.pts_time));
  const ends = [...sounds.stderr.matchAll(/silence_end: ([\d.]+)/g)].map((match) => Number(match[1]));
  const starts = [...sounds.stderr.matchAll(/silence_start: ([\d.]+)/g)].map((match) => Number(match[1]));
  return { flashes, beeps: ends.filter((end) => starts.some((start) => start > end)) };
}

/** The largest distance from a clap's flash to its sound, in ms (the nearest onset to each flash). */
function worstOffsetMs({ flashes, beeps }: { flashes: number[]; beeps: number[] }): number {
  if (flashes.length === 0) return Number.POSITIVE_INFINITY;
  return Math.max(...flashes.map((flash) => Math.min(...beeps.map((beep) => Math.abs(beep - flash))) * 1000));
}

function result(metric: string, value: number, op: '>=' | '<=', target: number, digits = 2): string {
  const ok = op === '>=' ? value >= target : value <= target;
  return `RESULT ${metric} ${value.toFixed(digits)} (target ${op} ${target}) ${ok ? 'ok' : 'miss'}`;
}

// ------------------------------------------------------------------ (b) the hand-written command

/** ffmpeg's seconds: six decimals at most. */
const sec = (seconds: number): string => String(Math.round(seconds * 1e6) / 1e6);

/**
 * What a person fluent in ffmpeg would type for the full export: each kept range, its
 * ends snapped to frame starts, read by input seeking, trimmed, fitted into 1080x1920
 * with bars, joined, captions burned in; the sound joined and normalised. Pass 1
 * measures the loudness of the joined sound.
 */
function handwrittenCommands(source: string, ranges: readonly [number, number][], assPath: string, output: string, loudnorm: string) {
  const snapped = ranges.map(([from, to]) => [Math.ceil((from / 1000) * FPS - 1e-6) / FPS, Math.ceil((to / 1000) * FPS - 1e-6) / FPS] as const);
  // Seek half a frame early so the first frame is never lost to rounding; trim from there.
  const halfFrame = 0.5 / FPS;
  const inputs = snapped.flatMap(([from, to]) => ['-ss', sec(from - halfFrame), '-t', sec(to - from + 1), '-i', source]);
  const cutSound = snapped.map(([from, to], index) => `[${index}:a]atrim=${sec(halfFrame)}:${sec(halfFrame + to - from)},asetpts=PTS-STARTPTS[a${index}]`);
  const joinSound = `${snapped.map((_, index) => `[a${index}]`).join('')}concat=n=${snapped.length}:v=0:a=1`;
  const measure = ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'info', ...inputs, '-filter_complex', `${cutSound.join(';')};${joinSound},${loudnorm}:print_format=json`, '-f', 'null', '-'];
  const render = (measured: Record<string, string>) => {
    const pictures = snapped.map(
      ([from, to], index) => `[${index}:v]trim=0:${sec(to - from)},setpts=PTS-STARTPTS,fps=${FPS},scale=1080:608,setsar=1,pad=1080:1920:0:656:color=black[v${index}]`,
    );
    const joined = snapped.map((_, index) => `[v${index}][a${index}]`).join('');
    const graph = [
      ...pictures,
      ...cutSound,
      `${joined}concat=n=${snapped.length}:v=1:a=1[vcat][acat]`,
      `[vcat]ass=${assPath}:fontsdir=${FONTS_DIR},format=yuv420p[vout]`,
      `[acat]${loudnorm}:measured_I=${measured.input_i}:measured_TP=${measured.input_tp}:measured_LRA=${measured.input_lra}:measured_thresh=${measured.input_thresh}:offset=${measured.target_offset}:linear=true,aresample=48000[aout]`,
    ];
    return [
      '-hide_banner', '-nostdin', '-nostats', '-loglevel', 'error', '-y', ...inputs,
      '-filter_complex', graph.join(';'),
      '-map', '[vout]', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-profile:v', 'high', '-pix_fmt', 'yuv420p', '-r', String(FPS),
      '-map', '[aout]', '-c:a', 'aac', '-b:a', '192k', '-ar', '48000', '-ac', '2',
      '-movflags', '+faststart', output,
    ];
  };
  return { measure, render };
}

// ------------------------------------------------------------------ (d) pieces

const PIECE_MS = 1000;
const PIECES_FPS = 30;

/** N one-second pieces of one still: each a segment of the image, as N still canvases of one picture. */
function stillsInput(count: number): RenderRequestInput {
  return {
    sources: { still: { key: 'bench/still', kind: 'image', durationMs: null, hasAudio: false } },
    segments: Array.from({ length: count }, (_, index) => ({ sourceId: 'still', sourceStartMs: 0, sourceEndMs: PIECE_MS, outStartMs: index * PIECE_MS, inserted: false })),
    settings: { ...CUT_ONLY_SETTINGS, resolution: '720p' },
    watermark: false,
  };
}

/** N one-second pieces alternating between two videos, each moving forward through its own (a 0.5 s gap between a video's pieces). */
function alternatingInput(count: number, sourceSeconds: number): RenderRequestInput {
  const segments = Array.from({ length: count }, (_, index) => {
    const round = Math.floor(index / 2);
    const sourceStartMs = round * (PIECE_MS + 500);
    return { sourceId: index % 2 === 0 ? 'left' : 'right', sourceStartMs, sourceEndMs: sourceStartMs + PIECE_MS, outStartMs: index * PIECE_MS, inserted: false };
  });
  const source = { kind: 'video' as const, durationMs: sourceSeconds * 1000, hasAudio: true };
  return {
    sources: { left: { key: 'bench/left', ...source }, right: { key: 'bench/right', ...source } },
    segments,
    settings: { ...CUT_ONLY_SETTINGS, resolution: '720p' },
    watermark: false,
  };
}

async function piecesCase(dir: string): Promise<string[]> {
  const most = Math.max(...PIECE_COUNTS);
  const sourceSeconds = Math.ceil((most / 2) * 1.5) + 2;
  process.stdout.write(`\n(d) pieces: ${PIECE_COUNTS.join(', ')} one-second pieces, 720p output, full path; making a 1080p still and two ${sourceSeconds} s 640x360p${PIECES_FPS} videos…\n`);
  const still = join(dir, 'still.png');
  await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1920x1080:rate=1', '-frames:v', '1', still]);
  const video = { width: 640, height: 360, seconds: sourceSeconds, fps: PIECES_FPS, preset: 'ultrafast' };
  const [left, right] = await Promise.all([makeH264Video(dir, 'left.mp4', video), makeH264Video(dir, 'right.mp4', video)]);
  const cases: { name: string; input: (count: number) => RenderRequestInput; sources: Record<string, string> }[] = [
    { name: 'stills', input: stillsInput, sources: { still } },
    { name: 'alternating', input: (count: number) => alternatingInput(count, sourceSeconds), sources: { left, right } },
  ];
  const results: string[] = [];
  for (const piece of cases.filter((each) => PIECES_CASE === undefined || each.name === PIECES_CASE)) {
    const rows: { count: number; seconds: number; ffmpegMb: number; treeMb: number; frames: number; inputs: number }[] = [];
    for (const count of PIECE_COUNTS) {
      const rendered = await renderOnce(dir, `${piece.name}-${count}`, piece.input(count), piece.sources, { CUTROOM_RENDER_PATH: 'full' });
      const probed = await probe(rendered.output);
      const inputs = rendered.value.inputs ?? Number.NaN;
      const row = { count, seconds: rendered.seconds, ffmpegMb: rendered.ffmpegPeakBytes / 1e6, treeMb: rendered.peakRssBytes / 1e6, frames: probed.frames, inputs };
      rows.push(row);
      if (probed.frames !== (count * PIECE_MS * PIECES_FPS) / 1000) throw new Error(`${piece.name} ${count}: ${probed.frames} frames, not ${(count * PIECE_MS * PIECES_FPS) / 1000}`);
      await rm(rendered.output, { force: true });
      const base = rows[0] as (typeof rows)[number];
      if (rows.length === 1) process.stdout.write(`  ${piece.name}:\n`);
      process.stdout.write(
        `    N=${String(row.count).padStart(3)}  ffmpeg inputs ${String(row.inputs).padStart(3)}  ffmpeg peak RSS ${row.ffmpegMb.toFixed(0).padStart(5)} MB (${(row.ffmpegMb / base.ffmpegMb).toFixed(2)}× N=${base.count})` +
          `  tree ${row.treeMb.toFixed(0).padStart(5)} MB  time ${row.seconds.toFixed(1).padStart(6)} s (${((row.seconds / row.count) / (base.seconds / base.count)).toFixed(2)}× N=${base.count} per output second)  ${row.frames} frames\n`,
      );
    }
    const base = rows[0] as (typeof rows)[number];
    const last = rows.at(-1) as (typeof rows)[number];
    results.push(
      result(`render_${piece.name}_peak_rss_ratio_${last.count}_vs_${base.count}`, last.ffmpegMb / base.ffmpegMb, '<=', TARGET.piecesRssRatio),
      result(`render_${piece.name}_time_per_second_ratio_${last.count}_vs_${base.count}`, last.seconds / last.count / (base.seconds / base.count), '<=', TARGET.piecesTimePerSecondRatio),
    );
  }
  process.stdout.write('\n');
  return results;
}

// ------------------------------------------------------------------ (a) to (c)

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** (a) smart against full, the same cut-only export of the 5-minute talk, at 3 and at 10 cuts a minute. */
async function cutOnlyCases(dir: string): Promise<{ results: string[]; peakRssBytes: number }> {
  process.stdout.write(`talk: ${TALK.seconds} s of ${TALK.width}x${TALK.height}p${FPS}, 2 s GOPs (${cpus().length} CPUs), ${ROUNDS} round(s) of smart and full alternated…\n`);
  const source = await makeTalkingHead(TALK);
  const keyframesMs = await keyframeTimesMs(source);
  const results: string[] = [];
  let peakRssBytes = 0;
  for (const { perMinute, snap } of CUT_CASES) {
    const asCut = pauseCuts(TALK.seconds, perMinute);
    const ranges = snap ? snappedCuts(asCut, keyframesMs) : asCut;
    const label = `${perMinute}_cuts_per_minute${snap ? '' : '_unsnapped'}`;
    const keptMs = ranges.reduce((total, [from, to]) => total + to - from, 0);
    const cutOnly = renderInput(ranges, {}, {}, TALK.seconds);
    const smartSeconds: number[] = [];
    const fullSeconds: number[] = [];
    const smartCpu: number[] = [];
    const fullCpu: number[] = [];
    let smart: Awaited<ReturnType<typeof renderOnce>> | undefined;
    let full: Awaited<ReturnType<typeof renderOnce>> | undefined;
    for (let round = 0; round < ROUNDS; round += 1) {
      smart = await renderOnce(dir, `smart-${perMinute}`, cutOnly, source);
      if (smart.value.path !== 'smart') throw new Error(`the cut-only export did not take the smart path: ${smart.value.fallbackReason ?? 'not eligible'}`);
      full = await renderOnce(dir, `full-${perMinute}`, cutOnly, source, { CUTROOM_RENDER_PATH: 'full' });
      smartSeconds.push(smart.seconds);
      fullSeconds.push(full.seconds);
      smartCpu.push(smart.value.cpuSeconds);
      fullCpu.push(full.value.cpuSeconds);
      peakRssBytes = Math.max(peakRssBytes, smart.peakRssBytes, full.peakRssBytes);
    }
    if (!smart || !full) throw new Error('--rounds takes a count of 1 or more');
    const [smartProbe, fullProbe, smartClaps, fullClaps] = await Promise.all([probe(smart.output), probe(full.output), claps(smart.output), claps(full.output)]);
    const speedup = median(fullSeconds) / median(smartSeconds);
    const durationDiffFrames = Math.abs(smartProbe.seconds - fullProbe.seconds) * FPS;
    const smartOffset = worstOffsetMs(smartClaps);
    const fullOffset = worstOffsetMs(fullClaps);
    const sameClaps = smartClaps.flashes.length === fullClaps.flashes.length && smartClaps.flashes.every((time, index) => Math.abs(time - (fullClaps.flashes[index] ?? Infinity)) < 0.5 / FPS);
    const times = (values: number[]): string => values.map((value) => value.toFixed(2)).join(', ');
    process.stdout.write(
      [
        `\n(a) cut-only export, ${perMinute} cuts a minute, ${snap ? `edges snapped to keyframes (${ranges.filter(([from], index) => from !== asCut[index]?.[0]).length} of ${ranges.length - 1} cuts slid)` : 'edges as cut (snapping off)'}: ${ranges.length - 1} cuts, ${ranges.length} kept ranges, ${(keptMs / 1000).toFixed(2)} s kept`,
        `  smart path: ${times(smartSeconds)} s (CPU ${times(smartCpu)} s)   ${smartProbe.frames} frames, ${smartProbe.seconds.toFixed(3)} s (picture ${smartProbe.videoSeconds.toFixed(3)}, sound ${smartProbe.audioSeconds.toFixed(3)}), worst clap offset ${smartOffset.toFixed(1)} ms over ${smartClaps.flashes.length} claps`,
        `  full path:  ${times(fullSeconds)} s (CPU ${times(fullCpu)} s)   ${fullProbe.frames} frames, ${fullProbe.seconds.toFixed(3)} s (picture ${fullProbe.videoSeconds.toFixed(3)}, sound ${fullProbe.audioSeconds.toFixed(3)}), worst clap offset ${fullOffset.toFixed(1)} ms over ${fullClaps.flashes.length} claps`,
        `  peak memory (node and ffmpeg children, sampled): smart ${(smart.peakRssBytes / 1e6).toFixed(0)} MB, full ${(full.peakRssBytes / 1e6).toFixed(0)} MB`,
        `  speed-up ${speedup.toFixed(2)}× (medians; in CPU time ${(median(fullCpu) / median(smartCpu)).toFixed(2)}×), claps on the same frames in both: ${sameClaps ? 'yes' : 'NO'}\n`,
      ].join('\n'),
    );
    results.push(
      result(`render_smart_speedup_vs_full_${label}`, speedup, '>=', TARGET.smartSpeedup[perMinute] ?? 1),
      result(`render_smart_duration_diff_frames_${label}`, durationDiffFrames, '<=', TARGET.durationDiffFrames),
      result(`render_smart_av_offset_ms_${label}`, smartOffset, '<=', Number(TARGET.avOffsetMs.toFixed(1)), 1),
      result(`render_smart_same_clap_frames_${label}`, sameClaps ? 1 : 0, '>=', 1, 0),
    );
    await rm(smart.output, { force: true });
    await rm(full.output, { force: true });
  }
  return { results, peakRssBytes };
}

async function footageCases(dir: string): Promise<string[]> {
  const cutOnly = await cutOnlyCases(dir);
  process.stdout.write(`\nfootage: ${FOOTAGE.seconds} s of ${FOOTAGE.width}x${FOOTAGE.height}p${FPS}, 2 s GOPs…\n`);
  const source = await makeTalkingHead(FOOTAGE);
  const ranges = keptRanges(FOOTAGE.seconds);
  const keptMs = ranges.reduce((total, [from, to]) => total + to - from, 0);
  process.stdout.write(`timeline: ${ranges.length - 1} cuts, ${ranges.length} kept ranges, ${(keptMs / 1000).toFixed(2)} s kept\n`);
  let peakRss = cutOnly.peakRssBytes;

  // (b) full export against one hand-written command (two loudness passes on both sides)
  const size = outputFrameSize('1080p', '9:16');
  const captions = captionsFor(keptMs);
  const fullExport = renderInput(ranges, { aspectRatio: '9:16', captions: { style: 'classic', fontSize: 56 }, audio: { normalize: true, targetLufs: -14, noiseReduction: false, noiseFloorDb: -50, mainVolumePercent: 100 } }, { captions });
  const program = await renderOnce(dir, 'export', fullExport, source);
  peakRss = Math.max(peakRss, program.peakRssBytes);
  const assPath = join(dir, 'captions.ass');
  await writeFile(assPath, captionsAss({ ...size, style: 'classic', fontSize: 56 }, captions));
  const handwrittenOutput = join(dir, 'handwritten.mp4');
  const commands = handwrittenCommands(source, ranges, assPath, handwrittenOutput, 'loudnorm=I=-14:TP=-1.5:LRA=11');
  const pass1 = await measure('ffmpeg', commands.measure);
  const report = pass1.value.stderr.slice(pass1.value.stderr.lastIndexOf('{'), pass1.value.stderr.lastIndexOf('}') + 1);
  const pass2 = await measure('ffmpeg', commands.render(JSON.parse(report) as Record<string, string>));
  const handwrittenSeconds = pass1.seconds + pass2.seconds;
  const [programProbe, handwrittenProbe] = await Promise.all([probe(program.output), probe(handwrittenOutput)]);
  const handwrittenSpeed = handwrittenSeconds / program.seconds;
  process.stdout.write(
    [
      `(b) full export: 9:16 letterbox, ${captions.length} caption lines, loudness ${fullExport.settings.audio.targetLufs} LUFS`,
      `  render program:  ${program.seconds.toFixed(2)} s   ${programProbe.width}x${programProbe.height}, ${programProbe.frames} frames, ${programProbe.seconds.toFixed(3)} s (path ${program.value.path})`,
      `  hand-written:    ${handwrittenSeconds.toFixed(2)} s   ${handwrittenProbe.width}x${handwrittenProbe.height}, ${handwrittenProbe.frames} frames, ${handwrittenProbe.seconds.toFixed(3)} s (measure ${pass1.seconds.toFixed(2)} s + render ${pass2.seconds.toFixed(2)} s)`,
      `  speed: ${handwrittenSpeed.toFixed(2)}× the hand-written command's`,
      `  pass 2 as typed: ffmpeg ${commands.render({ input_i: 'I', input_tp: 'TP', input_lra: 'LRA', input_thresh: 'T', target_offset: 'O' }).map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg}'`)).join(' ')}\n`,
    ].join('\n'),
  );

  // (c) memory
  const peakMb = peakRss / 1e6;
  process.stdout.write(`(c) peak memory of a render (node + ffmpeg children, sampled every ${RSS_SAMPLE_MS} ms): ${peakMb.toFixed(0)} MB\n\n`);

  return [
    ...cutOnly.results,
    result('render_full_speed_vs_handwritten', handwrittenSpeed, '>=', TARGET.handwrittenSpeed),
    result('render_peak_rss_mb', peakMb, '<=', TARGET.peakRssMb, 0),
  ];
}

// ------------------------------------------------------------------ the run

const dir = await mkdtemp(join(tmpdir(), 'cutroom-bench-render-'));
try {
  const results = CUT_ONLY ? (await cutOnlyCases(dir)).results : [...(PIECES_ONLY ? [] : await footageCases(dir)), ...(await piecesCase(dir))];
  for (const line of results) console.log(line);
  process.exitCode = results.every((line) => line.endsWith(' ok')) ? 0 : 1;
} finally {
  await rm(dir, { recursive: true, force: true });
}
