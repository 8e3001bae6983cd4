import type { EnergyEnvelope } from '../../job-images/whisper/src/analysis/energy.ts';
import type { Span } from '../../job-images/whisper/src/analysis/spans.ts';
import { normalizeWords, type SpokenWord } from '../../job-images/whisper/src/analysis/words.ts';

/** Words from `[text, start_ms, end_ms]` triples, through the same normalisation as a server's words. */
export function wordsAt(entries: readonly (readonly [string, number, number])[]): SpokenWord[] {
  return normalizeWords(entries.map(([word, start, end]) => ({ word: ` ${word}`, start: start / 1000, end: end / 1000 })));
}

/**
 * Words spoken one after another: each `text` word lasts `wordMs`, separated by
 * `gapMs`, and a `|NNN` token inserts a pause of NNN ms instead of the gap.
 * `spoken('so today | 1200 so today', 0)`.
 */
export function spoken(script: string, startMs = 0, wordMs = 250, gapMs = 50): SpokenWord[] {
  const entries: [string, number, number][] = [];
  let at = startMs;
  let pendingPause: number | null = null;
  for (const token of script.split(/\s+/).filter(Boolean)) {
    const pause = /^\|(\d+)$/.exec(token);
    if (pause) {
      pendingPause = Number(pause[1]);
      continue;
    }
    if (entries.length) at += pendingPause ?? gapMs;
    pendingPause = null;
    entries.push([token, at, at + wordMs]);
    at += wordMs;
  }
  return wordsAt(entries);
}

/** The silences a perfect detector would report: every gap between words at least `minimumMs` long, plus the edges. */
export function gapsOf(words: readonly SpokenWord[], durationMs: number, minimumMs = 300): Span[] {
  const spans: Span[] = [];
  let from = 0;
  for (const word of words) {
    if (word.start_ms - from >= minimumMs) spans.push({ start_ms: from, end_ms: word.start_ms });
    from = Math.max(from, word.end_ms);
  }
  if (durationMs - from >= minimumMs) spans.push({ start_ms: from, end_ms: durationMs });
  return spans;
}

/** An envelope loud (0.3) during words and quiet (0.001) elsewhere, 10 ms frames. */
export function envelopeOf(words: readonly SpokenWord[], durationMs: number, quiet = 0.001, loud = 0.3): EnergyEnvelope {
  const rms = new Float32Array(Math.ceil(durationMs / 10)).fill(quiet);
  for (const word of words) rms.fill(loud, Math.floor(word.start_ms / 10), Math.ceil(word.end_ms / 10));
  return { frame_ms: 10, rms };
}

/** A small seeded generator (mulberry32): the same seed, the same transcripts, in every run. */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** 0 ≤ x < 1 */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer, min ≤ x ≤ max. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }
}

const VOCABULARY = ['so', 'today', 'i', 'want', 'to', 'talk', 'about', 'editing', 'video', 'cut', 'the', 'a', 'show', 'you', 'how', 'we', 'it', 'is', 'like', 'know', 'mean', 'um', 'uh'];

export interface GeneratedSource {
  words: SpokenWord[];
  duration_ms: number;
  /** What a detector reports: the true gaps ≥ 300 ms, each edge moved by up to ±jitter ms (the recognizer's and the detector's error). */
  silences: Span[];
  envelope: EnergyEnvelope;
}

/**
 * A random transcript: words of 60–700 ms with gaps of 0–3 s (some overlapping by a
 * few ms, as recognizers do), repeated phrases (false starts), fillers, commas; and
 * a detector's view of it whose silences may reach into words by up to `jitterMs`.
 */
export function generateSource(random: SeededRandom, jitterMs = 100): GeneratedSource {
  const entries: [string, number, number][] = [];
  let at = random.int(0, 2500);
  const count = random.int(1, 80);
  while (entries.length < count) {
    // Now and then, say the last few words again: a false start.
    if (entries.length >= 3 && random.chance(0.1)) {
      const repeat = entries.slice(-random.int(2, Math.min(5, entries.length))).map(([text]) => text);
      at += random.int(100, 1500);
      for (const text of repeat) {
        const length = random.int(60, 700);
        entries.push([text, at, at + length]);
        at += length + random.int(0, 120);
      }
      continue;
    }
    const length = random.int(60, 700);
    const text = random.pick(VOCABULARY) + (random.chance(0.1) ? ',' : '');
    entries.push([text, at, at + length]);
    const gap = random.chance(0.6) ? random.int(0, 150) : random.int(150, 3000);
    at += length + (random.chance(0.05) ? -random.int(1, 30) : gap);
  }
  const duration_ms = at + random.int(0, 3000);
  const words = wordsAt(entries);
  const jitter = (ms: number): number => ms + random.int(-jitterMs, jitterMs);
  const silences: Span[] = [];
  for (const gap of gapsOf(words, duration_ms)) {
    const start = Math.max(silences.at(-1)?.end_ms ?? 0, gap.start_ms === 0 ? 0 : jitter(gap.start_ms));
    const end = Math.min(duration_ms, gap.end_ms === duration_ms ? duration_ms : jitter(gap.end_ms));
    if (end > start) silences.push({ start_ms: start, end_ms: end });
  }
  const envelope = envelopeOf(words, duration_ms);
  for (let frame = 0; frame < envelope.rms.length; frame += 1) envelope.rms[frame] = envelope.rms[frame]! * (0.5 + random.next());
  return { words, duration_ms, silences, envelope };
}
