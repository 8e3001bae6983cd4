import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeAudio, makeVideo } from './media.ts';

/**
 * Speech whose timing is known exactly, for tests of recognition and of what is built on
 * it: phrases spoken by flite's `rms` voice (which pocketsphinx recognizes almost word for
 * word), their edge silence trimmed, joined by sox with pauses of chosen lengths. The
 * sample counts are the truth: every phrase's and pause's start and end in ms.
 */

const run = promisify(execFile);
const SAMPLE_RATE = 16_000;
const SAMPLES_PER_MS = SAMPLE_RATE / 1000;
/** What sox writes every piece as, so that pieces join without conversion. */
const PCM = ['-r', String(SAMPLE_RATE), '-c', '1', '-b', '16'];
/** Cuts leading silence (then trailing, reversed) at 0.5% of full scale, flite's edge hiss included. */
const TRIM_EDGE_SILENCE = ['silence', '1', '0.02', '0.5%', 'reverse', 'silence', '1', '0.02', '0.5%', 'reverse'];

/** One piece of a spoken track: a phrase, or a pause (digital silence). */
export type SpokenPart = { say: string } | { pauseMs: number };

export interface TimedPhrase {
  text: string;
  startMs: number;
  endMs: number;
}

export interface TimeSpan {
  startMs: number;
  endMs: number;
}

export interface SpokenTrack {
  path: string;
  durationMs: number;
  phrases: TimedPhrase[];
  pauses: TimeSpan[];
}

/**
 * A 16 kHz mono WAV of `parts` in order, named `name` in `dir`, with the exact span of
 * each phrase and pause. The track has no silence but the pauses asked for. Unique per
 * call (a random comment tag), as the service stores identical content once.
 */
export async function makeSpokenTrack(dir: string, name: string, parts: readonly SpokenPart[]): Promise<SpokenTrack> {
  const pieces: string[] = [];
  const joined = join(dir, `${name}.joined.wav`);
  const phrases: TimedPhrase[] = [];
  const pauses: TimeSpan[] = [];
  let samples = 0;
  try {
    for (const [index, part] of parts.entries()) {
      const piece = join(dir, `${name}.part${index}.wav`);
      pieces.push(piece);
      if ('say' in part) await speakPhrase(part.say, piece);
      else await run('sox', [...PCM, '-n', ...PCM, piece, 'trim', '0', `${Math.round(part.pauseMs * SAMPLES_PER_MS)}s`]);
      const length = await sampleCount(piece);
      const span = { startMs: samples / SAMPLES_PER_MS, endMs: (samples + length) / SAMPLES_PER_MS };
      if ('say' in part) phrases.push({ text: part.say, ...span });
      else pauses.push(span);
      samples += length;
    }
    await run('sox', [...pieces, joined]);
    const path = await makeAudio(dir, name, { source: { wav: joined }, sampleRate: SAMPLE_RATE, channels: 1 });
    return { path, durationMs: samples / SAMPLES_PER_MS, phrases, pauses };
  } finally {
    await Promise.all([...pieces, joined].map((piece) => rm(piece, { force: true })));
  }
}

/** `text` spoken by flite's rms voice, edge silence trimmed, as 16 kHz mono PCM. */
async function speakPhrase(text: string, output: string): Promise<void> {
  const spoken = `${output}.flite.wav`;
  try {
    await run('flite', ['-voice', 'rms', '-t', text, '-o', spoken]);
    await run('sox', [spoken, ...PCM, output, ...TRIM_EDGE_SILENCE]);
  } finally {
    await rm(spoken, { force: true });
  }
  if ((await sampleCount(output)) === 0) throw new Error(`flite said nothing audible for ${JSON.stringify(text)}`);
}

async function sampleCount(wav: string): Promise<number> {
  const { stdout } = await run('soxi', ['-s', wav]);
  return Number(stdout.trim());
}

/**
 * The track as the audio of a testsrc2 video, H.264/AAC MP4 named `name`: the same truth,
 * the video's path.
 */
export async function makeSpokenVideo(dir: string, name: string, track: SpokenTrack): Promise<SpokenTrack> {
  const path = await makeVideo(dir, name, { audio: { wav: track.path }, seconds: Math.ceil(track.durationMs / 1000) });
  return { ...track, path };
}

/**
 * The share of `expected` words a transcript got wrong (substituted, dropped or added),
 * by word-level edit distance; case and punctuation do not count.
 */
export function wordErrorRate(expected: string, heard: readonly string[]): number {
  const truth = wordsOf(expected);
  const said = heard.flatMap(wordsOf);
  let previous = Array.from({ length: said.length + 1 }, (_, index) => index);
  for (const [row, word] of truth.entries()) {
    const current = [row + 1];
    for (const [column, candidate] of said.entries()) {
      current.push(Math.min(previous[column + 1]! + 1, current[column]! + 1, previous[column]! + (word === candidate ? 0 : 1)));
    }
    previous = current;
  }
  return truth.length ? previous[said.length]! / truth.length : said.length ? 1 : 0;
}

function wordsOf(text: string): string[] {
  return text.toLowerCase().replace(/[^a-z0-9' ]+/g, ' ').split(/\s+/).filter(Boolean);
}
