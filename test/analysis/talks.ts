// Talks made of Allison Smith's recorded prompts (hack/fixtures/recorded-speech.ts) with known
// truth, for the analysis's situations of issue 38: where each prompt sits, what lies in each
// pause, and the words a recognizer would give for them.
import { EnergyEnvelopeBuilder, type EnergyEnvelope } from '../../job-images/whisper/src/analysis/energy.ts';
import type { Span } from '../../job-images/whisper/src/analysis/spans.ts';
import { normalizeWords, type SpokenWord } from '../../job-images/whisper/src/analysis/words.ts';
import { allisonPrompt, SAMPLE_RATE } from '../../hack/fixtures/recorded-speech.ts';
import { noise, type Noise } from '../../hack/fixtures/recording-conditions.ts';

export { highPassed } from '../../hack/fixtures/recording-conditions.ts';

export interface PromptTalk {
  /** The talk as recorded: prompts, pauses, what was put in them, the floor. */
  samples: Float32Array;
  /** The same without the floor: what a listener can hear of the speech. */
  speech: Float32Array;
  floor: Float32Array | null;
  durationMs: number;
  /** Where each prompt's sound lies. */
  prompts: Span[];
  /** The pauses between prompts. */
  pauses: Span[];
}

export interface PromptTalkOptions {
  /** Each pause, ms (the first before the first prompt). */
  pauseMs: number;
  /** Each prompt's peak, dBFS, in turn (default −3 for all). */
  peaksDb?: readonly number[];
  /** The room's noise under it all. */
  floor?: { kind: Noise; rmsDb: number };
  /** Sounds put into each pause between two prompts: [offset from the pause's start, ms; samples]. */
  inPauses?: (index: number) => [number, Float32Array][];
}

const at = (ms: number): number => Math.round((ms / 1000) * SAMPLE_RATE);
const ms = (samples: number): number => (samples / SAMPLE_RATE) * 1000;

/** Allison's prompts `names`, each at its peak, `pauseMs` apart and around, over a floor. */
export async function promptTalk(names: readonly string[], options: PromptTalkOptions): Promise<PromptTalk> {
  const clips = await Promise.all(names.map((name) => allisonPrompt(name)));
  const total = clips.reduce((sum, clip) => sum + clip.samples.length, 0) + at(options.pauseMs) * (clips.length + 1);
  const speech = new Float32Array(total);
  const prompts: Span[] = [];
  const pauses: Span[] = [];
  let cursor = at(options.pauseMs);
  clips.forEach((clip, index) => {
    const peak = clip.samples.reduce((max, value) => Math.max(max, Math.abs(value)), 0) || 1;
    const gain = 10 ** ((options.peaksDb?.[index % options.peaksDb.length] ?? -3) / 20) / peak;
    speech.set(
      clip.samples.map((value) => value * gain),
      cursor,
    );
    prompts.push({ start_ms: ms(cursor), end_ms: ms(cursor + clip.samples.length) });
    cursor += clip.samples.length;
    if (index < clips.length - 1) {
      pauses.push({ start_ms: ms(cursor), end_ms: ms(cursor + at(options.pauseMs)) });
      for (const [offsetMs, sound] of options.inPauses?.(index) ?? []) sound.forEach((value, offset) => (speech[cursor + at(offsetMs) + offset]! += value));
    }
    cursor += at(options.pauseMs);
  });
  const floor = options.floor ? noise(options.floor.kind, total, options.floor.rmsDb, 38) : null;
  const samples = Float32Array.from(speech, (value, index) => value + (floor?.[index] ?? 0));
  return { samples, speech, floor, durationMs: Math.round(ms(total)), prompts, pauses };
}

/** The envelope the analyze program measures of these samples (with its cepstra and the band above 1 kHz). */
export function envelopeOfSamples(samples: Float32Array): EnergyEnvelope {
  const builder = new EnergyEnvelopeBuilder(SAMPLE_RATE, 1);
  const pcm = new Int16Array(samples.length);
  for (let index = 0; index < samples.length; index += 1) pcm[index] = Math.round(Math.max(-1, Math.min(32767 / 32768, samples[index]!)) * 32768);
  builder.push(new Uint8Array(pcm.buffer));
  return builder.finish();
}

/** One recognized "word" per prompt, its start and end moved by `startMs` and `endMs` (a recognizer's timing). */
export function promptWords(talk: PromptTalk, startMs = 0, endMs = 0): SpokenWord[] {
  return normalizeWords(talk.prompts.map((prompt, index) => ({ word: ` p${index}`, start: (prompt.start_ms + startMs) / 1000, end: (prompt.end_ms + endMs) / 1000, probability: 0.95 })));
}

/** 10 ms frame levels of samples, dB (power). */
export function frameLevels(samples: Float32Array): Float64Array {
  const frame = SAMPLE_RATE / 100;
  const levels = new Float64Array(Math.floor(samples.length / frame));
  for (let index = 0; index < levels.length; index += 1) {
    let power = 0;
    for (let sample = index * frame; sample < (index + 1) * frame; sample += 1) power += samples[sample]! ** 2;
    levels[index] = 10 * Math.log10(power / frame + 1e-20);
  }
  return levels;
}

/** How many ms of `cut` fall on the 10 ms frames that `audible` says are heard. */
export function audibleMsIn(cut: Span, audible: (frame: number) => boolean): number {
  let total = 0;
  for (let frame = Math.ceil(cut.start_ms / 10); frame < Math.floor(cut.end_ms / 10); frame += 1) if (audible(frame)) total += 10;
  return total;
}

export const overlapMs = (a: Span, b: Span): number => Math.max(0, Math.min(a.end_ms, b.end_ms) - Math.max(a.start_ms, b.start_ms));

