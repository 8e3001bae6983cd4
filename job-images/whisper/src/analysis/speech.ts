import { toDbfs, type EnergyEnvelope } from './energy.ts';
import type { Span } from './spans.ts';

/**
 * Speech found relative to the recording itself (adaptive energy, issue 21).
 *
 * A fixed level (the old −35 dBFS) calls a fan's noise floor speech everywhere and a
 * quiet voice's word tails silence. Instead, per source:
 *
 * - the envelope is smoothed (power mean over SMOOTH_FRAMES frames), so one noisy
 *   10 ms frame neither starts nor ends speech;
 * - the noise floor is the FLOOR_PERCENTILE of the smoothed levels (the pauses and
 *   room tone), the speech level the SPEECH_PERCENTILE (the voiced frames); digital
 *   silence counts as a floor DEEPEST_FLOOR_DB under the speech level;
 * - two levels with hysteresis: speech starts where the level reaches `on_db` (well
 *   above the floor, within ON_BELOW_SPEECH_DB of the speech level) and extends both
 *   ways while it stays at or above `off_db` (just over the floor): a word's acoustic
 *   onset and its tail down to the local floor belong to it;
 * - a seed with fewer than MIN_SPEECH_FRAMES frames at `on_db` (a click) is not speech.
 *
 * Every level is relative to the recording's own floor and speech level, so gain alone
 * does not change what is speech. Where the speech level stands less than
 * WEAK_MARGIN_DB over the floor, or the floor itself is above LOUD_FLOOR_DBFS, speech
 * cannot be told from noise: the detection says so (`weak`), and the plan offers its
 * pauses inactive instead of cutting them.
 */
const SMOOTH_FRAMES = 3;
const FLOOR_PERCENTILE = 0.1;
const SPEECH_PERCENTILE = 0.95;
/** A floor deeper than this under the speech level is as good as digital silence. */
const DEEPEST_FLOOR_DB = 60;
/** `off_db`: this far over the floor, and no deeper than OFF_BELOW_SPEECH_DB under the speech level (so a floor from digital silence to −38 dBFS moves a boundary little). */
const OFF_OVER_FLOOR_DB = 6;
const OFF_BELOW_SPEECH_DB = 28;
/** `on_db`: this far over `off_db` at least, and no more than ON_BELOW_SPEECH_DB under the speech level. */
const ON_OVER_OFF_DB = 6;
const ON_BELOW_SPEECH_DB = 25;
const MIN_SPEECH_FRAMES = 4;
/** Under this margin (speech level over floor) the evidence is weak. */
export const WEAK_MARGIN_DB = 15;
/** A floor above this (dBFS RMS) is no quiet room. */
export const LOUD_FLOOR_DBFS = -30;
/** The level of a frame of digital silence. */
const SILENT_DB = -120;

export interface SpeechDetection {
  /** Speech regions, ms, in order and disjoint. */
  speech: Span[];
  /** Estimated noise floor, dBFS (SILENT_DB for digital silence). */
  floor_db: number;
  /** Estimated speech level, dBFS. */
  speech_db: number;
  /** speech_db − the floor used (digital silence counts as DEEPEST_FLOOR_DB under speech). */
  margin_db: number;
  on_db: number;
  off_db: number;
  /** Why speech cannot be told from the noise; null when it can. */
  weak: string | null;
}

function percentile(sorted: Float64Array, share: number): number {
  if (sorted.length === 0) return SILENT_DB;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(share * (sorted.length - 1))))]!;
}

/** Level of each frame, dBFS, as the power mean over SMOOTH_FRAMES frames centred on it. */
function smoothedLevels(envelope: EnergyEnvelope): Float64Array {
  const { rms } = envelope;
  const levels = new Float64Array(rms.length);
  const half = Math.floor(SMOOTH_FRAMES / 2);
  for (let frame = 0; frame < rms.length; frame += 1) {
    let power = 0;
    let count = 0;
    for (let at = Math.max(0, frame - half); at <= Math.min(rms.length - 1, frame + half); at += 1) {
      const value = rms[at]!;
      if (Number.isFinite(value)) {
        power += value * value;
        count += 1;
      }
    }
    levels[frame] = Math.max(SILENT_DB, toDbfs(count > 0 ? Math.sqrt(power / count) : 0));
  }
  return levels;
}

function rawLevel(envelope: EnergyEnvelope, frame: number): number {
  const value = envelope.rms[frame] ?? 0;
  return Number.isFinite(value) ? Math.max(SILENT_DB, toDbfs(value)) : SILENT_DB;
}

/** Speech regions of a source's envelope, and the levels they were found with. */
export function detectSpeech(envelope: EnergyEnvelope, durationMs = envelope.rms.length * envelope.frame_ms): SpeechDetection {
  const levels = smoothedLevels(envelope);
  const sorted = Float64Array.from(levels).sort();
  const floor = percentile(sorted, FLOOR_PERCENTILE);
  const speechDb = percentile(sorted, SPEECH_PERCENTILE);
  const floorUsed = Math.max(floor, speechDb - DEEPEST_FLOOR_DB);
  const margin = speechDb - floorUsed;
  const off = Math.max(floorUsed + OFF_OVER_FLOOR_DB, speechDb - OFF_BELOW_SPEECH_DB);
  const on = Math.max(off + ON_OVER_OFF_DB, speechDb - ON_BELOW_SPEECH_DB);
  let weak: string | null = null;
  if (levels.length > 0 && speechDb <= SILENT_DB) weak = 'no sound at all';
  else if (levels.length > 0 && floor > LOUD_FLOOR_DBFS) weak = `noise floor ${floor.toFixed(0)} dBFS is above ${LOUD_FLOOR_DBFS} dBFS`;
  else if (levels.length > 0 && margin < WEAK_MARGIN_DB) weak = `speech only ${margin.toFixed(0)} dB over the noise floor (${WEAK_MARGIN_DB} dB needed)`;

  const frameMs = envelope.frame_ms;
  const speech: Span[] = [];
  let frame = 0;
  while (frame < levels.length) {
    if (levels[frame]! < on) {
      frame += 1;
      continue;
    }
    let start = frame;
    while (start > 0 && levels[start - 1]! >= off) start -= 1;
    let end = frame;
    let seeds = 0;
    while (end < levels.length && levels[end]! >= off) {
      if (rawLevel(envelope, end) >= on) seeds += 1;
      end += 1;
    }
    if (seeds >= MIN_SPEECH_FRAMES) {
      const span = { start_ms: start * frameMs, end_ms: Math.min(durationMs, end * frameMs) };
      const last = speech.at(-1);
      if (last && span.start_ms <= last.end_ms) last.end_ms = Math.max(last.end_ms, span.end_ms);
      else if (span.end_ms > span.start_ms) speech.push(span);
    }
    frame = Math.max(end, frame + 1);
  }
  return { speech, floor_db: floor, speech_db: speechDb, margin_db: margin, on_db: on, off_db: off, weak };
}

/** The stretches of [0, duration] between speech regions, at least `minimumMs` long. */
export function silencesBetween(speech: readonly Span[], durationMs: number, minimumMs: number): Span[] {
  const silences: Span[] = [];
  let from = 0;
  for (const region of speech) {
    if (region.start_ms - from >= minimumMs) silences.push({ start_ms: from, end_ms: region.start_ms });
    from = Math.max(from, region.end_ms);
  }
  if (durationMs - from >= minimumMs) silences.push({ start_ms: from, end_ms: durationMs });
  return silences;
}

/** The envelope with the levels of a detection: frames under `off_db` tie when a boundary snaps; `on_db` can start speech. */
export function withFloor(envelope: EnergyEnvelope, detection: SpeechDetection): EnergyEnvelope {
  return { ...envelope, floor_rms: 10 ** (detection.off_db / 20), onset_rms: 10 ** (detection.on_db / 20), noise_rms: 10 ** ((detection.floor_db + OFF_OVER_FLOOR_DB) / 20) };
}
