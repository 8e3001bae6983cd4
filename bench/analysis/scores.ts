// What the analysis is scored against: the cuts an editor following our documented rules
// (docs/decisions.md, "Analysis") would make on a corpus track whose every phrase and
// pause is known to the sample, and the measures that compare them.
import { WORD_LEAD_IN_MS, WORD_TAIL_MS } from '../../job-images/whisper/src/analysis/words.ts';
import type { TimeSpan } from '../../hack/fixtures/speech.ts';
import type { CorpusTrack } from './corpus.ts';

export function spanMs(span: TimeSpan): number {
  return span.endMs - span.startMs;
}

export function overlapMs(a: TimeSpan, b: TimeSpan): number {
  return Math.max(0, Math.min(a.endMs, b.endMs) - Math.max(a.startMs, b.startMs));
}

/** The spans' union as disjoint spans in time order. */
export function unionOf(spans: readonly TimeSpan[]): TimeSpan[] {
  const merged: TimeSpan[] = [];
  for (const span of [...spans].filter((each) => each.endMs > each.startMs).sort((a, b) => a.startMs - b.startMs)) {
    const last = merged.at(-1);
    if (last && span.startMs <= last.endMs) last.endMs = Math.max(last.endMs, span.endMs);
    else merged.push({ startMs: span.startMs, endMs: span.endMs });
  }
  return merged;
}

/** Intersection and union lengths (ms) of two sets of spans, each taken as its union. */
export interface Overlap {
  intersectionMs: number;
  unionMs: number;
}

export function overlapOf(found: readonly TimeSpan[], truth: readonly TimeSpan[]): Overlap {
  const a = unionOf(found);
  const b = unionOf(truth);
  let intersectionMs = 0;
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    intersectionMs += overlapMs(a[i]!, b[j]!);
    if (a[i]!.endMs < b[j]!.endMs) i += 1;
    else j += 1;
  }
  const total = (spans: TimeSpan[]) => spans.reduce((sum, span) => sum + spanMs(span), 0);
  return { intersectionMs, unionMs: total(a) + total(b) - intersectionMs };
}

/** Intersection over union of overlaps summed over tracks. */
export function iouOf(overlaps: readonly Overlap[]): number {
  const intersection = overlaps.reduce((sum, each) => sum + each.intersectionMs, 0);
  const union = overlaps.reduce((sum, each) => sum + each.unionMs, 0);
  return union > 0 ? intersection / union : 1;
}

export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low]! + (sorted[Math.ceil(at)]! - sorted[low]!) * (at - low);
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/**
 * The true cuttable pause regions of a track at a minimum pause length: every true pause
 * at least `minimumPauseMs` long (the program cuts a pause of exactly the minimum), less
 * the guard bands, WORD_TAIL_MS after the phrase before it and WORD_LEAD_IN_MS before
 * the phrase after it: [pause start + 120 ms, pause end − 180 ms]. At the track's edges
 * there is nothing to guard: a leading pause's region starts at 0, a trailing one's ends
 * at the track's end. A pause right after a planted false take is left out: the
 * false-start cut removes it with the take. This is what an editor following our rules
 * would cut as silence.
 */
export function cuttablePauses(track: CorpusTrack, minimumPauseMs: number): TimeSpan[] {
  return track.pauses.flatMap((pause) => {
    if (spanMs(pause) < minimumPauseMs) return [];
    const before = track.phrases.find((phrase) => phrase.endMs === pause.startMs);
    if (before?.dropped) return [];
    const startMs = pause.startMs === 0 ? 0 : pause.startMs + WORD_TAIL_MS;
    const endMs = pause.endMs === track.durationMs ? track.durationMs : pause.endMs - WORD_LEAD_IN_MS;
    return endMs > startMs ? [{ startMs, endMs }] : [];
  });
}

/**
 * Distance (ms) from a cut boundary to the nearest true phrase edge it can be placed
 * against: any phrase's start, or a kept phrase's end (a false take's end lies inside
 * the cut that removes it, which runs on to the restart's lead-in).
 */
export function distanceToPhraseEdge(track: CorpusTrack, ms: number): number {
  return Math.min(...track.phrases.flatMap((phrase) => (phrase.dropped ? [phrase.startMs] : [phrase.startMs, phrase.endMs]).map((edge) => Math.abs(ms - edge))));
}

/** How a silence detector's silences compare with a track's true pauses. */
export interface DetectorScore {
  overlap: Overlap;
  /** |detected − true| of each interior pause boundary whose pause was found, ms. */
  boundaryErrorsMs: number[];
  missedPauses: number;
  /** Detected silences that overlap no true pause (quiet inside a phrase taken for a pause). */
  spuriousSilences: number;
}

/**
 * A detector's silences against the true pauses at least `minimumSilenceMs` long (the
 * program's floor for a silence: shorter true pauses are asked of no detector). A pause
 * is found when a detected silence overlaps it; its start's error is that of the first
 * overlapping silence's start, its end's that of the last one's end; a boundary at the
 * track's edge is no boundary and is not measured.
 */
export function scoreDetector(track: CorpusTrack, silences: readonly TimeSpan[], minimumSilenceMs: number): DetectorScore {
  const truth = track.pauses.filter((pause) => spanMs(pause) >= minimumSilenceMs);
  const boundaryErrorsMs: number[] = [];
  let missedPauses = 0;
  for (const pause of truth) {
    const found = silences.filter((silence) => overlapMs(silence, pause) > 0);
    if (found.length === 0) {
      missedPauses += 1;
      continue;
    }
    if (pause.startMs > 0) boundaryErrorsMs.push(Math.abs(found[0]!.startMs - pause.startMs));
    if (pause.endMs < track.durationMs) boundaryErrorsMs.push(Math.abs(found.at(-1)!.endMs - pause.endMs));
  }
  const spuriousSilences = silences.filter((silence) => !track.pauses.some((pause) => overlapMs(silence, pause) > 0)).length;
  return { overlap: overlapOf(silences, truth), boundaryErrorsMs, missedPauses, spuriousSilences };
}

/** The complement of speech spans within [0, durationMs], gaps at least `minimumMs` long. */
export function gapsBetween(speech: readonly TimeSpan[], durationMs: number, minimumMs: number): TimeSpan[] {
  const gaps: TimeSpan[] = [];
  let from = 0;
  for (const span of unionOf(speech)) {
    if (span.startMs - from >= minimumMs) gaps.push({ startMs: from, endMs: span.startMs });
    from = Math.max(from, span.endMs);
  }
  if (durationMs - from >= minimumMs) gaps.push({ startMs: from, endMs: durationMs });
  return gaps;
}
