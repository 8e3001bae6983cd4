import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { z } from 'zod';

/**
 * The peer of bench/analysis-robustness: what auto-editor cuts from a recording when left
 * at its defaults (edit by audio loudness, 0.2 s margins), as removed spans in milliseconds
 * of the input's time, so that its cuts are scored by the same rules as Cutroom's.
 *
 * auto-editor (23.32.1, in the virtual environment bench/analysis-robustness/auto-editor/setup.sh makes) runs once per
 * input with `--export json:api=1`: its "v1" timeline, `{ version: "1", source, chunks }`,
 * where chunks tile the input in frames of its timebase as [start, end, speed) and a chunk
 * at the silent speed, 99999, is cut. The v1 file does not name its timebase: auto-editor
 * takes the first video stream's frame rate, or 30 for audio alone, and `auto-editor info`
 * reports that rate as auto-editor reads it, so it is asked first.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const run = promisify(execFile);
/** auto-editor's default silent speed, which it treats as "cut" rather than "play fast". */
const CUT_SPEED = 99_999;
/** auto-editor's timebase for an input without video. */
const AUDIO_ONLY_TIMEBASE = '30';
/** A refused connection for any proxy-aware download: nothing here may reach the network. */
const CLOSED_PROXY = 'http://127.0.0.1:9';
const STDERR_TAIL_CHARS = 2_000;

/** A span auto-editor removes, in the input's time. */
export interface PeerCut {
  startMs: number;
  endMs: number;
}

export interface PeerResult {
  /** Removed spans in order, adjacent ones merged. */
  cuts: PeerCut[];
  /** The input time auto-editor keeps. */
  keptMs: number;
  /** The length auto-editor analyzed: whole frames of its timebase, so up to one frame short of the file. */
  durationMs: number;
  /** The wall time of the edit run alone (not of the timebase query before it). */
  elapsedMs: number;
  /** The frames per second the chunks count in, as auto-editor writes it ("30", "30000/1001"). */
  timebase: string;
}

export interface PeerOptions {
  /** The virtual environment's interpreter; default AUTO_EDITOR_PYTHON, else `.venv-peer/bin/python` in the project. */
  python?: string;
  /** Where the run's scratch directory goes (removed afterwards); default the system's temporary directory. */
  workDir?: string;
  signal?: AbortSignal;
}

const v1Schema = z.object({
  version: z.literal('1'),
  source: z.string(),
  chunks: z.array(z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative(), z.number().positive()])).min(1),
});

export type V1Chunk = z.infer<typeof v1Schema>['chunks'][number];

const infoSchema = z.record(z.string(), z.object({ video: z.array(z.object({ fps: z.string() })) }));

export function peerPython(options: PeerOptions = {}): string {
  return options.python ?? (process.env.AUTO_EDITOR_PYTHON || join(ROOT, '.venv-peer', 'bin', 'python'));
}

/** What auto-editor, at its defaults, removes from the local media file `input`. */
export async function autoEditorCuts(input: string, options: PeerOptions = {}): Promise<PeerResult> {
  const python = peerPython(options);
  if (!existsSync(python)) throw new Error(`${python} does not exist: run bench/analysis-robustness/auto-editor/setup.sh to make auto-editor's virtual environment`);
  // A local file by its real path: auto-editor would fetch a URL with yt-dlp, and it names the source by its resolved path.
  const source = await realpath(input);
  if (!(await stat(source)).isFile()) throw new Error(`${input} is not a file`);
  const scratch = await mkdtemp(join(options.workDir ?? tmpdir(), 'cutroom-auto-editor-'));
  try {
    const timebase = await timebaseOf(python, source, scratch, options.signal);
    const exported = join(scratch, 'timeline.json');
    const started = performance.now();
    await auto(python, [source, '--export', 'json:api=1', '--output', exported, '--no-open', '--progress', 'none', '--temp-dir', join(scratch, 'run')], scratch, options.signal);
    const elapsedMs = performance.now() - started;
    const timeline = v1Schema.parse(JSON.parse(await readFile(exported, 'utf8')));
    if (timeline.source !== source) throw new Error(`auto-editor's timeline is of ${timeline.source}, not ${source}`);
    return { ...cutsFromChunks(timeline.chunks, timebase), elapsedMs, timebase };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Removed spans in ms from v1 chunks counted in frames of `timebase` (frames per second,
 * "n" or "n/d"): the chunks must tile the timeline from frame 0; those at the cut speed are
 * removed, every other one kept.
 */
export function cutsFromChunks(chunks: readonly V1Chunk[], timebase: string): Pick<PeerResult, 'cuts' | 'keptMs' | 'durationMs'> {
  const frameMs = msPerFrame(timebase);
  const cuts: PeerCut[] = [];
  let keptFrames = 0;
  let at = 0;
  for (const [start, end, speed] of chunks) {
    if (start !== at || end <= start) throw new Error(`auto-editor's chunks do not tile its timeline: [${start}, ${end}) after frame ${at}`);
    at = end;
    if (speed !== CUT_SPEED) {
      keptFrames += end - start;
      continue;
    }
    const last = cuts.at(-1);
    if (last && last.endMs === start * frameMs) last.endMs = end * frameMs;
    else cuts.push({ startMs: start * frameMs, endMs: end * frameMs });
  }
  return { cuts, keptMs: keptFrames * frameMs, durationMs: at * frameMs };
}

function msPerFrame(timebase: string): number {
  const match = /^(\d+)(?:\/(\d+))?$/.exec(timebase);
  const fps = match ? Number(match[1]) / Number(match[2] ?? 1) : NaN;
  if (!(fps > 0) || !Number.isFinite(fps)) throw new Error(`not a timebase: ${timebase}`);
  return 1000 / fps;
}

/** The timebase auto-editor gives `source`'s timeline: its first video stream's frame rate, else 30. */
async function timebaseOf(python: string, source: string, scratch: string, signal: AbortSignal | undefined): Promise<string> {
  const { stdout } = await auto(python, ['info', source, '--json'], scratch, signal);
  const [media, ...more] = Object.values(infoSchema.parse(JSON.parse(stdout)));
  if (!media || more.length) throw new Error(`auto-editor info described ${more.length + (media ? 1 : 0)} inputs, not one`);
  return media.video[0]?.fps ?? AUDIO_ONLY_TIMEBASE;
}

/**
 * One auto-editor command, offline: every temporary file in `scratch` (its analysis cache
 * among them, which it keys by the source's path alone, so a shared one could answer for a
 * file since rewritten), and any proxy-aware download refused.
 */
async function auto(python: string, args: readonly string[], scratch: string, signal: AbortSignal | undefined): Promise<{ stdout: string }> {
  const temp = join(scratch, 'tmp');
  await mkdir(temp, { recursive: true });
  const env = { ...process.env, TMPDIR: temp, PYTHONNOUSERSITE: '1', http_proxy: CLOSED_PROXY, https_proxy: CLOSED_PROXY, HTTP_PROXY: CLOSED_PROXY, HTTPS_PROXY: CLOSED_PROXY, no_proxy: '', NO_PROXY: '' };
  try {
    return await run(python, ['-m', 'auto_editor', ...args], { cwd: scratch, env, signal, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : error;
    const said = (error as { stderr?: string }).stderr?.trim().slice(-STDERR_TAIL_CHARS) || (error as Error).message;
    throw new Error(`auto-editor ${args[0] === 'info' ? 'info' : 'edit'} failed: ${said}`);
  }
}
