// Benchmark inputs made on the spot with ffmpeg: synthetic (testsrc2, sine), so any
// machine makes the same kind of file, at the sizes a benchmark needs.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';

async function ffmpeg(args: string[]): Promise<void> {
  await run(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args], { maxBuffer: 1 << 20 });
}

/** A web-compatible clip: H.264 (yuv420p) with AAC sound in MP4. */
export async function makeH264Video(dir: string, name: string, options: { width: number; height: number; seconds: number; fps: number; preset: string }): Promise<string> {
  const { width, height, seconds, fps, preset } = options;
  const output = join(dir, name);
  await ffmpeg([
    '-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=${fps}:duration=${seconds}`,
    '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`,
    '-map', '0:v', '-c:v', 'libx264', '-preset', preset, '-pix_fmt', 'yuv420p',
    '-map', '1:a', '-c:a', 'aac', '-shortest',
    output,
  ]);
  return output;
}

/** A stereo 44.1 kHz tone, encoded as the file name's extension says (.m4a: AAC). */
export async function makeAudio(dir: string, name: string, options: { seconds: number }): Promise<string> {
  const output = join(dir, name);
  await ffmpeg(['-f', 'lavfi', '-i', `sine=frequency=330:sample_rate=44100:duration=${options.seconds}`, '-ac', '2', '-ar', '44100', output]);
  return output;
}
