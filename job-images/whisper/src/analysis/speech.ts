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
 * - a seed with fewer than MIN_SPEECH_FRAMES frames at `on_db` (a click) is not speech;
 * - a word is found in the band where it stands out of the floor: a region also starts
 *   where the level above 1 kHz reaches that band's own `on`, and extends while it stays
 *   over that band's `off` (a final "s", or a quiet word, under mains hum, which has nothing
 *   up there, issue 38);
 * - a word's last sound parted from it by a dip joins it (joinTrailingSounds: a wavering
 *   tail, a final "s" after a stop's closure);
 * - a region whose own level lies OWN_LEVEL_BELOW_SPEECH_DB under the recording's is judged
 *   by its own: a quiet sentence between loud ones keeps its tail down to its own `off`;
 * - a quiet sentence is found at its neighbourhood's level (NEIGHBOURHOOD_MS), not only at
 *   the recording's, and one too faint for any level by sounding unlike the room's noise
 *   (faintVoice);
 * - a short region that never comes near the speech level and hisses (a breath, a mouth
 *   click) is no speech but a breath: a pause holds it unless the recognizer heard a word in it;
 * - a short region that sounds like the room's noise is a swell of the floor, no speech.
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
/**
 * The band above HIGH_BAND_HZ ends a word this far under that band's speech level: a final
 * "s" stands 25–35 dB under the vowels' upper formants there, and carries the word's end
 * where a low floor (mains hum) drowns it in the broadband level.
 */
const HIGH_OFF_BELOW_SPEECH_DB = 40;
/** `on_db`: this far over `off_db` at least, and no more than ON_BELOW_SPEECH_DB under the speech level. */
const ON_OVER_OFF_DB = 6;
const ON_BELOW_SPEECH_DB = 25;
const MIN_SPEECH_FRAMES = 4;
/**
 * A region whose own speech level lies this far under the recording's is judged by its own
 * level: its edges extend down to OFF_BELOW_SPEECH_DB under it (a quiet sentence among loud
 * ones keeps its tail, issue 38), never under the floor + OFF_OVER_FLOOR_DB.
 */
const OWN_LEVEL_BELOW_SPEECH_DB = 20;
/**
 * A quiet sentence is found at its neighbourhood's level: within NEIGHBOURHOOD_MS either
 * way of a frame, the loudest smoothed frame less NEIGHBOURHOOD_CREST_DB stands for the
 * speech level there, where it lies OWN_LEVEL_BELOW_SPEECH_DB under the recording's and at
 * least NEIGHBOURHOOD_OVER_FLOOR_DB over the floor (a sentence, not room tone: the loudest
 * moment of a noise floor stands 3–5 dB over it): `on` is then that level less
 * ON_BELOW_SPEECH_DB, never under `off` + ON_OVER_OFF_DB (so never under the floor + 12 dB).
 */
const NEIGHBOURHOOD_MS = 500;
const NEIGHBOURHOOD_CREST_DB = 5;
const NEIGHBOURHOOD_OVER_FLOOR_DB = 10;
/**
 * A voice too faint for the levels (faintVoice): a quiet sentence among loud ones whose body lies
 * 0–14 dB over the room is told from the room by what it sounds like. The room's noise is the
 * frames within NOISE_PROFILE_DB of the floor; a frame's distance from it is the RMS over the
 * cepstral coefficients of how many of the noise's own spreads (at least NOISE_MIN_SPREAD) it
 * lies from the noise's mean, capped at FAINT_CAP (a click's one or two frames weigh little).
 * Measured on bench/analysis-robustness's renderings (5 talks a condition, frames 600 ms or more
 * from any speech): the mean over ±FAINT_REACH_MS of noise alone reaches at most 1.07 in pink,
 * brown, room, AAC, reverberation and the telephone band, 1.19 in babble, 0.55 under hum; a
 * LibriVox sentence said 27 dB down over pink at −60 dBFS stays at 1.15–1.74, and over 1.3
 * (FAINT_DISTANCE) in all but 0.5 s of its 6.3 s. Only where the neighbourhood's loudest frame
 * stands FAINT_OVER_FLOOR_DB over the floor (noise alone in 1 s neighbourhoods: 7.6–8.0 dB in
 * pink and babble, 11–14 in the room and brown, where the distance tells) and is quiet for the
 * recording (OWN_LEVEL_BELOW_SPEECH_DB).
 */
const NOISE_PROFILE_DB = 3;
const NOISE_MIN_SPREAD = 0.1;
const FAINT_CAP = 3;
const FAINT_REACH_MS = 250;
const FAINT_DISTANCE = 1.3;
const FAINT_OVER_FLOOR_DB = 9;
/**
 * A swell of the floor (a brown floor's slow swings reach 11–14 dB over it in 1 s neighbourhoods)
 * can reach `on` for a moment: a region of at most NOISE_SWELL_MAX_MS whose frames sound like the
 * noise (unlikeNoise under NOISE_SWELL_DISTANCE: two brown swells at −38 dBFS measured 0.97 and
 * 1.00, the short regions of the prompts around them 1.9 and more) is no speech. Only where the
 * recording's speech sounds far from its noise (the median distance of its frames at `on`,
 * NOISE_SWELL_CONTRAST or more: 2.7–3.0 in brown, pink, the room and the other paths; 1.3–1.4 in
 * babble, whose noise is voices, and where a clip's last word measured under 1.2).
 */
const NOISE_SWELL_MAX_MS = 600;
const NOISE_SWELL_DISTANCE = 1.2;
const NOISE_SWELL_CONTRAST = 2.5;
/** A faint voice's run, trimmed to its frames over `floor + OFF_OVER_FLOOR_DB`, is this long at least. */
const FAINT_MIN_MS = 100;
/** A quiet region's tail under its `off` still over the floor + QUIET_TAIL_OVER_FLOOR_DB belongs to it, for up to QUIET_TAIL_FRAMES frames. */
const QUIET_TAIL_FRAMES = 10;
const QUIET_TAIL_OVER_FLOOR_DB = 3;
/**
 * A breath or a mouth click: a region of at most BREATH_MAX_MS with fewer than
 * MIN_SPEECH_FRAMES frames within BREATH_UNDER_SPEECH_DB of the speech level. A spoken
 * syllable at the talk's level has more; a breath (about 20–30 dB under the voice) or a
 * click (one or two loud frames) has not.
 */
const BREATH_MAX_MS = 600;
const BREATH_UNDER_SPEECH_DB = 15;
/**
 * … and, where the envelope carries the level above 1 kHz, a breath hisses: its median
 * frame has at least this much of its level up there (an inhalation's noise −1 to −6 dB,
 * through the telephone band too; a quiet voiced syllable −10 to −30 dB, measured on the
 * robustness corpus's renderings): a quiet sentence's syllables are no breath, however quiet.
 */
const BREATH_HISS_DB = -7;
/**
 * A word's last sound parted from it by a dip (joinTrailingSounds): TRAIL_RUN_FRAMES long at
 * least (a final fricative lasts 80–150 ms, a click one or two frames), starting within
 * TRAIL_DIP_MS of the word (its level wavering) or, standing clear of the floor, within
 * TRAIL_GAP_MS (a stop's closure, 50–230 ms in the corpus's recordings), all of it within
 * TRAIL_MAX_MS of where the word's region ended. Measured on bench/analysis-robustness (issue 38):
 * any run over `off` let a babble's wavering at `off` join words after a gap, and shortened its
 * pauses, as did a clear level of `off` + 3 dB; `off` + 6 (ON_OVER_OFF_DB) and + 8 dB both left
 * the babble's pauses as they were and kept every final "s".
 */
const TRAIL_RUN_FRAMES = 6;
const TRAIL_DIP_MS = 50;
const TRAIL_GAP_MS = 250;
const TRAIL_MAX_MS = 600;
/** Under this margin (speech level over floor) the evidence is weak. */
export const WEAK_MARGIN_DB = 15;
/** A floor above this (dBFS RMS) is no quiet room. */
export const LOUD_FLOOR_DBFS = -30;
/** The level of a frame of digital silence. */
const SILENT_DB = -120;

export interface SpeechDetection {
  /** Speech regions, ms, in order and disjoint; no breath among them. */
  speech: Span[];
  /** The regions that sound like a breath or a click (BREATH_MAX_MS), apart from `speech`: pauses, unless the recognizer heard a word in one (pausesHeard). */
  breaths: Span[];
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

function percentile(sorted: ArrayLike<number>, share: number): number {
  if (sorted.length === 0) return SILENT_DB;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(share * (sorted.length - 1))))]!;
}

/** Level of each frame, dBFS, as the power mean over SMOOTH_FRAMES frames centred on it. */
function smoothedLevels(rms: ArrayLike<number>): Float64Array {
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

/** A frame's own level above 1 kHz, dBFS (SILENT_DB where the envelope has none). */
function rawHighLevel(envelope: EnergyEnvelope, frame: number): number {
  const value = envelope.high_rms?.[frame] ?? 0;
  return Number.isFinite(value) ? Math.max(SILENT_DB, toDbfs(value)) : SILENT_DB;
}

/** One band's smoothed levels and the levels found in them: its floor (as used), its speech level and `off`. */
interface BandLevels {
  levels: Float64Array;
  floor: number;
  floorUsed: number;
  speech: number;
  off: number;
  /** How far under its speech level the band's `off` may lie. */
  belowSpeechDb: number;
}

function bandLevels(rms: ArrayLike<number>, belowSpeechDb = OFF_BELOW_SPEECH_DB): BandLevels {
  const levels = smoothedLevels(rms);
  const sorted = Float64Array.from(levels).sort();
  const floor = percentile(sorted, FLOOR_PERCENTILE);
  const speech = percentile(sorted, SPEECH_PERCENTILE);
  const floorUsed = Math.max(floor, speech - DEEPEST_FLOOR_DB);
  return { levels, floor, floorUsed, speech, off: Math.max(floorUsed + OFF_OVER_FLOOR_DB, speech - belowSpeechDb), belowSpeechDb };
}

/** `off` for frames [from, to) of a band judged by their own level, where it lies OWN_LEVEL_BELOW_SPEECH_DB under the band's speech level (else the band's). */
function ownOff(band: BandLevels, from: number, to: number): number {
  const own = percentile(band.levels.slice(from, to).sort(), SPEECH_PERCENTILE);
  if (own > band.speech - OWN_LEVEL_BELOW_SPEECH_DB) return band.off;
  return Math.min(band.off, Math.max(band.floorUsed + OFF_OVER_FLOOR_DB, own - band.belowSpeechDb));
}

/**
 * Speech regions of a source's envelope, and the levels they were found with. A region
 * starts at `on_db` (broadband) and extends while the frame stands over `off_db` in the
 * broadband level or over its own band's `off` above 1 kHz (the envelope's
 * `high_rms`, where it has one): a final "s" under mains hum belongs to its
 * word. A region judged quiet for the recording (OWN_LEVEL_BELOW_SPEECH_DB) then extends
 * down to its own level's `off`. Regions that sound like a breath or a click are also listed
 * as `breaths`.
 */
export function detectSpeech(envelope: EnergyEnvelope, durationMs = envelope.rms.length * envelope.frame_ms): SpeechDetection {
  const broad = bandLevels(envelope.rms);
  const { levels, floor, floorUsed, speech: speechDb, off } = broad;
  const highRms = envelope.high_rms;
  const high = highRms && highRms.length > 0 ? bandLevels(highRms, HIGH_OFF_BELOW_SPEECH_DB) : null;
  const margin = speechDb - floorUsed;
  const on = Math.max(off + ON_OVER_OFF_DB, speechDb - ON_BELOW_SPEECH_DB);
  let weak: string | null = null;
  if (levels.length > 0 && speechDb <= SILENT_DB) weak = 'no sound at all';
  else if (levels.length > 0 && floor > LOUD_FLOOR_DBFS) weak = `noise floor ${floor.toFixed(0)} dBFS is above ${LOUD_FLOOR_DBFS} dBFS`;
  else if (levels.length > 0 && margin < WEAK_MARGIN_DB) weak = `speech only ${margin.toFixed(0)} dB over the noise floor (${WEAK_MARGIN_DB} dB needed)`;

  const frameMs = envelope.frame_ms;
  const nearby = slidingMax(levels, Math.max(1, Math.round(NEIGHBOURHOOD_MS / frameMs)));
  // the level that starts speech at a frame: the recording's `on`, or a quiet neighbourhood's own
  const onAt = (frame: number): number => {
    const local = nearby[frame]! - NEIGHBOURHOOD_CREST_DB;
    if (local >= speechDb - OWN_LEVEL_BELOW_SPEECH_DB || local < floorUsed + NEIGHBOURHOOD_OVER_FLOOR_DB) return on;
    const localOff = Math.max(floorUsed + OFF_OVER_FLOOR_DB, local - OFF_BELOW_SPEECH_DB);
    return Math.min(on, Math.max(localOff + ON_OVER_OFF_DB, local - ON_BELOW_SPEECH_DB));
  };
  const audible = (frame: number, broadOff: number, highOff: number): boolean => levels[frame]! >= broadOff || (high !== null && (high.levels[frame] ?? SILENT_DB) >= highOff);
  const extend = (from: number, to: number, broadOff: number, highOff: number): [number, number] => {
    while (from > 0 && audible(from - 1, broadOff, highOff)) from -= 1;
    while (to < levels.length && audible(to, broadOff, highOff)) to += 1;
    return [from, to];
  };
  const regions: (Span & { breath: boolean })[] = [];
  let frame = 0;
  // a word heard only above 1 kHz (its level there under a low floor such as mains hum) starts speech too
  const highOn = high ? Math.max(high.off + ON_OVER_OFF_DB, high.speech - ON_BELOW_SPEECH_DB) : Infinity;
  while (frame < levels.length) {
    const seedOn = onAt(frame);
    const broadSeed = levels[frame]! >= seedOn;
    if (!broadSeed && (high === null || high.levels[frame]! < highOn)) {
      frame += 1;
      continue;
    }
    let [start, end] = extend(frame, frame, broadSeed ? Math.min(off, levels[frame]!) : off, high?.off ?? Infinity);
    let seeds = 0;
    let near = 0;
    for (let at = start; at < end; at += 1) {
      const raw = rawLevel(envelope, at);
      if ((raw >= seedOn || rawHighLevel(envelope, at) >= highOn) && at >= frame) seeds += 1;
      if (raw >= speechDb - BREATH_UNDER_SPEECH_DB) near += 1;
    }
    if (seeds >= MIN_SPEECH_FRAMES) {
      // a quiet sentence among loud ones: its own level decides where it ends, and its tail, little over the floor, fades
      // into it for up to QUIET_TAIL_MS more
      const own = ownOff(broad, start, end);
      [start, end] = extend(start, end, own, high ? ownOff(high, start, end) : Infinity);
      let tailEnd = end;
      if (own < off) for (let tail = 0; tail < QUIET_TAIL_FRAMES && tailEnd < levels.length && levels[tailEnd]! >= floorUsed + QUIET_TAIL_OVER_FLOOR_DB; tail += 1) tailEnd += 1;
      const span = { start_ms: start * frameMs, end_ms: Math.min(durationMs, tailEnd * frameMs) };
      const last = regions.at(-1);
      // regions that run into each other are one, and no breath
      if (last && span.start_ms <= last.end_ms) [last.end_ms, last.breath] = [Math.max(last.end_ms, span.end_ms), false];
      else if (span.end_ms > span.start_ms) regions.push({ ...span, breath: near < MIN_SPEECH_FRAMES && span.end_ms - span.start_ms <= BREATH_MAX_MS && hisses(envelope, start, end) });
    }
    frame = Math.max(end, frame + 1);
  }
  // a voice too faint for any level joins what the levels found (it never hisses, so it is no breath)
  const distance = unlikeNoise(envelope, broad);
  const faint = faintVoice(envelope, broad, nearby, distance).map(([start, end]) => ({ start_ms: start * frameMs, end_ms: Math.min(durationMs, end * frameMs), breath: false }));
  const joined = joinTrailingSounds(
    mergeRegions(regions, faint),
    (frame) => audibleRaw(envelope, frame, off, high?.off ?? Infinity),
    (frame) => audibleRaw(envelope, frame, off + ON_OVER_OFF_DB, (high?.off ?? Infinity) + ON_OVER_OFF_DB),
    frameMs,
    durationMs,
  );
  // a short region that sounds like the room's noise is a swell of it (a brown floor's), not speech; only where the
  // recording's speech sounds far from its noise (a babble's noise is voices: a word sounds like it)
  const voiceContrast = distance === null ? 0 : medianDistanceAt(levels, on, distance);
  const noiseSwell = (region: Span): boolean =>
    distance !== null && voiceContrast >= NOISE_SWELL_CONTRAST && region.end_ms - region.start_ms <= NOISE_SWELL_MAX_MS && distance(region.start_ms / frameMs, region.end_ms / frameMs) < NOISE_SWELL_DISTANCE;
  const speech = joined.filter((region) => !region.breath && !noiseSwell(region)).map(({ start_ms, end_ms }) => ({ start_ms, end_ms }));
  const breaths = joined.filter((region) => region.breath).map(({ start_ms, end_ms }) => ({ start_ms, end_ms }));
  return { speech, breaths, floor_db: floor, speech_db: speechDb, margin_db: margin, on_db: on, off_db: off, weak };
}

/** Whether a frame's own level (not smoothed: a click stays one or two frames) stands over `broadOff`, or its level above 1 kHz over `highOff`. */
function audibleRaw(envelope: EnergyEnvelope, frame: number, broadOff: number, highOff: number): boolean {
  return rawLevel(envelope, frame) >= broadOff || rawHighLevel(envelope, frame) >= highOff;
}

/**
 * A word's last sounds, parted from it by a dip under `off` (a voiced tail that wavers, a
 * stop's closure before a final "s"), join it: after each speech region, a run of at least
 * TRAIL_RUN_FRAMES frames over `off` (`audible`) belongs to it when it starts within
 * TRAIL_DIP_MS of the region's end, or within TRAIL_GAP_MS and reaches ON_OVER_OFF_DB over
 * `off` somewhere (`clear`: a sound of its own, not the floor wavering at `off`, as a babble
 * does); and so on from there, up to TRAIL_MAX_MS past where the region ended, never into the
 * next speech region. A hiss so near a word is its "s", not a breath: a breath that starts
 * within reach is taken into the word. A click (one or two frames) joins nothing, and a breath
 * taken in a pause, before the next word, lies further from the word before it. Returns the
 * regions left.
 */
function joinTrailingSounds(regions: readonly (Span & { breath: boolean })[], audible: (frame: number) => boolean, clear: (frame: number) => boolean, frameMs: number, durationMs: number): (Span & { breath: boolean })[] {
  const frames = Math.ceil(durationMs / frameMs);
  // where the next speech region after each one starts (breaths between them do not bound a word's reach)
  const nextSpeech = new Array<number>(regions.length);
  for (let index = regions.length - 1, at = durationMs; index >= 0; index -= 1) {
    nextSpeech[index] = at;
    if (!regions[index]!.breath) at = regions[index]!.start_ms;
  }
  const joined: (Span & { breath: boolean })[] = [];
  for (const [index, region] of regions.entries()) {
    const last = joined.at(-1);
    if (last && !last.breath && region.start_ms < last.end_ms) continue;
    joined.push(region);
    if (region.breath) continue;
    const limit = Math.min(frames, Math.floor(nextSpeech[index]! / frameMs), Math.ceil((region.end_ms + TRAIL_MAX_MS) / frameMs));
    let end = Math.ceil(region.end_ms / frameMs);
    for (let frame = end; frame < limit && frame <= end + TRAIL_GAP_MS / frameMs; frame += 1) {
      let run = frame;
      let peak = false;
      for (; run < limit && audible(run); run += 1) peak ||= clear(run);
      if (run - frame >= TRAIL_RUN_FRAMES && (peak || (frame - end) * frameMs <= TRAIL_DIP_MS)) end = run;
      frame = run;
    }
    region.end_ms = Math.max(region.end_ms, Math.min(durationMs, end * frameMs));
  }
  return joined;
}

/**
 * Whether frames [from, to) sound like a breath's hiss (BREATH_HISS_DB), judged on the loudest
 * quarter of them: a word's final "s" with the low thump of a plosive or a knock after it hisses
 * in most frames but not where it is loudest. Always, where the envelope has no level above
 * 1 kHz to tell by.
 */
function hisses(envelope: EnergyEnvelope, from: number, to: number): boolean {
  const high = envelope.high_rms;
  if (!high) return true;
  const frames: { level: number; share: number }[] = [];
  for (let frame = from; frame < to; frame += 1) {
    const level = toDbfs((envelope.rms[frame] ?? 0) + 1e-12);
    frames.push({ level, share: toDbfs((high[frame] ?? 0) + 1e-12) - level });
  }
  const loudest = frames.sort((a, b) => b.level - a.level).slice(0, Math.max(1, Math.ceil(frames.length / 4)));
  const shares = loudest.map((frame) => frame.share).sort((a, b) => a - b);
  return shares.length > 0 && shares[Math.floor(shares.length / 2)]! >= BREATH_HISS_DB;
}

/** Regions and more regions as one ordered list: those that run into each other are one, and no breath. */
function mergeRegions(regions: readonly (Span & { breath: boolean })[], more: readonly (Span & { breath: boolean })[]): (Span & { breath: boolean })[] {
  const merged: (Span & { breath: boolean })[] = [];
  for (const region of [...regions, ...more].sort((a, b) => a.start_ms - b.start_ms)) {
    const last = merged.at(-1);
    if (last && region.start_ms <= last.end_ms) [last.end_ms, last.breath] = [Math.max(last.end_ms, region.end_ms), false];
    else merged.push({ ...region });
  }
  return merged;
}

/**
 * How unlike the room's noise frames [from, to) sound: the mean, over them, of each frame's
 * distance from the noise (the frames within NOISE_PROFILE_DB of the floor): the RMS over the
 * cepstral coefficients of how many of the noise's own spreads (at least NOISE_MIN_SPREAD) the
 * frame lies from the noise's mean, capped at FAINT_CAP. null without cepstra, or where the
 * floor lies DEEPEST_FLOOR_DB under speech (digital silence has no spectrum to compare with).
 */
function unlikeNoise(envelope: EnergyEnvelope, band: BandLevels): ((from: number, to: number) => number) | null {
  const cepstra = envelope.cepstra;
  if (!cepstra || cepstra.values.length === 0 || band.floor < band.floorUsed) return null;
  const { dims, values } = cepstra;
  const { levels, floorUsed } = band;
  const frames = Math.min(levels.length, Math.floor(values.length / dims));
  const mean = new Float64Array(dims);
  const square = new Float64Array(dims);
  let count = 0;
  for (let frame = 0; frame < frames; frame += 1) {
    if (levels[frame]! > floorUsed + NOISE_PROFILE_DB) continue;
    count += 1;
    for (let dim = 0; dim < dims; dim += 1) {
      const value = values[frame * dims + dim]!;
      mean[dim]! += value;
      square[dim]! += value * value;
    }
  }
  if (count === 0) return null;
  const spread = new Float64Array(dims);
  for (let dim = 0; dim < dims; dim += 1) {
    mean[dim]! /= count;
    spread[dim] = Math.max(NOISE_MIN_SPREAD, Math.sqrt(Math.max(0, square[dim]! / count - mean[dim]! ** 2)));
  }
  // running sums of each frame's capped distance
  const sums = new Float64Array(frames + 1);
  for (let frame = 0; frame < frames; frame += 1) {
    let sum = 0;
    for (let dim = 0; dim < dims; dim += 1) sum += ((values[frame * dims + dim]! - mean[dim]!) / spread[dim]!) ** 2;
    sums[frame + 1] = sums[frame]! + Math.min(FAINT_CAP, Math.sqrt(sum / dims));
  }
  return (from, to) => {
    const [first, last] = [Math.max(0, Math.min(frames, from)), Math.max(0, Math.min(frames, to))];
    return last > first ? (sums[last]! - sums[first]!) / (last - first) : 0;
  };
}

/** The median of the frames' distance from the noise (unlikeNoise), over the frames at or over `on`. */
function medianDistanceAt(levels: Float64Array, on: number, distance: (from: number, to: number) => number): number {
  const loud: number[] = [];
  for (let frame = 0; frame < levels.length; frame += 1) if (levels[frame]! >= on) loud.push(distance(frame, frame + 1));
  return loud.length ? loud.sort((a, b) => a - b)[Math.floor(loud.length / 2)]! : 0;
}

/**
 * Frames [from, to) of a voice too faint for the levels alone: where the neighbourhood is quiet for
 * the recording yet stands FAINT_OVER_FLOOR_DB over the floor, and the frames within FAINT_REACH_MS
 * sound unlike the room's noise (unlikeNoise reaches FAINT_DISTANCE). Each run is trimmed to its
 * first and last frame over `floor + OFF_OVER_FLOOR_DB`.
 */
function faintVoice(envelope: EnergyEnvelope, band: BandLevels, nearby: Float64Array, distance: ((from: number, to: number) => number) | null): [number, number][] {
  if (!distance) return [];
  const { levels, floorUsed } = band;
  const frames = levels.length;
  const reach = Math.round(FAINT_REACH_MS / envelope.frame_ms);
  const faint = (frame: number): boolean => {
    const local = nearby[frame]! - NEIGHBOURHOOD_CREST_DB;
    if (local >= band.speech - OWN_LEVEL_BELOW_SPEECH_DB || nearby[frame]! < floorUsed + FAINT_OVER_FLOOR_DB) return false;
    return distance(frame - reach, frame + reach + 1) >= FAINT_DISTANCE;
  };
  const runs: [number, number][] = [];
  for (let frame = 0; frame < frames; frame += 1) {
    if (!faint(frame)) continue;
    let end = frame;
    while (end < frames && faint(end)) end += 1;
    let [first, last] = [frame, end];
    while (first < last && levels[first]! < floorUsed + OFF_OVER_FLOOR_DB) first += 1;
    while (last > first && levels[last - 1]! < floorUsed + OFF_OVER_FLOOR_DB) last -= 1;
    // a faint voice is voiced where it is loudest; a breath, or a click and a breath, hisses there
    if ((last - first) * envelope.frame_ms >= FAINT_MIN_MS && !hisses(envelope, first, last)) runs.push([first, last]);
    frame = end;
  }
  return runs;
}

/** For each frame, the greatest of `values` within `reach` frames either way (a monotonic queue: linear time). */
function slidingMax(values: Float64Array, reach: number): Float64Array {
  const out = new Float64Array(values.length);
  const queue: number[] = [];
  let head = 0;
  for (let index = 0; index < values.length + reach; index += 1) {
    if (index < values.length) {
      while (queue.length > head && values[queue.at(-1)!]! <= values[index]!) queue.pop();
      queue.push(index);
    }
    const centre = index - reach;
    if (centre < 0) continue;
    while (queue[head]! < centre - reach) head += 1;
    out[centre] = values[queue[head]!]!;
  }
  return out;
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
