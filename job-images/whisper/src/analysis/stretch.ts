import type { EnergyEnvelope } from './energy.ts';
import { planSourceEdits, type PlanSettings, type SourcePlan } from './plan.ts';
import { MIN_SILENCE_MS, pausesHeard } from './silences.ts';
import { detectSpeech, silencesBetween, withFloor, type SpeechDetection } from './speech.ts';
import type { Span } from './spans.ts';
import type { SpokenWord } from './words.ts';

/** What the detector heard in one source's stretch of audio. */
export interface HeardStretch {
  detection: SpeechDetection;
  silences: Span[];
  /** The stretch's envelope with the detector's levels on it (withFloor). */
  envelope: EnergyEnvelope;
}

/** Speech found relative to the stretch's own floor and speech level, and the pauses between. */
export function hearStretch(envelope: EnergyEnvelope, durationMs: number): HeardStretch {
  const detection = detectSpeech(envelope, durationMs);
  return { detection, silences: silencesBetween(detection.speech, durationMs, MIN_SILENCE_MS), envelope: withFloor(envelope, detection) };
}

/** The edits an editor would make of a heard stretch and its words, as the analyze program plans them. */
export function planHeardStretch(sourceIndex: number, durationMs: number, heard: HeardStretch, words: readonly SpokenWord[], settings: PlanSettings): SourcePlan {
  const { detection, envelope } = heard;
  const evidence = { margin_db: detection.margin_db, weak: detection.weak };
  // a breath the recognizer heard no word in is part of its pause
  const { silences, breaths, short_pauses } = pausesHeard(detection, words, durationMs);
  return planSourceEdits({ source_index: sourceIndex, duration_ms: durationMs, words, silences, breaths, short_pauses, envelope, evidence, detected_silences: true }, settings);
}

/** A stretch heard and planned in one step (the benches plan as the program does). */
export function planStretch(sourceIndex: number, durationMs: number, envelope: EnergyEnvelope, words: readonly SpokenWord[], settings: PlanSettings): HeardStretch & { plan: SourcePlan } {
  const heard = hearStretch(envelope, durationMs);
  return { ...heard, plan: planHeardStretch(sourceIndex, durationMs, heard, words, settings) };
}
