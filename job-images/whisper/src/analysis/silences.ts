import { keptBeforeMs, removedRange } from '../../../../crds/contract/editing/kept-pause.ts';
import { snapToQuietest } from './boundaries.ts';
import type { EnergyEnvelope } from './energy.ts';
import { detectSpeech, silencesBetween, type SpeechDetection } from './speech.ts';
import { MIN_CUT_MS, type Cut, type Span } from './spans.ts';
import { WORD_LEAD_IN_MS, WORD_TAIL_MS, type SpokenWord } from './words.ts';

/** Quiet shorter than this is a stop consonant or a breath between words, not a pause. */
export const MIN_SILENCE_MS = 300;
/**
 * … yet one this long parts a take from its restart where the recognizer ran a word over it
 * (false-starts.ts splitStretched: "Please enter the | Please enter the channel …" with 280 ms
 * between, Whisper's "channel" held 1.2 s over it); a stop's closure lasts 50–230 ms.
 */
export const SHORT_PAUSE_MS = 200;

/**
 * The silences of a source: the stretches between the speech regions that detectSpeech
 * finds relative to the recording's own floor and speech level, at least MIN_SILENCE_MS long.
 */
export function silencesFromEnvelope(envelope: EnergyEnvelope, durationMs = envelope.rms.length * envelope.frame_ms): Span[] {
  return silencesBetween(detectSpeech(envelope, durationMs).speech, durationMs, MIN_SILENCE_MS);
}

/**
 * The pauses a listener hears: the stretches between the detector's speech regions, its
 * breaths and clicks (detectSpeech's `breaths`) among them, unless the recognizer heard a
 * word in one (a word's middle inside it: then it is speech): a breath is part of its
 * pause, it never splits one nor keeps it uncut (issue 38). With them, the breaths taken as
 * pauses.
 */
export function pausesHeard(detection: Pick<SpeechDetection, 'speech' | 'breaths'>, words: readonly SpokenWord[], durationMs: number): { silences: Span[]; breaths: Span[]; short_pauses: Span[] } {
  const spoken = (breath: Span): boolean => words.some((word) => breath.start_ms <= (word.start_ms + word.end_ms) / 2 && (word.start_ms + word.end_ms) / 2 < breath.end_ms);
  const voiced = detection.breaths.filter(spoken);
  const speech = voiced.length ? [...detection.speech, ...voiced].sort((a, b) => a.start_ms - b.start_ms) : detection.speech;
  return { silences: silencesBetween(speech, durationMs, MIN_SILENCE_MS), breaths: detection.breaths.filter((breath) => !spoken(breath)), short_pauses: silencesBetween(speech, durationMs, SHORT_PAUSE_MS) };
}

export interface SilenceCutInput {
  duration_ms: number;
  /** normalizeWords(…): in time order. */
  words: readonly SpokenWord[];
  /** Detected silences (silencedetect, the envelope, or a VAD's gaps); any order, overlaps merged. */
  silences: readonly Span[];
  envelope: EnergyEnvelope | null;
  /** minimumPauseMs(pacing_level). */
  minimum_pause_ms: number;
  /** Breaths and clicks taken as part of the pauses (pausesHeard): a cut over one says so. */
  breaths?: readonly Span[];
  /**
   * keptPauseMs(pacing_level): a cut pause keeps this much of itself (issue 39), split at
   * the speech's edges (keptSplitAfter). Absent: the pause is removed whole between the
   * words' guard bands (the rule before issue 39, kept for callers that plan no shortening).
   */
  kept_pause_ms?: number;
  /** The silences are the speech detector's (detectSpeech): a shortened pause is measured from their edges widened by its measured lag and lead (heardPause). */
  detected_silences?: boolean;
}

/**
 * How the kept part of a shortened pause is split: this share stays after the speech
 * before it, the rest before the speech after it. After a sentence's end more stays
 * behind the sentence (it settles); within a sentence more stays before the next word
 * (a word's onset is where a listener hears a clip first; the old guard bands were 120 ms
 * after a word and 180 ms before one, the same 2 : 3).
 */
export const SPLIT_AFTER_SENTENCE = 0.6;
export const SPLIT_IN_SENTENCE = 0.4;

/**
 * The least a shortened pause keeps next to a word: the briskest kept length's smaller
 * share (250 ms × 0.4). It replaces the guard bands (120 ms after a word, 180 before one)
 * for a pause that is shortened, measured from the pause's edges, which lie at the
 * detector's speech as well as the recognizer's words (pacing.test.ts and
 * shortened-pauses.test.ts hold the curve to it at every level).
 */
export const SHORTEST_KEPT_SIDE_MS = 100;

/** The share of the kept pause left after `word` (null: the source's start). */
export function keptSplitAfter(word: SpokenWord | null): number {
  return word?.ends_sentence ? SPLIT_AFTER_SENTENCE : SPLIT_IN_SENTENCE;
}

/** The silences inside [0, duration], whole milliseconds, in time order, overlapping or touching ones merged. */
export function tidySilences(silences: readonly Span[], durationMs: number): Span[] {
  const clipped = silences
    .map((silence) => ({ start_ms: Math.max(0, Math.round(silence.start_ms)), end_ms: Math.min(durationMs, Math.round(silence.end_ms)) }))
    .filter((silence) => silence.end_ms > silence.start_ms)
    .sort((a, b) => a.start_ms - b.start_ms);
  const merged: Span[] = [];
  for (const silence of clipped) {
    const last = merged.at(-1);
    if (last && silence.start_ms <= last.end_ms) last.end_ms = Math.max(last.end_ms, silence.end_ms);
    else merged.push(silence);
  }
  return merged;
}

/**
 * How far a recognized word may reach from the speech it was heard in into a detected
 * silence over quiet frames: a word's tail fading under the detector's `off_db` (up to
 * 100–150 ms) plus a recognizer's timing error (50–100 ms). A recognizer that hears words
 * in noise stretches a real word across the pause after it ("participant" for 3 s) or
 * starts the next one early; the quiet reach past this is noise.
 */
export const WORD_REACH_MS = 250;

/**
 * A span is quiet when this share of its frames stay at or under the floor level: a
 * word's syllables rise over it in more than a tenth.
 */
const QUIET_SHARE = 0.9;

/**
 * The words as they bound pause cuts: with sound under them. A recognizer hears words
 * in a room's noise (a babble of other talkers, a fan's hiss): in the middle of a pause,
 * or glued to a real word at its edge and stretched over the pause; either kept the
 * pause uncut. A span is quiet when 9 in 10 of its 10 ms frames stay at or under the
 * floor level (the lower of detectSpeech's `off_db` and the noise floor + 6 dB) and none
 * reaches the level that can start speech (`on_db`). Then:
 *
 * - a word wholly inside one detected silence, and quiet, is noise: it is left out;
 * - a word reaching from speech more than WORD_REACH_MS into a detected silence, with its
 *   part inside the silence quiet, ends WORD_REACH_MS after the silence begins (and a word
 *   beginning more than that before a silence ends, over quiet frames, begins there).
 *
 * A babble's phantom word stays under both levels; a soft word the detector missed (a
 * short phrase 15 dB under the talk, 5 dB over the floor at its median) rises over them
 * and stays whole. Either way the cut keeps its guard bands from the detector's speech
 * too (findSilenceCuts). Without the levels (an envelope that carries none) every word
 * stays as recognized.
 */
export function heardWords(words: readonly SpokenWord[], silences: readonly Span[], envelope: EnergyEnvelope | null): readonly SpokenWord[] {
  const quiet = quietTest(envelope);
  if (!quiet) return words;
  const heard: SpokenWord[] = [];
  for (const word of words) {
    if (isNoise(word, silences, quiet)) continue;
    const head = silenceAt(silences, word.start_ms);
    let { start_ms: start, end_ms: end } = word;
    const tail = silenceAt(silences, end - 1);
    if (tail && tail.start_ms > start && end - tail.start_ms > WORD_REACH_MS && quiet(tail.start_ms, end)) end = tail.start_ms + WORD_REACH_MS;
    if (head && head.end_ms < end && head.end_ms - start > WORD_REACH_MS && quiet(start, head.end_ms)) start = head.end_ms - WORD_REACH_MS;
    heard.push(start === word.start_ms && end === word.end_ms ? word : { ...word, start_ms: start, end_ms: end });
  }
  // a start moved later may pass a word that began after it
  return heard.sort((a, b) => a.start_ms - b.start_ms);
}

/**
 * The positions of the words heard in the room's noise alone: each wholly inside one
 * detected silence, over quiet frames (those heardWords leaves out). None without the
 * envelope's levels.
 */
export function noiseWords(words: readonly SpokenWord[], silences: readonly Span[], envelope: EnergyEnvelope | null): Set<number> {
  const quiet = quietTest(envelope);
  const noise = new Set<number>();
  if (quiet) for (const [index, word] of words.entries()) if (isNoise(word, silences, quiet)) noise.add(index);
  return noise;
}

type QuietTest = (start_ms: number, end_ms: number) => boolean;

/** Whether a span is quiet on this envelope (isQuiet at its levels); null when it carries none. */
function quietTest(envelope: EnergyEnvelope | null): QuietTest | null {
  const floor = envelope?.floor_rms;
  if (!envelope || floor === undefined) return null;
  const quietBelow = Math.min(floor, envelope.noise_rms ?? floor);
  const onset = envelope.onset_rms ?? Infinity;
  return (start_ms, end_ms) => isQuiet({ start_ms, end_ms }, envelope, quietBelow, onset);
}

/** A word wholly inside one detected silence, over quiet frames: the room's noise, not speech. */
function isNoise(word: SpokenWord, silences: readonly Span[], quiet: QuietTest): boolean {
  const silence = silenceAt(silences, word.start_ms);
  return silence !== undefined && word.end_ms <= silence.end_ms && quiet(word.start_ms, word.end_ms);
}

/** The silence holding `ms` (sorted, disjoint silences; binary search). */
function silenceAt(silences: readonly Span[], ms: number): Span | undefined {
  let low = 0;
  let high = silences.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const silence = silences[middle]!;
    if (ms < silence.start_ms) high = middle - 1;
    else if (ms >= silence.end_ms) low = middle + 1;
    else return silence;
  }
  return undefined;
}

/** Whether QUIET_SHARE of the frames under the span stay at or under `below` and none reaches `onset`. */
function isQuiet(span: Span, envelope: EnergyEnvelope, below: number, onset: number): boolean {
  const from = Math.max(0, Math.floor(span.start_ms / envelope.frame_ms));
  const to = Math.min(envelope.rms.length, Math.max(from + 1, Math.ceil(span.end_ms / envelope.frame_ms)));
  const frames = Array.from(envelope.rms.subarray(from, to)).sort((a, b) => a - b);
  return frames.length > 0 && frames[Math.floor(frames.length * QUIET_SHARE)]! <= below && frames.at(-1)! < onset;
}

/**
 * Pauses worth cutting. A pause is the part of a detected silence that lies between
 * two recognized words (or before the first, after the last): where the detector heard
 * silence and the recognizer heard nothing. One at least `minimum_pause_ms` long is
 * cut, but only from WORD_TAIL_MS after the word before it to WORD_LEAD_IN_MS before
 * the word after it, each boundary snapped inward to the quietest frame nearby. So a
 * cut never touches a recognized word or its guard bands, nor anything audible the
 * recognizer missed; a word heard in noise (a quiet one inside a silence, or a word's
 * quiet reach over a pause) bounds nothing (heardWords). The detector's own speech is
 * guarded the same way: a cut stays WORD_TAIL_MS after a silence begins and
 * WORD_LEAD_IN_MS before it ends (where speech the detector heard stops and starts
 * again), so a word's acoustic tail and onset bound a cut as well as its transcript
 * times, whatever the recognizer said. Source edges need no guard band.
 */
export function findSilenceCuts(input: SilenceCutInput): Cut[] {
  const { envelope, duration_ms: duration } = input;
  const silences = tidySilences(input.silences, duration);
  const words = heardWords(input.words, silences, envelope);
  const quiet = quietTest(envelope);
  const cuts: Cut[] = [];
  let firstSilence = 0;
  // The latest end of the words so far: a sloppy recognizer's words may overlap or nest.
  let spokenUntil = 0;
  let lastWord: SpokenWord | null = null;
  for (let gap = 0; gap <= words.length; gap += 1) {
    const atEnd = gap === words.length;
    const before = spokenUntil;
    const wordBefore = lastWord;
    const after = atEnd ? duration : Math.min(duration, words[gap]!.start_ms);
    const safeFrom = gap > 0 ? before + WORD_TAIL_MS : 0;
    const safeTo = atEnd ? duration : after - WORD_LEAD_IN_MS;
    if (!atEnd && words[gap]!.end_ms >= spokenUntil) {
      spokenUntil = words[gap]!.end_ms;
      lastWord = words[gap]!;
    }
    if (after <= before) continue;
    while (firstSilence < silences.length && silences[firstSilence]!.end_ms <= before) firstSilence += 1;
    for (let index = firstSilence; index < silences.length && silences[index]!.start_ms < after; index += 1) {
      const pause = { start_ms: Math.max(silences[index]!.start_ms, before), end_ms: Math.min(silences[index]!.end_ms, after) };
      const pauseMs = pause.end_ms - pause.start_ms;
      if (pauseMs < input.minimum_pause_ms) continue;
      if (input.kept_pause_ms !== undefined) {
        const heard = heardPause(silences[index]!, pause, quiet, duration, input.detected_silences ?? false);
        const edges = { atStart: wordBefore === null && heard.start_ms === 0, atEnd: atEnd && heard.end_ms === duration };
        // the removed range keeps SHORTEST_KEPT_SIDE_MS from every recognized word, however the pause lies
        const clear = { start_ms: gap > 0 ? before + SHORTEST_KEPT_SIDE_MS : 0, end_ms: atEnd ? duration : after - SHORTEST_KEPT_SIDE_MS };
        const cut = shortenedPause(heard, clear, input.kept_pause_ms, wordBefore, edges, input.breaths ?? []);
        if (cut) cuts.push(cut);
        continue;
      }
      const silence = silences[index]!;
      const heardUntil = silence.start_ms > 0 ? silence.start_ms + WORD_TAIL_MS : 0;
      const heardFrom = silence.end_ms < duration ? silence.end_ms - WORD_LEAD_IN_MS : duration;
      const lowest = Math.max(pause.start_ms, safeFrom, heardUntil);
      const highest = Math.min(pause.end_ms, safeTo, heardFrom);
      if (highest - lowest < MIN_CUT_MS) continue;
      // A boundary at a source edge stays there: there is nothing to join it to.
      const start = lowest === 0 ? 0 : snapToQuietest(lowest, lowest, highest - MIN_CUT_MS, envelope);
      const end = highest === duration ? duration : snapToQuietest(highest, start + MIN_CUT_MS, highest, envelope);
      const breathed = input.breaths?.some((breath) => breath.start_ms < end && start < breath.end_ms) ?? false;
      cuts.push({ type: 'silence', start_ms: start, end_ms: end, reason: `Pause of ${(pauseMs / 1000).toFixed(1)} s${breathed ? ' (a breath in it, removed with it)' : ''}`, words: null });
    }
  }
  return cuts;
}

/**
 * Where the detector's speech regions lie against the sound, measured on bench/analysis-
 * robustness's clean talks (10 long pauses between recorded prompts, throwaway script) and on
 * the journey test's flite talk: a region ends 5–17 ms (median 15) after the sound does and
 * begins 14–31 ms (median 24) before it (the band level above 1 kHz comes from a longer FFT
 * window than the 10 ms frame, and it extends a region). A pause measured from the
 * detector's edges is that much shorter than the silence a listener, or silencedetect, hears.
 */
export const DETECTED_END_LAG_MS = 15;
export const DETECTED_ONSET_LEAD_MS = 24;

/**
 * The pause a listener hears between two words: the detected silence (the speech
 * detector's widened by its measured lag and lead, DETECTED_END_LAG_MS and
 * DETECTED_ONSET_LEAD_MS), where a
 * word the recognizer timed into it reaches in over quiet frames only (Whisper starts a
 * word up to ~100 ms before its sound, measured on the journey test's talk), judged past the
 * detector's lag (lead) next to its edge, where the sound's last (first) faint frame lies
 * (bench/analysis-robustness: judged from the edge, such frames made 5 long pauses start at a
 * word timed 52–56 ms late, keeping 43–63 ms too much, and 2 end at one timed 35 ms early);
 * else up to the word. A word's quiet reach counts at most WORD_REACH_MS (heardWords trims a longer one).
 * A source's edge stays where it is.
 */
function heardPause(silence: Span, between: Span, quiet: QuietTest | null, duration: number, detected: boolean): Span {
  const detectedStart = Math.max(0, silence.start_ms - (detected && silence.start_ms > 0 ? DETECTED_END_LAG_MS : 0));
  const detectedEnd = Math.min(duration, silence.end_ms + (detected && silence.end_ms < duration ? DETECTED_ONSET_LEAD_MS : 0));
  // the frames within the detector's measured lag (lead) of its edge hold the sound's last (first) frames: the reach is judged past them
  const fromDetector = (reach: Span, skip: Span): boolean => reach.end_ms - reach.start_ms <= WORD_REACH_MS && (skip.end_ms <= skip.start_ms || (quiet?.(skip.start_ms, skip.end_ms) ?? false));
  const endLag = detected ? DETECTED_END_LAG_MS : 0;
  const onsetLead = detected ? DETECTED_ONSET_LEAD_MS : 0;
  const start = between.start_ms <= silence.start_ms || fromDetector({ start_ms: silence.start_ms, end_ms: between.start_ms }, { start_ms: silence.start_ms + endLag, end_ms: between.start_ms }) ? detectedStart : between.start_ms;
  const end = between.end_ms >= silence.end_ms || fromDetector({ start_ms: between.end_ms, end_ms: silence.end_ms }, { start_ms: between.end_ms, end_ms: silence.end_ms - onsetLead }) ? detectedEnd : between.end_ms;
  return { start_ms: start, end_ms: end };
}

/**
 * A pause shortened to `keptMs` (issue 39): the cut removes the pause's middle and keeps
 * keptMs of it, keptSplitAfter(the word before) of that after the speech before it and the
 * rest before the speech after it, so the kept part is measured from the speech's own
 * edges (heardPause): the output's pause lasts keptMs as a listener, or silencedetect,
 * hears it. The removed range stays SHORTEST_KEPT_SIDE_MS clear of every recognized word
 * (`clear`: a recording's faint tail under its noise floor, which the detector cannot hear,
 * still lies under its word, as far as the recognizer heard it); where it would come nearer,
 * it stops there and the pause keeps more on that side. At a
 * source's start only the part before the first word stays (what stays before a sentence),
 * at its end only the part after the last word: two sources joined keep one pause between
 * them. A pause with speech on neither side goes whole. None when less than MIN_CUT_MS
 * would go. The removed range is the contract's removedRange, the editing core's reading.
 */
function shortenedPause(pause: Span, clear: Span, keptMs: number, wordBefore: SpokenWord | null, { atStart, atEnd }: { atStart: boolean; atEnd: boolean }, breaths: readonly Span[]): Cut | null {
  const split = keptSplitAfter(wordBefore);
  let kept = keptMs;
  let keptSplit = split;
  if (atStart && atEnd) kept = 0;
  else if (atStart) {
    kept = keptMs - keptBeforeMs(keptMs, SPLIT_AFTER_SENTENCE);
    keptSplit = 0;
  } else if (atEnd) {
    kept = keptBeforeMs(keptMs, split);
    keptSplit = 1;
  }
  const held = breaths.filter((breath) => breath.start_ms < pause.end_ms && pause.start_ms < breath.end_ms);
  const breath = held.length ? { start_ms: Math.max(pause.start_ms, held[0]!.start_ms), end_ms: Math.min(pause.end_ms, Math.max(...held.map((one) => one.end_ms))) } : null;
  const planned = removedRange(pause.start_ms, pause.end_ms, { keptMs: kept, keptSplit, breath: null, keepBreath: false });
  // never near a word's time, however the recognizer placed it: the pause then keeps more on that side
  const removed = planned && { startMs: Math.max(planned.startMs, clear.start_ms), endMs: Math.min(planned.endMs, clear.end_ms) };
  if (!removed || removed.endMs - removed.startMs < MIN_CUT_MS) return null;
  const before = removed.startMs - pause.start_ms;
  kept = before + (pause.end_ms - removed.endMs);
  const breathed = breath !== null && breath.start_ms < removed.endMs && removed.startMs < breath.end_ms;
  const pauseMs = pause.end_ms - pause.start_ms;
  return {
    type: 'silence',
    start_ms: removed.startMs,
    end_ms: removed.endMs,
    // what of it stays is said by the plan (sourcePlanOf), once another cut beside it may have taken a kept side
    reason: `Pause of ${(pauseMs / 1000).toFixed(1)} s${breathed ? ' (a breath in it, removed with it)' : ''}`,
    words: null,
    kept: { before_ms: before, after_ms: kept - before, breath },
  };
}
