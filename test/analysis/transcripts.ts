import type { EnergyEnvelope } from '../../job-images/whisper/src/analysis/energy.ts';
import type { Span } from '../../job-images/whisper/src/analysis/spans.ts';
import { normalizeWords, type SpokenWord } from '../../job-images/whisper/src/analysis/words.ts';
import { SeededRandom } from '../../hack/fixtures/seeded-random.ts';

export { SeededRandom };

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

const VOCABULARY = ['so', 'today', 'i', 'want', 'to', 'talk', 'about', 'editing', 'video', 'cut', 'the', 'a', 'show', 'you', 'how', 'we', 'it', 'is', 'like', 'know', 'mean', 'um', 'uh', 'erm'];
const PUNCTUATION = [',', '.', '?', '…', ' -', '—'];

export interface GeneratedSource {
  words: SpokenWord[];
  duration_ms: number;
  /** What a detector reports: the gaps it heard, disagreeing with the words (see generateSource). */
  silences: Span[];
  envelope: EnergyEnvelope | null;
}

/**
 * A sloppy recognizer's transcript and a detector that disagrees with it: 1–120 words of
 * 0–900 ms (some of no length), gaps of 0–3 s, some words overlapping or nested in the
 * one before, some starting past the end of the source; repeated phrases (false
 * starts), fillers, punctuation; silences that are the true gaps with edges moved by up
 * to ±`jitterMs`, or spans thrown anywhere (overlapping, unsorted, past the ends); an
 * envelope that is random, too short, too long, or missing.
 */
export function generateSource(random: SeededRandom, jitterMs = 150): GeneratedSource {
  const entries: [string, number, number][] = [];
  let at = random.chance(0.2) ? 0 : random.int(0, 2500);
  const count = random.int(1, 120);
  const wordMs = (): number => (random.chance(0.03) ? 0 : random.int(40, 900));
  while (entries.length < count) {
    // Now and then, say the last few words again: a false start.
    if (entries.length >= 3 && random.chance(0.08)) {
      const repeat = entries.slice(-random.int(2, Math.min(5, entries.length))).map(([text]) => text);
      at += random.int(0, 1500);
      for (const text of repeat) {
        const length = wordMs();
        entries.push([text, at, at + length]);
        at += length + random.int(0, 120);
      }
      continue;
    }
    const length = wordMs();
    const text = random.pick(VOCABULARY) + (random.chance(0.15) ? random.pick(PUNCTUATION) : '');
    entries.push([text, at, at + length]);
    const roll = random.next();
    if (roll < 0.05) at -= random.int(1, Math.max(1, length)); // the next word overlaps this one
    else if (roll < 0.07) at -= length + random.int(0, 300); // or starts before it (nested, out of order)
    else at += length + (random.chance(0.6) ? random.int(0, 150) : random.int(150, 3000));
    at = Math.max(0, at);
  }
  const spokenUntil = Math.max(...entries.map(([, , end]) => end));
  // Mostly the audio outlasts the words; sometimes the recognizer's times run past it.
  const duration_ms = random.chance(0.1) ? random.int(0, spokenUntil + 1) : spokenUntil + random.int(0, 3000);
  const words = wordsAt(entries);
  const jitter = (ms: number): number => ms + random.int(-jitterMs, jitterMs);
  const silences: Span[] = [];
  if (random.chance(0.15)) {
    for (let index = random.int(0, 30); index > 0; index -= 1) {
      const start = random.int(-500, duration_ms + 500);
      silences.push({ start_ms: start, end_ms: start + random.int(-100, 4000) });
    }
  } else {
    for (const gap of gapsOf(words, duration_ms)) {
      const start = gap.start_ms === 0 ? 0 : jitter(gap.start_ms);
      const end = gap.end_ms === duration_ms ? duration_ms : jitter(gap.end_ms);
      if (end > start) silences.push({ start_ms: start, end_ms: end });
    }
  }
  return { words, duration_ms, silences, envelope: generateEnvelope(random, words, duration_ms) };
}

function generateEnvelope(random: SeededRandom, words: readonly SpokenWord[], durationMs: number): EnergyEnvelope | null {
  const roll = random.next();
  if (roll < 0.1) return null;
  if (roll < 0.3) {
    const rms = new Float32Array(random.int(0, Math.ceil(durationMs / 10) + 50));
    for (let frame = 0; frame < rms.length; frame += 1) rms[frame] = random.next() * 0.5;
    return { frame_ms: 10, rms };
  }
  const envelope = envelopeOf(words, durationMs);
  for (let frame = 0; frame < envelope.rms.length; frame += 1) envelope.rms[frame] = envelope.rms[frame]! * (0.5 + random.next());
  return envelope;
}

/* A synthetic corpus of screen-recording speech, for false-start recall and precision. */

const OPENERS = ['so', 'now', 'and then', 'okay so', 'today', 'first', 'next', 'after that', 'in this video', 'the thing is', 'if you look here', 'basically', 'alright', 'also'];
const SUBJECTS = ['i', 'we', 'you'];
const VERBS = ['want to show you', 'are going to cut', 'can see', 'need to fix', 'will export', 'should trim', 'have to check', 'would like to talk about', 'just drag', 'can move', 'might rename', 'could split'];
const OBJECTS = ['the timeline', 'the audio track', 'the first clip', 'this transition', 'the color grade', 'the captions', 'the intro', 'all the silences', 'the export settings', 'a new project', 'the waveform', 'the last take', 'our thumbnail', 'every marker'];
const ENDINGS = ['', '', 'right here', 'in the editor', 'before we export', 'really quickly', 'for the next part', 'one more time', 'with the mouse'];
/** A word misheard as a near neighbour: one letter changed or added ("need" → "neud", "neeyd"). */
function mishear(random: SeededRandom, word: string): string {
  const at = random.int(1, word.length - 1);
  const letter = 'aeiouynrst'[random.int(0, 9)]!;
  return random.chance(0.5) ? word.slice(0, at) + letter + word.slice(at + 1) : word.slice(0, at) + letter + word.slice(at);
}

/** A sentence as its parts (opener, subject, verb, object, ending); `like` gives the first three of another. */
function sentenceParts(random: SeededRandom, like?: readonly string[]): string[] {
  const start = like ? like.slice(0, 3) : [random.chance(0.7) ? random.pick(OPENERS) : '', random.pick(SUBJECTS), random.pick(VERBS)];
  return [...start, random.pick(OBJECTS), random.pick(ENDINGS)];
}

function wordsOf(parts: readonly string[]): string[] {
  return parts.join(' ').split(/\s+/).filter(Boolean);
}

function sentence(random: SeededRandom): string[] {
  return wordsOf(sentenceParts(random));
}

/** How a planted false take breaks off. */
export type FalseTakeKind = 'prefix' | 'diverging' | 'retake' | 'early_turn';

export interface PlantedFalseStart {
  kind: FalseTakeKind;
  /** The dropped words (the take and a hesitation after it), indices into `words`. */
  from: number;
  to: number;
}

export interface SpeechCorpusEntry {
  words: SpokenWord[];
  duration_ms: number;
  planted: PlantedFalseStart[];
}

/** The take a speaker abandons before saying `words` whole. */
function falseTake(random: SeededRandom, words: readonly string[]): { kind: FalseTakeKind; take: string[] } {
  const roll = random.next();
  if (roll < 0.45) {
    const take = words.slice(0, random.int(2, Math.min(6, words.length - 1)));
    const last = take.at(-1)!;
    if (random.chance(0.33) && last.length >= 3) take[take.length - 1] = `${last.slice(0, random.int(1, last.length - 1))}-`;
    return { kind: 'prefix', take };
  }
  if (roll < 0.75) return { kind: 'diverging', take: [...words.slice(0, random.int(4, Math.min(7, words.length))), ...sentence(random).slice(-random.int(1, 3))] };
  if (roll < 0.9) return { kind: 'retake', take: [...words.slice(0, -1), `${words.at(-1)!}.`] };
  return { kind: 'early_turn', take: [...words.slice(0, random.int(2, 3)), ...sentence(random).slice(-random.int(1, 2))] };
}

/**
 * A transcript of 5–15 sentences (opener, subject, verb, object, ending: many share an
 * opener or a verb; a tenth open as the sentence before and go on to another
 * object, as lists do; now and then an earlier sentence comes back much later) with false takes
 * planted before about a quarter of them: the sentence's first 2–6 words (the last cut
 * off mid-word a third of the time), its first 4–7 words turning elsewhere, the whole
 * sentence (a retake), or 2–3 words turning elsewhere within the first four; the take
 * trailing off ("…", ",", now and then "."), perhaps "um", a pause, then the sentence,
 * one of its first words misheard a third of the time.
 */
export function speechCorpusEntry(random: SeededRandom): SpeechCorpusEntry {
  const entries: [string, number, number][] = [];
  const planted: PlantedFalseStart[] = [];
  const said: string[][] = [];
  let previousParts: string[] | undefined;
  let at = random.int(0, 1500);
  const say = (texts: readonly string[], last = ''): void => {
    texts.forEach((text, index) => {
      const length = random.int(120, 450);
      entries.push([index === texts.length - 1 ? text + last : text, at, at + length]);
      at += length + random.int(0, 100);
    });
  };
  for (let count = random.int(5, 15); count > 0; count -= 1) {
    const roll = random.next();
    // A list: the sentence before again, with another object ("we fix the intro. we fix the captions").
    const parts = sentenceParts(random, previousParts && roll < 0.1 ? previousParts : undefined);
    previousParts = parts;
    let words = wordsOf(parts);
    if (said.length > 3 && roll > 0.95) words = said[random.int(0, said.length - 4)]!;
    said.push(words);
    at += random.chance(0.8) ? random.int(250, 1500) : random.int(0, 150);
    if (random.chance(0.25) && words.length >= 4) {
      const { kind, take } = falseTake(random, words);
      const from = entries.length;
      const trailing = random.next();
      say(take, kind === 'retake' || take.at(-1)!.endsWith('-') ? '' : trailing < 0.25 ? '…' : trailing < 0.4 ? ',' : trailing < 0.5 ? '.' : '');
      if (random.chance(0.3)) say([random.pick(['um,', 'uh', 'uh,', 'erm'])]);
      planted.push({ kind, from, to: entries.length });
      at += random.int(80, 1200);
      // A recognizer mishears longer words: one of the first four, if any has four letters.
      const restart = [...words];
      const misheard = [1, 2, 3].filter((index) => (restart[index]?.length ?? 0) >= 4);
      if (misheard.length && random.chance(0.33)) {
        const index = random.pick(misheard);
        restart[index] = mishear(random, restart[index]!);
      }
      say(restart, random.chance(0.7) ? '.' : '');
    } else {
      say(words, random.chance(0.7) ? '.' : ',');
    }
  }
  const duration_ms = at + random.int(0, 2000);
  return { words: wordsAt(entries), duration_ms, planted };
}
