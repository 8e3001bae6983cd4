import type { EnergyEnvelope } from './energy.ts';
import { toDbfs } from './energy.ts';
import { MIN_CUT_MS, type Cut, type Span } from './spans.ts';
import { WORD_LEAD_IN_MS, WORD_TAIL_MS, type SpokenWord } from './words.ts';

/** Below this a frame is silent (ffmpeg `silencedetect=noise=-35dB` agrees on generated speech). */
export const SILENCE_THRESHOLD_DB = -35;
/** Quiet shorter than this is a stop consonant or a breath between words, not a pause. */
export const MIN_SILENCE_MS = 300;
/** How far a cut boundary may move to land on the quietest frame. */
export const SNAP_WINDOW_MS = 50;

/**
 * The silences in ffmpeg `silencedetect` output (stderr). A silence still open at the
 * end runs to the duration; ends past the duration (AAC padding) are clamped to it.
 */
export function parseSilenceDetect(stderr: string, durationMs: number): Span[] {
  const silences: Span[] = [];
  let openStart: number | null = null;
  for (const match of stderr.matchAll(/silence_(start|end): (-?[\d.]+)/g)) {
    const ms = Math.min(durationMs, Math.max(0, Math.round(Number(match[2]) * 1000)));
    if (match[1] === 'start') openStart = ms;
    else if (openStart !== null) {
      if (ms > openStart) silences.push({ start_ms: openStart, end_ms: ms });
      openStart = null;
    }
  }
  if (openStart !== null && durationMs > openStart) silences.push({ start_ms: openStart, end_ms: durationMs });
  return silences;
}

export interface SilenceDetection {
  threshold_db?: number;
  min_silence_ms?: number;
}

/** Runs of frames quieter than the threshold, at least `min_silence_ms` long: the same rule as silencedetect, on the envelope. */
export function silencesFromEnvelope(envelope: EnergyEnvelope, options: SilenceDetection = {}, durationMs = envelope.rms.length * envelope.frame_ms): Span[] {
  const threshold = options.threshold_db ?? SILENCE_THRESHOLD_DB;
  const minimum = options.min_silence_ms ?? MIN_SILENCE_MS;
  const silences: Span[] = [];
  let runStart = -1;
  const close = (endFrame: number): void => {
    const span = { start_ms: runStart * envelope.frame_ms, end_ms: Math.min(durationMs, endFrame * envelope.frame_ms) };
    if (span.end_ms - span.start_ms >= minimum) silences.push(span);
    runStart = -1;
  };
  for (let frame = 0; frame < envelope.rms.length; frame += 1) {
    const quiet = toDbfs(envelope.rms[frame] ?? 0) < threshold;
    if (quiet && runStart < 0) runStart = frame;
    else if (!quiet && runStart >= 0) close(frame);
  }
  if (runStart >= 0) close(envelope.rms.length);
  return silences;
}

/** Loudness at a boundary between frames: the louder of the two frames it separates. */
function boundaryLoudness(envelope: EnergyEnvelope, frame: number): number {
  const before = envelope.rms[frame - 1];
  const after = envelope.rms[frame];
  return Math.max(before ?? after ?? 0, after ?? before ?? 0);
}

/**
 * Moves a cut boundary to the quietest frame boundary within SNAP_WINDOW_MS of it,
 * never outside [lowest, highest]; the nearest wins a tie. No frame boundary in
 * range, or no envelope: the boundary stays.
 */
export function snapToQuietest(ms: number, lowest: number, highest: number, envelope: EnergyEnvelope | null): number {
  if (!envelope || envelope.rms.length === 0) return ms;
  const frameMs = envelope.frame_ms;
  const from = Math.ceil(Math.max(lowest, ms - SNAP_WINDOW_MS) / frameMs);
  const to = Math.floor(Math.min(highest, ms + SNAP_WINDOW_MS) / frameMs);
  let best = ms;
  let bestLoudness = Infinity;
  let bestDistance = Infinity;
  for (let frame = from; frame <= to; frame += 1) {
    const loudness = boundaryLoudness(envelope, frame);
    const distance = Math.abs(frame * frameMs - ms);
    if (loudness < bestLoudness || (loudness === bestLoudness && distance < bestDistance)) {
      best = frame * frameMs;
      bestLoudness = loudness;
      bestDistance = distance;
    }
  }
  return best;
}

export interface SilenceCutInput {
  duration_ms: number;
  /** In time order. */
  words: readonly SpokenWord[];
  /** Detected silences, in time order and disjoint (silencedetect, the envelope, or a VAD's gaps). */
  silences: readonly Span[];
  envelope: EnergyEnvelope | null;
  /** minimumPauseMs(pacing_level). */
  minimum_pause_ms: number;
}

/**
 * Pauses worth cutting. A pause is the part of a detected silence that lies between
 * two recognized words (or before the first, after the last); one at least
 * `minimum_pause_ms` long is cut, but only from WORD_TAIL_MS after the word before
 * it to WORD_LEAD_IN_MS before the word after it, and only where the detector heard
 * silence, each boundary snapped to the quietest frame nearby. So a cut never
 * touches a recognized word or its guard bands, nor anything audible the recognizer
 * missed. Source edges need no guard band.
 */
export function findSilenceCuts(input: SilenceCutInput): Cut[] {
  const { words, silences, envelope, duration_ms: duration } = input;
  const cuts: Cut[] = [];
  let firstSilence = 0;
  let spokenUntil = 0;
  for (let gap = 0; gap <= words.length; gap += 1) {
    const before = gap > 0 ? spokenUntil : 0;
    const after = gap < words.length ? words[gap]!.start_ms : duration;
    const safeFrom = gap > 0 ? before + WORD_TAIL_MS : 0;
    const safeTo = gap < words.length ? after - WORD_LEAD_IN_MS : duration;
    if (gap < words.length) spokenUntil = Math.max(spokenUntil, words[gap]!.end_ms);
    if (after <= before) continue;
    while (firstSilence < silences.length && silences[firstSilence]!.end_ms <= before) firstSilence += 1;
    for (let index = firstSilence; index < silences.length && silences[index]!.start_ms < after; index += 1) {
      const pause = { start_ms: Math.max(silences[index]!.start_ms, before), end_ms: Math.min(silences[index]!.end_ms, after) };
      const pauseMs = pause.end_ms - pause.start_ms;
      if (pauseMs < input.minimum_pause_ms) continue;
      const lowest = Math.max(pause.start_ms, safeFrom);
      const highest = Math.min(pause.end_ms, safeTo);
      if (highest - lowest < MIN_CUT_MS) continue;
      // A boundary at a source edge stays there: there is nothing to join it to.
      let start = lowest === 0 ? 0 : snapToQuietest(lowest, lowest, highest - MIN_CUT_MS, envelope);
      let end = highest === duration ? duration : snapToQuietest(highest, start + MIN_CUT_MS, highest, envelope);
      if (end - start < MIN_CUT_MS) {
        start = lowest;
        end = highest;
      }
      cuts.push({ type: 'silence', start_ms: start, end_ms: end, reason: `Pause of ${(pauseMs / 1000).toFixed(1)} s`, words: null });
    }
  }
  return cuts;
}
