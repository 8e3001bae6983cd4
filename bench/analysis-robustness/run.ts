/**
 * Analysis robustness on recorded human speech (issue 21): the talks of corpus.ts (Allison
 * Smith's Asterisk prompts, a LibriVox reader, pocketsphinx's test speakers; installed by
 * hack/speech-corpus.sh) rendered under a matrix of recording conditions (noise floors from
 * none to −38 dBFS RMS: pink, brown, 50 Hz hum with harmonics, a room bed; speech levels
 * from −30 to −3 dBFS peak; room reverberation; AAC at 96 kbit/s; telephone band), each run
 * through the program's speech detector and pause planning (speech.ts, silences.ts):
 *
 * - cuts that remove more than 40 ms of a clip's sound (target 0 in every condition);
 * - long pauses (1–4 s) that lose at least half their length (≥ 0.9 with a floor at or
 *   below −45 dBFS, ≥ 0.8 at −38);
 * - natural pauses (0.2–0.6 s) left alone (≥ 0.95);
 * - the boundary error median: a cut's edges against the pause's edges plus the guard bands;
 * - the detector's time per audio minute; and the fixed −35 dBFS rule it replaced, on the
 *   same renderings, as the baseline.
 *
 * The recognizer is not in this run: each clip is one "word" whose ends are moved by up
 * to ±80 ms (a recognizer's timing error), so what is measured is the detector and the
 * planning, not the transcript (word error rate, false starts and the time against the
 * recognizer alone are bench/analysis's, on flite speech).
 *
 *   bash hack/speech-corpus.sh && node bench/analysis-robustness/run.ts   (TALK_LIMIT=n: the first n talks only)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toDbfs, type EnergyEnvelope } from '../../job-images/whisper/src/analysis/energy.ts';
import { minimumPauseMs } from '../../job-images/whisper/src/analysis/pacing.ts';
import { planSourceEdits } from '../../job-images/whisper/src/analysis/plan.ts';
import { MIN_SILENCE_MS } from '../../job-images/whisper/src/analysis/silences.ts';
import { silencesBetween } from '../../job-images/whisper/src/analysis/speech.ts';
import type { Span } from '../../job-images/whisper/src/analysis/spans.ts';
import { assembleTalks, loadClips } from '../../hack/fixtures/recorded-speech.ts';
import { emptyScore, envelopeOf, pauseCuts, recognizedClips, render, scoreCuts, type Condition } from '../../hack/fixtures/recording-conditions.ts';

const PACING = 50;
const TALK_MS = 60_000;
const TARGETS = { speechCuts: 0, longHalvedQuiet: 0.9, longHalvedLoud: 0.8, naturalKept: 0.95 };

const CONDITIONS: Condition[] = [
  { name: 'clean', peakDb: -3, noise: null, path: null },
  { name: 'pink-55', peakDb: -3, noise: { kind: 'pink', rmsDb: -55 }, path: null },
  { name: 'pink-45', peakDb: -3, noise: { kind: 'pink', rmsDb: -45 }, path: null },
  { name: 'brown-45', peakDb: -3, noise: { kind: 'brown', rmsDb: -45 }, path: null },
  { name: 'hum50-45', peakDb: -3, noise: { kind: 'hum', rmsDb: -45 }, path: null },
  { name: 'room-45', peakDb: -3, noise: { kind: 'room', rmsDb: -45 }, path: null },
  { name: 'pink-38', peakDb: -3, noise: { kind: 'pink', rmsDb: -38 }, path: null },
  { name: 'brown-38', peakDb: -3, noise: { kind: 'brown', rmsDb: -38 }, path: null },
  { name: 'quiet-30peak', peakDb: -30, noise: null, path: null },
  { name: 'quiet-23peak-pink-60', peakDb: -23, noise: { kind: 'pink', rmsDb: -60 }, path: null },
  { name: 'reverb-pink-50', peakDb: -3, noise: { kind: 'pink', rmsDb: -50 }, path: 'reverb' },
  { name: 'aac96-pink-50', peakDb: -3, noise: { kind: 'pink', rmsDb: -50 }, path: 'aac96' },
  { name: 'telephone-pink-50', peakDb: -3, noise: { kind: 'pink', rmsDb: -50 }, path: 'telephone' },
];

/** The fixed rule the adaptive one replaced: 10 ms frames under −35 dBFS for 300 ms. */
function fixedRuleSilences(envelope: EnergyEnvelope, durationMs: number): Span[] {
  const speech: Span[] = [];
  envelope.rms.forEach((rms, frame) => {
    if (toDbfs(rms) < -35) return;
    const last = speech.at(-1);
    if (last && last.end_ms === frame * 10) last.end_ms += 10;
    else speech.push({ start_ms: frame * 10, end_ms: frame * 10 + 10 });
  });
  return silencesBetween(speech, durationMs, MIN_SILENCE_MS);
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)]! : NaN;
};


const say = (line: string): void => void process.stdout.write(`${line}\n`);
const clips = await loadClips();
const limit = Number(process.env.TALK_LIMIT ?? Infinity);
const talks = assembleTalks(clips, TALK_MS).slice(0, limit);
const audioMs = talks.reduce((sum, talk) => sum + talk.durationMs, 0);
const speakers = new Map<string, number>();
for (const talk of talks) for (const span of talk.speech) speakers.set(span.speaker, (speakers.get(span.speaker) ?? 0) + span.end_ms - span.start_ms);
const count = (kind: string): number => talks.reduce((sum, talk) => sum + talk.pauses.filter((pause) => pause.kind === kind).length, 0);
say(`corpus: ${talks.length} talks, ${(audioMs / 60_000).toFixed(1)} min, speech by speaker (min): ${[...speakers].map(([name, ms]) => `${name} ${(ms / 60_000).toFixed(1)}`).join(', ')}`);
say(`pauses: ${count('natural')} natural (0.2–0.6 s), ${count('long')} long (1–4 s), ${count('false_start')} false starts; pacing ${PACING} (pauses of ${minimumPauseMs(PACING)} ms or more are cut)`);

const dir = await mkdtemp(join(tmpdir(), 'cutroom-robustness-'));
const results: string[] = [];
let missed = false;
function result(metric: string, value: number, op: '>=' | '<=', target: number, digits: number): void {
  const ok = op === '>=' ? value >= target : value <= target;
  if (!ok) missed = true;
  results.push(`RESULT ${metric} ${value.toFixed(digits)} (target ${op} ${target}) ${ok ? 'ok' : 'miss'}`);
}
const worst = { speechCuts: 0, longHalved: 1, naturalKept: 1 };
try {
  for (const condition of CONDITIONS) {
    const adaptive = emptyScore();
    const fixed = emptyScore();
    let detectMs = 0;
    let weak = 0;
    for (const [index, talk] of talks.entries()) {
      const bytes = await render(talk, condition, 1000 + index, dir);
      const envelope = envelopeOf(bytes);
      const words = recognizedClips(talk, 77 + index);
      const started = performance.now();
      const { cuts, detection } = pauseCuts(talk, envelope, words, PACING);
      detectMs += performance.now() - started;
      if (detection.weak) weak += 1;
      scoreCuts(talk, cuts, adaptive);
      const settings = { pacing_level: PACING, false_start_sensitivity: 0 };
      const baseline = planSourceEdits({ source_index: 0, duration_ms: talk.durationMs, words, silences: fixedRuleSilences(envelope, talk.durationMs), envelope }, settings);
      scoreCuts(talk, baseline.edits.filter((edit) => edit.active), fixed);
    }
    const longShare = adaptive.longHalved / adaptive.long;
    const naturalShare = adaptive.naturalKept / adaptive.natural;
    say(
      `${condition.name.padEnd(22)} speech-cutting cuts ${adaptive.speechCuts} (fixed rule ${fixed.speechCuts}), long pauses halved ${longShare.toFixed(3)} (fixed rule ${(fixed.longHalved / fixed.long).toFixed(3)}), ` +
        `natural kept ${naturalShare.toFixed(3)}, boundary error median ${median(adaptive.boundaryErrors).toFixed(0)} ms, detector and planning ${(detectMs / (audioMs / 60_000)).toFixed(1)} ms per audio minute, weak sources ${weak}/${talks.length}`,
    );
    const slug = condition.name.replace(/[^a-z0-9]+/g, '_');
    result(`${slug}_speech_cutting_cuts`, adaptive.speechCuts, '<=', TARGETS.speechCuts, 0);
    const loud = (condition.noise?.rmsDb ?? -Infinity) > -45;
    result(`${slug}_long_pauses_halved`, longShare, '>=', loud ? TARGETS.longHalvedLoud : TARGETS.longHalvedQuiet, 3);
    result(`${slug}_natural_pauses_kept`, naturalShare, '>=', TARGETS.naturalKept, 3);
    worst.speechCuts = Math.max(worst.speechCuts, adaptive.speechCuts);
    worst.longHalved = Math.min(worst.longHalved, longShare);
    worst.naturalKept = Math.min(worst.naturalKept, naturalShare);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
say(`worst condition: speech-cutting cuts ${worst.speechCuts}, long pauses halved ${worst.longHalved.toFixed(3)}, natural pauses kept ${worst.naturalKept.toFixed(3)}`);
for (const line of results) say(line);
process.exitCode = missed ? 1 : 0;
