import { SoundComparer, type Cepstra } from './cepstra.ts';
import type { EnergyEnvelope } from './energy.ts';
import { findFalseStartCuts, phraseResemblance } from './false-starts.ts';
import { fillerConfidence, FILLER_APPLY_CONFIDENCE, findFillerSoundCuts } from './filler-sounds.ts';
import { findFillerCuts } from './fillers.ts';
import { keptPauseMs, minimumPauseMs } from './pacing.ts';
import { findSilenceCuts, noiseWords, tidySilences } from './silences.ts';
import { MIN_CUT_MS, spanLength, spansOverlap, subtractSpans, type Cut, type CutType, type Span } from './spans.ts';
import { WEAK_MARGIN_DB } from './speech.ts';
import { matchForm, type SpokenWord } from './words.ts';

/** What the analysis heard in one source (source time, ms). */
export interface SourceSignals {
  /** Index of the source in the job's `sources`. */
  source_index: number;
  duration_ms: number;
  /** normalizeWords(…) of the transcription. */
  words: readonly SpokenWord[];
  /** Detected silences (any order; overlaps are merged). */
  silences: readonly Span[];
  /** Breaths and clicks the silences hold (pausesHeard): a pause cut over one says so. */
  breaths?: readonly Span[];
  /** The pauses the detector heard down to SHORT_PAUSE_MS (pausesHeard): a word the recognizer ran over one may be a take and its restart; absent: the silences. */
  short_pauses?: readonly Span[];
  /** For snapping cut boundaries; null keeps them where the guard bands put them. */
  envelope: EnergyEnvelope | null;
  /** What the speech detector could tell (detectSpeech); absent: nothing known of the acoustics. */
  evidence?: AcousticEvidence;
  /** The silences are the speech detector's (its edges lie a measured few ms inside the silence heard: silences.ts heardPause). */
  detected_silences?: boolean;
}

/** How well a source's speech stands out of its noise. */
export interface AcousticEvidence {
  /** Speech level over the noise floor, dB. */
  margin_db: number;
  /** Why speech cannot be told from noise (then pauses are offered, not cut); null when it can. */
  weak: string | null;
}

export interface PlanSettings {
  pacing_level: number;
  false_start_sensitivity: number;
}

/** An AI edit in SOURCE time (the caller maps it onto the timeline). */
export interface PlannedEdit {
  type: CutType;
  start_ms: number;
  end_ms: number;
  active: boolean;
  reason: string;
  /** 0–1, from the evidence (confidenceOf). */
  confidence: number;
  source_index: number;
  /** A shortened pause (issue 39): the pause it lies in and what of it stays; start_ms/end_ms are what it removes (removedRange of this). */
  pause?: PlannedPause;
}

/** The contract's `pause` of an AI edit, in source time. */
export interface PlannedPause {
  start_ms: number;
  end_ms: number;
  kept_ms: number;
  /** The share of kept_ms left after the speech before the pause (keptSplitAfter; 0 at a source's start, 1 at its end). */
  kept_split: number;
  breath: Span | null;
}

export interface EditCounts {
  silence: number;
  false_start: number;
  filler: number;
}

export interface SourcePlan {
  edits: PlannedEdit[];
  counts: EditCounts;
}

/**
 * When cuts overlap, the higher kind keeps its span and the lower one keeps only what
 * is left: a false start swallows the pauses and fillers inside it (it goes as one
 * edit), and an active pause cut is never hidden inside an offered filler cut.
 */
export const PRECEDENCE: readonly CutType[] = ['false_start', 'silence', 'filler'];

const COMPARERS = new WeakMap<Cepstra, SoundComparer>();
/** One comparer per stretch heard: its coefficients' spread is measured once. */
function comparerOf(envelope: EnergyEnvelope | null): SoundComparer | undefined {
  const cepstra = envelope?.cepstra;
  if (!cepstra) return undefined;
  let comparer = COMPARERS.get(cepstra);
  if (!comparer) COMPARERS.set(cepstra, (comparer = new SoundComparer(cepstra)));
  return comparer;
}

/** What the false-start finder hears of a source besides its words: its sound and its pauses (none without cepstra). */
function soundsOf(signals: SourceSignals): { comparer: SoundComparer; silences: Span[]; shortPauses: Span[] } | undefined {
  const comparer = comparerOf(signals.envelope);
  if (!comparer) return undefined;
  const silences = tidySilences(signals.silences, signals.duration_ms);
  return { comparer, silences, shortPauses: signals.short_pauses ? tidySilences(signals.short_pauses, signals.duration_ms) : silences };
}

/** Whether a kind of cut is applied unless a person turns it off (the transcript's fillers are only offered; one heard by its sound, see sourcePlanOf). */
export const ACTIVE_BY_DEFAULT: Readonly<Record<CutType, boolean>> = { silence: true, false_start: true, filler: false };

/**
 * Weak evidence is never applied (issue 38): an edit less sure than this (confidenceOf) is
 * offered inactive, its reason saying so. A pause over a clear recording is at least 0.5,
 * over weak evidence at most 0.3; a false start is its resemblance times the recognizer's
 * confidence in the removed words: the right takes of the recorded corpus heard by Whisper
 * run 0.35–0.94, the wrong cuts issue 38 found 0.04 and 0.27 (its third, 0.39, two sentences
 * opening alike, is a doubt: Cut.doubt).
 */
export const APPLY_CONFIDENCE = 0.3;

/** Whether what is left of a word cut still removes one of its words (otherwise it is only a sliver of pause). */
function holdsItsWords(piece: Span, cut: Cut, words: readonly SpokenWord[]): boolean {
  if (!cut.words) return true;
  return words.slice(cut.words.from, cut.words.to).some((word) => spansOverlap(piece, word) || (word.start_ms === word.end_ms && piece.start_ms <= word.start_ms && word.start_ms < piece.end_ms));
}

/**
 * Every cut of one source, in time order, disjoint and inside [0, duration]: false
 * starts first, then pauses and fillers outside them; pieces shorter than MIN_CUT_MS,
 * and pieces of a word cut that no longer remove any of its words, are dropped.
 */
export function planSourceCuts(signals: SourceSignals, settings: PlanSettings): Cut[] {
  const { words, duration_ms: duration, envelope } = signals;
  const room = { duration_ms: duration, envelope };
  const found: Record<CutType, Cut[]> = {
    // words heard in the room's noise alone are skipped, as hesitations are: no take starts or ends with one
    false_start: findFalseStartCuts(words, settings.false_start_sensitivity, room, noiseWords(words, signals.silences, envelope), soundsOf(signals)),
    silence: findSilenceCuts({ duration_ms: duration, words, silences: signals.silences, breaths: signals.breaths, envelope, minimum_pause_ms: minimumPauseMs(settings.pacing_level), kept_pause_ms: keptPauseMs(settings.pacing_level), detected_silences: signals.detected_silences ?? false }),
    // the transcript's fillers, then those heard by their sound alone (Whisper leaves "um" out: issue 39)
    filler: [...findFillerCuts(words, room), ...findFillerSoundCuts(envelope, words, settings.false_start_sensitivity)],
  };
  const kept: Cut[] = [];
  for (const type of PRECEDENCE) {
    for (const cut of found[type]) {
      const inside = { start_ms: Math.max(0, cut.start_ms), end_ms: Math.min(duration, cut.end_ms) };
      for (const piece of subtractSpans(inside, kept)) {
        if (spanLength(piece) >= MIN_CUT_MS && holdsItsWords(piece, cut, words)) kept.push(withEdges(cut, piece.start_ms, piece.end_ms));
      }
    }
  }
  return closeSlivers(kept.sort((a, b) => a.start_ms - b.start_ms), words, duration);
}

/**
 * No piece of the source shorter than MIN_KEPT_MS is left between two cuts, or between a
 * cut and the source's edge, unless a recognized word lies in it: a render would show such
 * a sliver as a flash frame (or every timeline drop it, issue 38). One of the two cuts
 * reaches over it, so the two touch: a word cut where there is one (it removes a little
 * more of the pause it already borders; a pause cut keeps its guard bands), else the
 * earlier; at an edge the cut reaches the edge (a split clip's stretches join there).
 */
export const MIN_KEPT_MS = MIN_CUT_MS;

function closeSlivers(cuts: Cut[], words: readonly SpokenWord[], duration: number): Cut[] {
  const holdsAWord = (from: number, to: number): boolean => words.some((word) => (word.start_ms < to && from < word.end_ms) || (word.start_ms === word.end_ms && from <= word.start_ms && word.start_ms < to));
  const closed = [...cuts];
  const first = closed[0];
  if (first && first.start_ms > 0 && first.start_ms < MIN_KEPT_MS && !holdsAWord(0, first.start_ms)) closed[0] = withEdges(first, 0, first.end_ms);
  for (let index = 1; index < closed.length; index += 1) {
    const [before, after] = [closed[index - 1]!, closed[index]!];
    const gap = after.start_ms - before.end_ms;
    if (gap <= 0 || gap >= MIN_KEPT_MS || holdsAWord(before.end_ms, after.start_ms)) continue;
    if (after.words && !before.words) closed[index] = withEdges(after, before.end_ms, after.end_ms);
    else closed[index - 1] = withEdges(before, before.start_ms, after.start_ms);
  }
  const last = closed.at(-1);
  if (last && last.end_ms < duration && duration - last.end_ms < MIN_KEPT_MS && !holdsAWord(last.end_ms, duration)) closed[closed.length - 1] = withEdges(last, last.start_ms, duration);
  return closed;
}

/**
 * A cut with other edges. A shortened pause keeps nothing on a side whose edge moved: that
 * side now meets another cut (or the source's edge), which removes the kept part there.
 */
function withEdges(cut: Cut, start_ms: number, end_ms: number): Cut {
  if (!cut.kept) return { ...cut, start_ms, end_ms };
  const kept = { ...cut.kept, before_ms: start_ms === cut.start_ms ? cut.kept.before_ms : 0, after_ms: end_ms === cut.end_ms ? cut.kept.after_ms : 0 };
  return { ...cut, start_ms, end_ms, kept };
}

/** A cut's reason; a shortened pause's says what of it stays: "Pause of 2.8 s, shortened to 0.42 s". */
function reasonOf(cut: Cut, pause: PlannedPause | undefined): string {
  if (!cut.kept) return cut.reason;
  const lasting = pause ? `shortened to ${(pause.kept_ms / 1000).toFixed(2)} s` : 'removed';
  return cut.reason.replace(/^Pause of [\d.]+ s/, (head) => `${head}, ${lasting}`);
}

/** The pause a shortened pause cut lies in, and what of it stays; none when it keeps nothing. */
function pauseOf(cut: Cut): PlannedPause | undefined {
  if (!cut.kept) return undefined;
  const { before_ms: before, after_ms: after, breath } = cut.kept;
  const kept_ms = before + after;
  if (kept_ms <= 0) return undefined;
  const pause = { start_ms: cut.start_ms - before, end_ms: cut.end_ms + after };
  const held = breath && breath.start_ms < pause.end_ms && pause.start_ms < breath.end_ms ? { start_ms: Math.max(pause.start_ms, breath.start_ms), end_ms: Math.min(pause.end_ms, breath.end_ms) } : null;
  return { ...pause, kept_ms, kept_split: before / kept_ms, breath: held };
}

export function countEdits(edits: readonly { type: CutType }[]): EditCounts {
  const counts: EditCounts = { silence: 0, false_start: 0, filler: 0 };
  for (const edit of edits) counts[edit.type] += 1;
  return counts;
}

/** A margin this far over WEAK_MARGIN_DB makes a pause as sure as the acoustics can make it. */
const SURE_MARGIN_SPAN_DB = 25;
/** A take that sounds this alike its restart (mean distance, SoundComparer) resembles it wholly … */
const SAME_SOUND = 3.5;
/** … and one this far apart not at all. */
const OTHER_SOUND = 6;
/** What a recognizer that gives no word probabilities is taken to have heard: as likely as not. */
const UNKNOWN_CONFIDENCE = 0.5;

function clamp01(value: number): number {
  return Math.min(1, Math.max(0, value));
}

function meanProbability(words: readonly SpokenWord[]): number | null {
  const known = words.map((word) => word.probability).filter((probability): probability is number => probability !== null);
  return known.length ? known.reduce((sum, probability) => sum + probability, 0) / known.length : null;
}

/**
 * How sure an edit is, 0–1 (two decimals), from its evidence:
 * - a pause: the detector's margin of speech over the floor, 0.5 at WEAK_MARGIN_DB
 *   rising to 1 SURE_MARGIN_SPAN_DB above it; at most 0.3 when the evidence is weak;
 *   0.5 when nothing is known of the acoustics;
 * - a false start: how much the take resembles its restart, times the recognizer's mean
 *   confidence in the words it removes; the resemblance is that of the words
 *   (phraseResemblance over up to 4 words), and where the recording's sound is known the
 *   mean of that and the sound's (1 at a mean distance of SAME_SOUND, 0 at OTHER_SOUND;
 *   the take and the restart where the finder heard them, Cut.heard): a take misheard as
 *   its restart's words but sounding otherwise is less sure; a take the 'sounds-alike' rule
 *   found (its words heard otherwise) by its sound alone;
 * - a filler: the recognizer's mean confidence in its words; one heard by its sound alone (no
 *   words), how steady and voiced it sounds (fillerConfidence).
 */
export function confidenceOf(cut: Cut, signals: SourceSignals): number {
  const { words, evidence } = signals;
  let confidence: number;
  if (cut.type === 'silence') {
    if (!evidence) confidence = UNKNOWN_CONFIDENCE;
    else {
      const strength = clamp01((evidence.margin_db - WEAK_MARGIN_DB) / SURE_MARGIN_SPAN_DB);
      confidence = evidence.weak ? 0.3 * strength : 0.5 + 0.5 * strength;
    }
  } else {
    const removed = cut.words ? words.slice(cut.words.from, cut.words.to) : [];
    const heard = meanProbability(removed) ?? UNKNOWN_CONFIDENCE;
    if (cut.type === 'false_start' && cut.words) {
      const compared = Math.min(4, cut.words.to - cut.words.from, words.length - cut.words.to);
      const forms = (from: number): string[] => words.slice(from, from + compared).map((word) => matchForm(word.text));
      const wordsAlike = compared > 0 ? clamp01(phraseResemblance(forms(cut.words.from), forms(cut.words.to))) : 0;
      // the take's sound against its restart's, where the finder heard them (or else where the words are)
      const take = cut.heard?.take ?? { start_ms: words[cut.words.from]!.start_ms, end_ms: words[cut.words.to - 1]!.end_ms };
      const restartMs = cut.heard?.restart_ms ?? words[cut.words.to]?.start_ms;
      const sound = restartMs !== undefined ? comparerOf(signals.envelope)?.compare(take, restartMs) : undefined;
      const soundAlike = sound ? clamp01((OTHER_SOUND - sound.mean) / (OTHER_SOUND - SAME_SOUND)) : null;
      // a take found by its sound alone: the words, heard otherwise, say nothing of it
      const resemblance = soundAlike === null ? wordsAlike : cut.rule === 'sounds-alike' ? soundAlike : (wordsAlike + soundAlike) / 2;
      confidence = resemblance * heard;
    } else if (cut.type === 'filler' && !cut.words) confidence = fillerConfidence(cut, signals.envelope);
    else confidence = heard;
  }
  return Math.round(clamp01(confidence) * 100) / 100;
}

/**
 * The AI edits of one source's cuts (source time), and how many of each kind. Where the
 * evidence is weak, its pauses are offered inactive, and so is any edit less sure than
 * APPLY_CONFIDENCE, and a false start whose take says what its restart does not (Cut.doubt);
 * their reason says why. A filler heard by its sound alone is applied when its confidence
 * reaches FILLER_APPLY_CONFIDENCE, else offered, its reason saying so.
 */
export function sourcePlanOf(cuts: readonly Cut[], signals: SourceSignals): SourcePlan {
  const weak = signals.evidence?.weak ?? null;
  const edits = cuts.map((cut): PlannedEdit => {
    const confidence = confidenceOf(cut, signals);
    const pause = pauseOf(cut);
    const why = cut.type === 'silence' && weak !== null ? weak : (cut.doubt ?? (confidence < APPLY_CONFIDENCE ? `confidence ${confidence.toFixed(2)} is under ${APPLY_CONFIDENCE}` : null));
    // a filler heard by its sound is applied when it is that sure (FILLER_APPLY_CONFIDENCE), else offered
    const soundFiller = cut.type === 'filler' && !cut.words;
    const byDefault = soundFiller ? confidence >= FILLER_APPLY_CONFIDENCE : ACTIVE_BY_DEFAULT[cut.type];
    const offeredOnly = byDefault && why !== null;
    return {
      type: cut.type,
      start_ms: cut.start_ms,
      end_ms: cut.end_ms,
      active: byDefault && !offeredOnly,
      reason: offeredOnly ? `${reasonOf(cut, pause)} (offered, not cut: ${why})` : soundFiller && !byDefault ? `${cut.reason} (offered, not cut: confidence ${confidence.toFixed(2)} is under ${FILLER_APPLY_CONFIDENCE})` : reasonOf(cut, pause),
      confidence,
      source_index: signals.source_index,
      ...(pause ? { pause } : {}),
    };
  });
  return { edits, counts: countEdits(edits) };
}

/** One source's AI edits and how many of each kind. */
export function planSourceEdits(signals: SourceSignals, settings: PlanSettings): SourcePlan {
  return sourcePlanOf(planSourceCuts(signals, settings), signals);
}
