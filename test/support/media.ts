import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { runFfmpeg } from '../../hack/fixtures/media.ts';

// Video and audio (also what the benchmarks make) are in hack/fixtures.
export { makeAudio, makeVideo, type AudioOptions, type VideoOptions } from '../../hack/fixtures/media.ts';

/**
 * Real media for tests, made on the spot with ffmpeg (and espeak-ng + sox for
 * speech) into a directory the caller owns. Clips are synthetic (testsrc2, sine,
 * espeak voices) so they are small, deterministic and fast to make.
 */

const run = promisify(execFile);
/** sox dithers whenever it lowers a sample's precision (resampling included), from a random seed unless told to repeat: the same fixture, the same samples. */
const REPEATABLE = ['-R'];
const FFPROBE = process.env.FFPROBE_PATH || 'ffprobe';

/**
 * Every generated file is unique (a random comment tag on video and audio, or a random
 * mark on images): the service stores identical content once, so tests sharing one
 * database must not make the same bytes by accident. Tests that want identical content
 * reuse one file.
 */
function uniqueMark(): string {
  return `drawbox=x=0:y=0:w=4:h=4:t=fill:color=0x${randomBytes(3).toString('hex')}`;
}

/** One piece of a spoken track: a sentence spoken by espeak-ng, or silence. */
export type SpeechPart = { say: string } | { silenceSeconds: number };

/**
 * A mono WAV of espeak-ng sentences and chosen pauses, joined by sox. Each espeak
 * clip already ends with ~0.4 s of its own silence.
 */
export async function makeSpeechWav(dir: string, name: string, parts: readonly SpeechPart[]): Promise<string> {
  const pieces: string[] = [];
  for (const [index, part] of parts.entries()) {
    const piece = join(dir, `${name}.part${index}.wav`);
    if ('say' in part) {
      await run('espeak-ng', ['-s', '160', '-w', piece, part.say]);
    } else {
      await run('sox', [...REPEATABLE, '-n', '-r', '22050', '-c', '1', '-b', '16', piece, 'trim', '0', String(part.silenceSeconds)]);
    }
    pieces.push(piece);
  }
  const output = join(dir, name);
  if (pieces.length === 1) await run('sox', [...REPEATABLE, pieces[0]!, output]);
  else await run('sox', [...REPEATABLE, ...pieces, output]);
  await Promise.all(pieces.map((piece) => rm(piece, { force: true })));
  return output;
}

/** A single testsrc2 frame as PNG or JPEG (by extension). */
export async function makeImage(dir: string, name: string, options: { width?: number; height?: number } = {}): Promise<string> {
  const { width = 800, height = 600 } = options;
  const output = join(dir, name);
  await runFfmpeg(['-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}`, '-vf', uniqueMark(), '-frames:v', '1', '-update', '1', output]);
  return output;
}

/** Bytes that are no media format: a seeded generator, so every run probes the same garbage. */
export async function makeCorruptFile(dir: string, name: string, sizeBytes = 64 * 1024, seed = 0x2545f491): Promise<string> {
  const output = join(dir, name);
  const bytes = Buffer.alloc(sizeBytes);
  let state = seed >>> 0;
  for (let index = 0; index < sizeBytes; index += 1) {
    // xorshift32
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    bytes[index] = state & 0xff;
  }
  await writeFile(output, bytes);
  return output;
}

export async function makeEmptyFile(dir: string, name: string): Promise<string> {
  const output = join(dir, name);
  await writeFile(output, '');
  return output;
}

/** The first `fraction` of a file, as an upload cut short would leave it. */
export async function makeTruncatedCopy(source: string, dir: string, name: string, fraction: number): Promise<string> {
  const output = join(dir, name);
  const { size } = await stat(source);
  const end = Math.floor(size * fraction) - 1;
  await pipeline(createReadStream(source, { start: 0, end }), createWriteStream(output));
  return output;
}

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

export interface ProbedStream {
  codec_type: string;
  codec_name: string;
  width?: number;
  height?: number;
  sample_rate?: string;
  channels?: number;
  sample_fmt?: string;
}

export interface ProbedMedia {
  streams: ProbedStream[];
  format: { format_name: string; duration?: string };
}

/** ffprobe's view of a file, for assertions on what a program produced. */
export async function probeFile(path: string): Promise<ProbedMedia> {
  const { stdout } = await run(FFPROBE, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path]);
  return JSON.parse(stdout) as ProbedMedia;
}

/** Top-level MP4 box types in file order, read box header by box header. */
export async function topLevelBoxes(path: string): Promise<string[]> {
  const file = await open(path);
  try {
    const { size } = await file.stat();
    const types: string[] = [];
    const header = Buffer.alloc(16);
    for (let offset = 0; offset + 8 <= size; ) {
      await file.read(header, 0, 16, offset);
      const boxSize = header.readUInt32BE(0);
      types.push(header.toString('latin1', 4, 8));
      const length = boxSize === 1 ? Number(header.readBigUInt64BE(8)) : boxSize === 0 ? size - offset : boxSize;
      if (length < 8) break;
      offset += length;
    }
    return types;
  } finally {
    await file.close();
  }
}
