import { toDbfs, type EnergyEnvelope } from './energy.ts';
import { MIN_CUT_MS, spansOverlap, type Cut, type Span } from './spans.ts';
import type { SpokenWord } from './words.ts';

/**
 * Filled pauses found by their sound (issue 39): Whisper, the embedded recognizer, leaves
 * "um" and "uh" out of its words by design, so a filler rule over the transcript finds none.
 * A filled pause ("um", "uh", "er", "ah", "mm") is one vowel or nasal held: voiced (its level
 * lies low in the spectrum, as a vowel's does, unlike a breath's or a fricative's hiss),
 * steady (its spectral envelope, the cepstra, hardly moves from frame to frame, where a word's
 * moves with every phoneme), 150–1000 ms long, heard where the recognizer heard no word. The
 * features are the analysis's own (the envelope's level, its level above 1 kHz and its cepstra):
 * nothing is measured twice.
 *
 * A hum under the talk is the floor (it never rises to the speech level); a hum's partials lie
 * under 1 kHz, so nothing of it reaches the band above (a voice's upper formants do); a steady
 * noise (a fan, a rumble) is steady only on average: its 25 ms spectra jump from frame to frame.
 */

/** A filled pause is at least this long (a shorter voiced blip is a syllable) … */
export const FILLER_MIN_MS = 150;
/** … and at most this long (a longer held sound is singing, a hum or a drone). */
export const FILLER_MAX_MS = 1000;
/** A frame is steady when its cepstra over ±STEADY_REACH frames move by less than this (mean per coefficient, in units of the coefficient's spread over the recording's sound). */
const STEADY_CHANGE = 0.65;
const STEADY_REACH = 2;
/** Voiced: the level above 1 kHz lies at least this far under the whole (a vowel −10 to −30 dB, a breath −1 to −6, speech.ts) … */
const VOICED_HISS_DB = -9;
/** … but not this far (a hum's partials, all under 1 kHz, leave the band above at the floor; a vowel's upper formants are there). */
const HUM_HISS_DB = -45;
/** A filler's body: its frames within this of its loudest. */
const BODY_DB = 12;
/** A voiced sound's mean spectrum has formants: a contrast (formantContrast) under this is a noise's smooth spectrum. */
const FORMANT_CONTRAST = 8;
/** A filler's loudest frames reach within this of the recording's speech level (detectSpeech's onset, or, without it, this under the loudest frames). */
const NEAR_SPEECH_DB = 30;
/** An "um" is two steady sounds ("uh" then "m"), and a drawn-out vowel wavers: steady runs this close are one sound … */
const JOIN_GAP_MS = 100;
/** … unless the level between them dips this far (see steadyRuns). */
const DIP_DB = 10;
/** A filler's frames lie within this of its median level: frames under it at its edges are its fade, inside it a dip between two sounds. */
const SPLIT_DB = 15;
/**
 * A filler's sound may only reach this far into a heard word's span (the recognizer's 20 ms
 * steps); further, and it is that word's own held sound ("sooo", a sentence's last vowel drawn
 * out past the recognizer's word end) — unless the word lends it its time (lendsItsTime).
 */
const INSIDE_WORD_MS = 40;
/** A nasal's level above 1 kHz lies this far under its whole, at least; an "um"'s second half this much under its first. */
const MM_HISS_DB = -30;
const UM_DROP_DB = 8;
const NUCLEUS_MS = 60;
/** The longest a word takes to say: this and LETTER_MS a letter (English runs at 12–15 letters a second). */
const LONGEST_SAY_MS = 150;
const LETTER_MS = 90;
/** A word timed from this little before a sound still starts in it (the recognizer's 20 ms steps, the sound's onset). */
const START_SLACK_MS = 50;
/**
 * Whisper spells a filled pause it does not drop as a word of its own, timed from the sound's start
 * ("To" p 0.73 over an "uh", "He" p 0.01, "You" p 0.72–0.86 and "Ella," p 0–0.48 over an "mm",
 * "Ah." p 0.2): under this probability such a word is the sound as heard (a sure short word timed
 * there, "The" p 0.93 in a reverberant room, is a word).
 */
const UNSURE_WORD = 0.85;
/** A filler's fade is followed down to the room's noise: detectSpeech's floor, this under its `noise_rms` (a 190 ms "uh" over 60 Hz hum fades under `floor_rms` for a third of its length). */
const ROOM_UNDER_NOISE_DB = 6;
/**
 * A word of its own length ends inside a hesitation after it only when the sound runs this far past
 * the word's end: nearer, the sound is the word's own last syllable timed a little early (a recognizer's
 * word ends lie within ±80 ms of the sound's).
 */
const PAST_WORD_END_MS = 100;
/** A pause this long at the floor parts a word's own sound from a hesitation after it that the recognizer timed into the word ("you" 5190–5590 over an "er" at 5333–5763). */
const PAUSE_MS = 40;

/** What one filled pause sounds like: where it lies, what it is like, how sure the detector is. */
export interface FillerSound extends Span {
  /** "um", "uh" or "mm": what it sounds most like (vowelOf), for the reason. */
  sounds_like: FillerVowel;
  /** 0–1 (fillerConfidence). */
  confidence: number;
}

export type FillerVowel = 'um' | 'uh' | 'mm';

/** Per frame: level (dBFS), level above 1 kHz against the whole (dB), spectral change (see STEADY_CHANGE). */
interface FrameFeatures {
  level: Float64Array;
  hiss: Float64Array;
  change: Float64Array;
  /** The level a filler must come near: the recording's speech onset, or its loudest less NEAR_SPEECH_DB. */
  near_db: number;
  /** Frames at or under this are the floor. */
  floor_db: number;
  /** The room's own noise (detectSpeech's floor, under `floor_db`): a filler's fade is followed down to it. */
  room_db: number;
}

const FEATURES = new WeakMap<EnergyEnvelope, FrameFeatures | null>();

function percentile(values: Float64Array, share: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(share * (sorted.length - 1)))]! : -120;
}

/** The frame features of an envelope with cepstra and the band above 1 kHz (null without them: nothing to tell a filler by). */
function featuresOf(envelope: EnergyEnvelope): FrameFeatures | null {
  if (FEATURES.has(envelope)) return FEATURES.get(envelope)!;
  const { cepstra, high_rms: high } = envelope;
  let features: FrameFeatures | null = null;
  if (cepstra && high && cepstra.values.length > 0) {
    const frames = Math.min(envelope.rms.length, cepstra.values.length / cepstra.dims, high.length);
    const level = new Float64Array(frames);
    const hiss = new Float64Array(frames);
    for (let frame = 0; frame < frames; frame += 1) {
      level[frame] = Math.max(-120, toDbfs(envelope.rms[frame]!));
      hiss[frame] = toDbfs(high[frame]! + 1e-9) - toDbfs(envelope.rms[frame]! + 1e-9);
    }
    const floorDb = envelope.floor_rms ? toDbfs(envelope.floor_rms) : percentile(level, 0.1) + 6;
    const nearDb = envelope.onset_rms ? toDbfs(envelope.onset_rms) : percentile(level, 0.95) - NEAR_SPEECH_DB;
    features = { level, hiss, change: spectralChange(cepstra.values, cepstra.dims, frames, level, floorDb), near_db: nearDb, floor_db: floorDb, room_db: envelope.noise_rms ? Math.min(floorDb, toDbfs(envelope.noise_rms) - ROOM_UNDER_NOISE_DB) : floorDb };
  }
  FEATURES.set(envelope, features);
  return features;
}

/** How far each frame's cepstra move over ±STEADY_REACH frames, each coefficient in units of its spread over the frames above the floor. */
function spectralChange(values: Float32Array, dims: number, frames: number, level: Float64Array, floorDb: number): Float64Array {
  const spread = new Float64Array(dims);
  const mean = new Float64Array(dims);
  let counted = 0;
  for (let frame = 0; frame < frames; frame += 1) {
    if (level[frame]! <= floorDb) continue;
    counted += 1;
    for (let dim = 0; dim < dims; dim += 1) mean[dim]! += values[frame * dims + dim]!;
  }
  for (let dim = 0; dim < dims; dim += 1) mean[dim]! /= Math.max(1, counted);
  for (let frame = 0; frame < frames; frame += 1) {
    if (level[frame]! <= floorDb) continue;
    for (let dim = 0; dim < dims; dim += 1) spread[dim]! += (values[frame * dims + dim]! - mean[dim]!) ** 2;
  }
  for (let dim = 0; dim < dims; dim += 1) spread[dim] = Math.sqrt(spread[dim]! / Math.max(1, counted)) || 1;
  const change = new Float64Array(frames).fill(Infinity);
  for (let frame = STEADY_REACH; frame < frames - STEADY_REACH; frame += 1) {
    let sum = 0;
    for (let dim = 0; dim < dims; dim += 1) sum += Math.abs(values[(frame + STEADY_REACH) * dims + dim]! - values[(frame - STEADY_REACH) * dims + dim]!) / spread[dim]!;
    change[frame] = sum / dims;
  }
  return change;
}

/**
 * How sure a stretch is a filled pause, 0–1 (two decimals): the share of its body's frames
 * (BODY_DB) that are steady, voiced and over the floor, weighed by how far under STEADY_CHANGE its median change
 * lies; 0 for a stretch outside FILLER_MIN_MS–FILLER_MAX_MS, one that never nears the speech
 * level, one that hums (HUM_HISS_DB) or one with no formants (FORMANT_CONTRAST: a noise). The same measure finds a filler and rates an edit.
 */
export function fillerConfidence(span: Span, envelope: EnergyEnvelope | null): number {
  const features = envelope && featuresOf(envelope);
  if (!features || !envelope) return 0;
  const length = span.end_ms - span.start_ms;
  if (length < FILLER_MIN_MS || length > FILLER_MAX_MS) return 0;
  const frameMs = envelope.frame_ms;
  const from = Math.max(0, Math.round(span.start_ms / frameMs));
  const to = Math.min(features.level.length, Math.round(span.end_ms / frameMs));
  if (to - from < 2) return 0;
  let good = 0;
  let body = 0;
  const loudest = Math.max(...features.level.subarray(from, to));
  const changes: number[] = [];
  const hisses: number[] = [];
  // its body: the frames within BODY_DB of its loudest (its fade in and out say nothing of how steady it is)
  for (let frame = from; frame < to; frame += 1) {
    if (features.level[frame]! <= features.floor_db || features.level[frame]! < loudest - BODY_DB) continue;
    body += 1;
    changes.push(features.change[frame]!);
    hisses.push(features.hiss[frame]!);
    if (steadyVoiced(features, frame)) good += 1;
  }
  if (loudest < features.near_db || changes.length === 0 || formantContrast(envelope, from, to) < FORMANT_CONTRAST) return 0;
  changes.sort((a, b) => a - b);
  hisses.sort((a, b) => a - b);
  if (hisses[Math.floor(hisses.length / 2)]! < HUM_HISS_DB) return 0;
  const median = changes[Math.floor(changes.length / 2)]!;
  const steadiness = Math.min(1, Math.max(0, (STEADY_CHANGE - median) / (STEADY_CHANGE / 2)));
  const share = good / body;
  return Math.round(Math.min(1, share * (0.5 + 0.5 * steadiness)) * 100) / 100;
}

/**
 * How far the mean spectral envelope of frames [from, to) stands from a smooth slope: the norm of
 * its mean cepstra past the first (the tilt). A vowel's formants give 13–33 (the corpus's
 * fillers, synthetic vowels), a noise's smooth spectrum 1–4 (pink, brown), its frames' random
 * ripples averaging out.
 */
function formantContrast(envelope: EnergyEnvelope, from: number, to: number): number {
  const { dims, values } = envelope.cepstra!;
  let sum = 0;
  for (let dim = 1; dim < dims; dim += 1) {
    let mean = 0;
    for (let frame = from; frame < to; frame += 1) mean += values[frame * dims + dim]!;
    sum += (mean / (to - from)) ** 2;
  }
  return Math.sqrt(sum);
}

function steadyVoiced(features: FrameFeatures, frame: number): boolean {
  const hiss = features.hiss[frame]!;
  return features.level[frame]! > features.floor_db && features.change[frame]! < STEADY_CHANGE && hiss < VOICED_HISS_DB && hiss >= HUM_HISS_DB;
}

/**
 * Which filler a steady sound is, as far as its level above 1 kHz tells: a nasal "mm" has next
 * to nothing up there (MM_HISS_DB), an "um" closes on its nasal (its second half UM_DROP_DB
 * under its first), anything else is an "uh" (the vowels of "uh", "er" and "ah" differ in
 * formants the envelope does not resolve: they are all named "uh").
 */
function vowelOf(features: FrameFeatures, from: number, to: number): FillerVowel {
  const median = (start: number, end: number): number => {
    const values = Array.from(features.hiss.subarray(start, end)).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] ?? -Infinity;
  };
  const middle = Math.floor((from + to) / 2);
  if (median(from, to) < MM_HISS_DB) return 'mm';
  return median(from, middle) - median(middle, to) > UM_DROP_DB ? 'um' : 'uh';
}

/**
 * Runs of steady voiced frames [from, to): runs JOIN_GAP_MS apart are one sound when the level
 * between them never dips DIP_DB under the quieter of the two (an "um" glides from its vowel to
 * its nasal; a word's last vowel, a stop, then a filler are two sounds).
 */
function steadyRuns(features: FrameFeatures, frameMs: number): [number, number][] {
  const runs: [number, number][] = [];
  const join = Math.round(JOIN_GAP_MS / frameMs);
  const { level } = features;
  for (let frame = 0; frame < level.length; frame += 1) {
    if (!steadyVoiced(features, frame)) continue;
    const last = runs.at(-1);
    if (last && frame === last[1]) last[1] = frame + 1;
    else if (last && frame - last[1] <= join && Math.min(...level.subarray(last[1], frame)) >= Math.min(level[last[1] - 1]!, level[frame]!) - DIP_DB) last[1] = frame + 1;
    else runs.push([frame, frame + 1]);
  }
  return runs;
}

/** The run's edges moved out to where its sound fades to the floor (its onset and decay belong to it), never more than STEADY_REACH + 3 frames. */
function withEdges(features: FrameFeatures, [from, to]: [number, number]): [number, number] {
  const reach = STEADY_REACH + 3;
  let start = from;
  while (start > 0 && from - start < reach && features.level[start - 1]! > features.room_db) start -= 1;
  let end = to;
  while (end < features.level.length && end - to < reach && features.level[end]! > features.room_db) end += 1;
  return [start, end];
}

/**
 * The part of frames [from, to) that stands within SPLIT_DB of their median level, the longest
 * where a dip splits them: a word's faint last vowel run into a filler by the steady runs is
 * left to the word.
 */
function loudestPart(features: FrameFeatures, [from, to]: [number, number]): [number, number] {
  const levels = Array.from(features.level.subarray(from, to)).sort((a, b) => a - b);
  const bar = levels[Math.floor(levels.length / 2)]! - SPLIT_DB;
  let best: [number, number] = [from, from];
  for (let frame = from; frame < to; ) {
    if (features.level[frame]! < bar) {
      frame += 1;
      continue;
    }
    let end = frame;
    while (end < to && features.level[end]! >= bar) end += 1;
    if (end - frame > best[1] - best[0]) best = [frame, end];
    frame = end;
  }
  return best;
}

/**
 * The filled pauses of a source: steady voiced runs that come near the speech level, trimmed
 * off every heard word (a filler never overlaps one: a run reaching more than INSIDE_WORD_MS
 * inside a word is that word's held vowel, not a filler), FILLER_MIN_MS–FILLER_MAX_MS long and
 * at least `minimumConfidence` sure (fillerConfidence).
 */
export function findFillerSounds(envelope: EnergyEnvelope | null, words: readonly SpokenWord[], minimumConfidence: number): FillerSound[] {
  const features = envelope && featuresOf(envelope);
  if (!features || !envelope) return [];
  const frameMs = envelope.frame_ms;
  const found: FillerSound[] = [];
  for (const run of steadyRuns(features, frameMs)) {
    const [from, to] = loudestPart(features, withEdges(features, run));
    const heard: Span = { start_ms: from * frameMs, end_ms: to * frameMs };
    // a word whose own voiced sound lies elsewhere in its span only lends the filler its time (Whisper gives a filler's time to the word after it)
    const holding = words.filter((word) => spansOverlap(word, heard) && !lendsItsTime(features, word, heard, frameMs));
    const inside = holding.reduce((sum, word) => sum + Math.min(word.end_ms, heard.end_ms) - Math.max(word.start_ms, heard.start_ms), 0);
    if (inside > INSIDE_WORD_MS) continue;
    const span = outsideWords(heard, holding);
    if (!span || span.end_ms - span.start_ms < Math.max(FILLER_MIN_MS, MIN_CUT_MS)) continue;
    const confidence = fillerConfidence(span, envelope);
    if (confidence < minimumConfidence || confidence === 0) continue;
    found.push({ ...span, sounds_like: vowelOf(features, Math.round(span.start_ms / frameMs), Math.round(span.end_ms / frameMs)), confidence });
  }
  return found;
}

/**
 * Whether a recognizer timed `word` over the sound in `span` that is none of it:
 * - the word starts inside the sound and runs NUCLEUS_MS past it (Whisper gives a filler's time to
 *   the word after it: the word's own sound follows);
 * - the word is the sound as heard: it starts with the sound, ends inside it, is unsure
 *   (UNSURE_WORD) and nothing else in its span sounds (Whisper wrote the filler as "To" or "He");
 * - the word starts before the sound and holds NUCLEUS_MS of voiced sound of its own apart from
 *   it: past a DIP_DB dip when its span is longer than the word takes to say (LONGEST_SAY_MS and
 *   LETTER_MS a letter: "I" over half a second is an "um" and an "I"), past a pause (PAUSE_MS at
 *   the floor) when it is not but ends inside the sound (Whisper draws a word's end over the
 *   hesitation after it: "you" over an "er").
 * A word punctuated after (a phrase's end) keeps a sound at its end: a phrase's last syllable is
 * drawn out ("level," held on its "l"). A word of its own length keeps every vowel it holds,
 * however steady, and so does one whose held last sound runs on from its vowel without a break
 * ("I'm" held on its "m", "all" held in "drove all the way").
 */
function lendsItsTime(features: FrameFeatures, word: SpokenWord, span: Span, frameMs: number): boolean {
  if (word.start_ms >= span.start_ms - START_SLACK_MS && word.end_ms >= span.end_ms + NUCLEUS_MS) return true;
  if (word.start_ms <= span.start_ms + START_SLACK_MS && word.end_ms <= span.end_ms && (word.probability ?? 1) < UNSURE_WORD && !soundedApart(features, word, span, frameMs)) return true;
  if (word.start_ms >= span.start_ms - START_SLACK_MS) return false;
  const endsInIt = word.end_ms <= span.end_ms - PAST_WORD_END_MS;
  if (word.punctuated && span.end_ms >= word.end_ms - NUCLEUS_MS) return false;
  const long = word.end_ms - word.start_ms > LONGEST_SAY_MS + LETTER_MS * Math.max(1, word.match.length);
  if (!long && !endsInIt) return false;
  const [from, to] = [Math.round(span.start_ms / frameMs), Math.round(span.end_ms / frameMs)];
  const levels = Array.from(features.level.subarray(from, to)).sort((a, b) => a - b);
  const dip = long ? levels[Math.floor(levels.length / 2)]! - DIP_DB : features.floor_db + 1e-9;
  const voicedAt = (frame: number): boolean => features.level[frame]! > features.floor_db && features.hiss[frame]! < VOICED_HISS_DB;
  let voiced = 0;
  // the word's voiced frames before the sound count only past a dip, and so do those after it
  let apart = false;
  // a word of its own length lends only the sound it ends in, and only when a pause (PAUSE_MS at the floor) parts it from the word's own sound
  const pause = long ? 1 : Math.round(PAUSE_MS / frameMs);
  let quiet = 0;
  for (let frame = from - 1; frame >= Math.ceil(word.start_ms / frameMs); frame -= 1) {
    quiet = features.level[frame]! < dip ? quiet + 1 : 0;
    apart ||= quiet >= pause;
    if (apart && voicedAt(frame)) voiced += 1;
  }
  apart = false;
  for (let frame = to; frame < Math.min(features.level.length, Math.floor(word.end_ms / frameMs)); frame += 1) {
    apart ||= features.level[frame]! < dip;
    if (apart && voicedAt(frame)) voiced += 1;
  }
  return voiced * frameMs >= NUCLEUS_MS;
}

/** Whether any of `word`'s span outside `span` sounds (a frame over the floor): the word has a sound of its own. */
function soundedApart(features: FrameFeatures, word: SpokenWord, span: Span, frameMs: number): boolean {
  for (let frame = Math.round(word.start_ms / frameMs); frame < Math.min(features.level.length, Math.round(word.end_ms / frameMs)); frame += 1) {
    if (frame * frameMs >= span.start_ms && frame * frameMs < span.end_ms) continue;
    if (features.level[frame]! > features.floor_db) return true;
  }
  return false;
}

/** The longest part of `span` that no word overlaps. */
function outsideWords(span: Span, words: readonly SpokenWord[]): Span | null {
  let pieces: Span[] = [span];
  for (const word of words) {
    if (!spansOverlap(word, span)) continue;
    pieces = pieces.flatMap((piece) =>
      [
        { start_ms: piece.start_ms, end_ms: Math.min(piece.end_ms, word.start_ms) },
        { start_ms: Math.max(piece.start_ms, word.end_ms), end_ms: piece.end_ms },
      ].filter((part) => part.end_ms > part.start_ms),
    );
  }
  return pieces.reduce<Span | null>((best, piece) => (!best || piece.end_ms - piece.start_ms > best.end_ms - best.start_ms ? piece : best), null);
}

/**
 * false_start_sensitivity s (0–100) sets how sure a sound must be to be offered as a filler at all:
 * 0.85 at 0, 0.65 at 50, 0.45 at 100 (a filler is a disfluency as a false start is: one dial for
 * both). On the filler corpus heard by Whisper (bench/fillers, 13 conditions) the fillers found
 * scored 0.65–1 (median 0.87), the held ends of words offered in their stead 0.65–0.82 (median
 * 0.73); under 0.65, the steady vowels of words of the first runs (0.41–0.63).
 */
export function fillerOfferConfidence(sensitivity: number): number {
  return Math.round((0.85 - (0.4 * Math.min(100, Math.max(0, sensitivity))) / 100) * 100) / 100;
}

/**
 * A filler heard by its sound is applied (active) from this confidence on, and offered
 * otherwise: on the filler corpus heard by Whisper (bench/fillers, 13 conditions) the one
 * sound applied at 0.8 that was no filler (a sentence's last syllable held past the
 * recognizer's word end) scored 0.82; at 0.85 every applied filler edit was a filler.
 */
export const FILLER_APPLY_CONFIDENCE = 0.85;

/** The filler cuts of a source's sound: each filled pause one cut of its own, its reason naming the sound and its length. */
export function findFillerSoundCuts(envelope: EnergyEnvelope | null, words: readonly SpokenWord[], sensitivity: number): Cut[] {
  return findFillerSounds(envelope, words, fillerOfferConfidence(sensitivity)).map((sound) => ({
    type: 'filler',
    start_ms: sound.start_ms,
    end_ms: sound.end_ms,
    reason: `filler '${sound.sounds_like}' ${sound.end_ms - sound.start_ms} ms`,
    words: null,
  }));
}
