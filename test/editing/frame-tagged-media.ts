// Media whose every frame says what it is: a 64×36 grey picture (16:9, so a render fills its
// frame with it) whose row of 8×16
// blocks spells the frame's index (five octal digits) and its source's number (three), with
// two calibration blocks above (the darkest and the lightest level) so that a decoder reads
// the digits back whatever range conversion a player applied. Lossless (FFV1 in Matroska),
// so a frame read from a render names exactly the source frame it shows.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const TAGGED_WIDTH = 64;
export const TAGGED_HEIGHT = 36;
const BLOCK = 8;
const INDEX_DIGITS = 5;

/** The grey level of every pixel: calibration above, digits below (frame N's index, then the source's number). */
function tagExpression(sourceNumber: number, frameIndex: string): string {
  const digit = `if(gte(floor(X/${BLOCK}),${INDEX_DIGITS}),mod(floor(${sourceNumber}/pow(8,floor(X/${BLOCK})-${INDEX_DIGITS})),8),mod(floor(${frameIndex}/pow(8,floor(X/${BLOCK}))),8))`;
  return `if(lt(Y,16),if(lt(X,${BLOCK}),16,if(lt(X,${2 * BLOCK}),240,128)),16+32*${digit})`.replace(/,/g, '\\,');
}

/** A video of `seconds` at `rate` whose frame k is tagged (k, sourceNumber); no sound. */
export async function makeTaggedVideo(path: string, sourceNumber: number, rate: { num: number; den: number }, seconds: number): Promise<void> {
  await run('ffmpeg', [
    '-v', 'error', '-y',
    '-f', 'lavfi', '-i', `color=c=black:s=${TAGGED_WIDTH}x${TAGGED_HEIGHT}:r=${rate.num}/${rate.den}:d=${seconds}`,
    '-vf', `format=gray,geq=lum='${tagExpression(sourceNumber, 'N')}'`,
    '-c:v', 'ffv1', path,
  ]);
}

/** A still (PNG) tagged (0, sourceNumber). */
export async function makeTaggedStill(path: string, sourceNumber: number): Promise<void> {
  await run('ffmpeg', [
    '-v', 'error', '-y',
    '-f', 'lavfi', '-i', `color=c=black:s=${TAGGED_WIDTH}x${TAGGED_HEIGHT}:d=1`,
    '-vf', `format=gray,geq=lum='${tagExpression(sourceNumber, '0')}'`,
    '-frames:v', '1', path,
  ]);
}

/** What one decoded frame shows: a tagged source frame, or nothing tagged (black, a gap). */
export type TaggedFrame = { source: number; index: number } | null;

/** Every frame of a rendered file, read as tags. */
export async function readTags(path: string): Promise<TaggedFrame[]> {
  const raw = `${path}.gray`;
  await run('ffmpeg', ['-v', 'error', '-y', '-i', path, '-f', 'rawvideo', '-pix_fmt', 'gray', '-s', `${TAGGED_WIDTH}x${TAGGED_HEIGHT}`, raw]);
  const bytes = await readFile(raw);
  const size = TAGGED_WIDTH * TAGGED_HEIGHT;
  const frames: TaggedFrame[] = [];
  for (let offset = 0; offset + size <= bytes.length; offset += size) {
    const at = (x: number, y: number) => bytes[offset + y * TAGGED_WIDTH + x]!;
    const low = at(BLOCK / 2, 8);
    const high = at(BLOCK + BLOCK / 2, 8);
    if (high - low < 100) {
      frames.push(null);
      continue;
    }
    const digits = Array.from({ length: TAGGED_WIDTH / BLOCK }, (_, block) => Math.round(((at(block * BLOCK + BLOCK / 2, 24) - low) * 7) / (high - low)));
    const number = (from: number, to: number) => digits.slice(from, to).reduce((sum, digit, place) => sum + digit * 8 ** place, 0);
    frames.push({ index: number(0, INDEX_DIGITS), source: number(INDEX_DIGITS, digits.length) });
  }
  return frames;
}
