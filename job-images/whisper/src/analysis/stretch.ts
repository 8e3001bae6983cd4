import type { EnergyEnvelope } from './energy.ts';
import { planSourceEdits, type PlanSettings, type SourcePlan } from './plan.ts';
import { MIN_SILENCE_MS } from './silences.ts';
import { detectSpeech, silencesBetween, withFloor, type SpeechDetection } from './speech.ts';
import type { Span } from './spans.ts';
import type { SpokenWord } from './words.ts';

export interface StretchPlan {
  detection: SpeechDetection;
  silences: Span[];
  plan: SourcePlan;
}

/**
 * One source's stretch of audio as the analyze program plans it: speech found relative to
 * the stretch's own floor and speech level, the pauses between, and the edits an editor would
 * make from those and the words (the benches plan the same way).
 */
export function planStretch(sourceIndex: number, durationMs: number, envelope: EnergyEnvelope, words: readonly SpokenWord[], settings: PlanSettings): StretchPlan {
  const detection = detectSpeech(envelope, durationMs);
  const silences = silencesBetween(detection.speech, durationMs, MIN_SILENCE_MS);
  const evidence = { margin_db: detection.margin_db, weak: detection.weak };
  const plan = planSourceEdits({ source_index: sourceIndex, duration_ms: durationMs, words, silences, envelope: withFloor(envelope, detection), evidence }, settings);
  return { detection, silences, plan };
}
