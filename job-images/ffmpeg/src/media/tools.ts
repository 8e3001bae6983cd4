// Finding and running ffmpeg and ffprobe: the binaries, the flags every ffmpeg run of
// this image starts with, its progress and stderr, and the failure it raises.
import { spawn } from 'node:child_process';

/** The binaries this image runs, from `FFMPEG_PATH`/`FFPROBE_PATH`. */
export interface MediaTools {
  ffmpeg: string;
  ffprobe: string;
}

export function mediaToolsFromEnv(env: NodeJS.ProcessEnv): MediaTools {
  return { ffmpeg: env.FFMPEG_PATH || 'ffmpeg', ffprobe: env.FFPROBE_PATH || 'ffprobe' };
}

/** ffmpeg writes `-progress` key=value blocks to this file descriptor. */
const PROGRESS_FD = 3;

/** Every ffmpeg run of this image: no stdin, progress on PROGRESS_FD, overwrite; errors only unless a filter reports at info. */
export function commonArgsAt(logLevel: 'error' | 'info'): string[] {
  return ['-hide_banner', '-nostdin', '-nostats', '-loglevel', logLevel, '-progress', `pipe:${PROGRESS_FD}`, '-y'];
}

export const commonArgs: readonly string[] = commonArgsAt('error');

/** How much of stderr a failure message may quote. */
const STDERR_TAIL_LINES = 20;

export class MediaToolError extends Error {
  readonly exitCode: number | null;
  readonly stderrTail: readonly string[];

  constructor(tool: string, exitCode: number | null, stderrTail: readonly string[]) {
    super(`${tool} exited with code ${exitCode}: ${stderrTail.slice(-3).join(' | ') || 'no message'}`);
    this.name = 'MediaToolError';
    this.exitCode = exitCode;
    this.stderrTail = stderrTail;
  }
}

export interface FfmpegRunOptions {
  signal?: AbortSignal;
  /** Seconds of output written so far (ffmpeg's `out_time`, the furthest of all outputs). */
  onProgress?: (outSeconds: number) => void;
  /** Raw bytes ffmpeg writes to `pipe:1`. */
  onStdout?: (chunk: Buffer) => void;
  onStderrLine?: (line: string) => void;
}

export interface FfmpegRun {
  /** The last `out_time` ffmpeg reported, null if it never did. */
  outSeconds: number | null;
  stderrTail: string[];
}

/** Splits a stream into lines without holding more than the current partial line. */
function eachLine(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let partial = '';
  stream.setEncoding('utf8');
  stream.on('data', (text: string) => {
    const lines = (partial + text).split(/\r?\n/);
    partial = lines.pop() ?? '';
    for (const line of lines) if (line) onLine(line);
  });
  stream.on('end', () => {
    if (partial) onLine(partial);
  });
}

/** Keeps the last STDERR_TAIL_LINES lines of a tool's stderr for its failure message. */
function stderrTail(stream: NodeJS.ReadableStream | null, onLine?: (line: string) => void): string[] {
  const tail: string[] = [];
  if (!stream) return tail;
  eachLine(stream, (line) => {
    tail.push(line);
    if (tail.length > STDERR_TAIL_LINES) tail.shift();
    onLine?.(line);
  });
  return tail;
}

/** Runs ffmpeg with `-progress pipe:3`; rejects with MediaToolError on a non-zero exit. */
export function runFfmpeg(tools: MediaTools, args: readonly string[], options: FfmpegRunOptions = {}): Promise<FfmpegRun> {
  return new Promise((resolve, reject) => {
    const stdio: ('ignore' | 'pipe')[] = ['ignore', 'pipe', 'pipe'];
    stdio[PROGRESS_FD] = 'pipe';
    const child = spawn(tools.ffmpeg, args, { stdio, ...(options.signal ? { signal: options.signal } : {}) });
    const tail = stderrTail(child.stderr, options.onStderrLine);
    let outSeconds: number | null = null;
    if (options.onStdout) child.stdout?.on('data', options.onStdout);
    else child.stdout?.resume();
    const progress = child.stdio[PROGRESS_FD] as NodeJS.ReadableStream | null | undefined;
    if (progress) {
      eachLine(progress, (line) => {
        const match = /^out_time_us=(\d+)$/.exec(line);
        // An aborted run has already failed; a dying ffmpeg's last lines must not report after that.
        if (!match || options.signal?.aborted) return;
        outSeconds = Number(match[1]) / 1e6;
        options.onProgress?.(outSeconds);
      });
    }
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve({ outSeconds, stderrTail: tail });
      else reject(new MediaToolError('ffmpeg', code, tail));
    });
  });
}

/** Runs ffprobe and returns its (small) JSON answer; rejects with MediaToolError on failure. */
export function runFfprobe(tools: MediaTools, args: readonly string[], signal?: AbortSignal, onStderrLine?: (line: string) => void): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(tools.ffprobe, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(signal ? { signal } : {}) });
    const stdout: Buffer[] = [];
    const tail = stderrTail(child.stderr, onStderrLine);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) return reject(new MediaToolError('ffprobe', code, tail));
      try {
        resolve(JSON.parse(Buffer.concat(stdout).toString('utf8')));
      } catch (error) {
        reject(error);
      }
    });
  });
}
