/**
 * Analysis quality and cost on speech with known truth (bench/analysis/corpus.ts: over
 * ten minutes of flite sentences, pauses of 200 ms to 3 s, planted false starts), the
 * whisper image's `analyze` program run as its real entrypoint against an embedded S3 and
 * the offline recognizer behind the OpenAI-compatible API (recognizer/server):
 *
 * - silence-cut IoU: the union of the active silence cuts against the union of the true
 *   cuttable pause regions (scores.ts cuttablePauses: what an editor following our rules
 *   would cut);
 * - false starts: a planted take is found when an active false_start edit overlaps it
 *   (recall); a false_start edit is right when it overlaps a planted take (precision);
 * - active cuts of any kind overlapping a kept phrase's true span (none allowed);
 * - how far cut boundaries lie from the true phrase edges: the guard bands put them
 *   WORD_TAIL_MS (120 ms) after a phrase and WORD_LEAD_IN_MS (180 ms) before one by design;
 * - the program's wall time against one direct transcription request of the same WAV to
 *   the same server, alternating after an untimed request that warms the recognizer, the
 *   medians compared;
 * - the silence detector the program uses (adaptive energy on the 10 ms envelope, silencesFromEnvelope)
 *   against Silero VAD (installed on demand into .data/bench-deps), on the true pauses.
 *
 *   node bench/analysis/run.ts        (BENCH_RUNS=4 timed runs of each side by default, at least 2)
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { aiEditsSchema, analyzeResultSchema, type AiEdit, type AnalyzeInput } from '../../crds/contract/programs/analyze.ts';
import { startLocalWhisper } from '../../recognizer/server/server.ts';
import type { TimeSpan } from '../../hack/fixtures/speech.ts';
import { wavEnvelope } from '../../job-images/whisper/src/analysis/energy.ts';
import { minimumPauseMs } from '../../job-images/whisper/src/analysis/pacing.ts';
import { MIN_SILENCE_MS, silencesFromEnvelope } from '../../job-images/whisper/src/analysis/silences.ts';
import { WORD_LEAD_IN_MS, WORD_TAIL_MS } from '../../job-images/whisper/src/analysis/words.ts';
import { Transcriber } from '../../job-images/whisper/src/transcriber.ts';
import { readProgramOutcome, runProgram, startJobBucket, WHISPER_IMAGE_MAIN, type JobBucket } from '../../hack/fixtures/job-program.ts';
import { loadCorpus, type CorpusTrack } from './corpus.ts';
import { cuttablePauses, distanceToPhraseEdge, gapsBetween, iouOf, median, overlapMs, overlapOf, quantile, scoreDetector, spanMs, type DetectorScore } from './scores.ts';
import { loadSilero } from './silero.ts';

const DATA = new URL('../../.data/', import.meta.url).pathname;
const runs = Math.max(2, Number(process.env.BENCH_RUNS ?? 4));
const settings: AnalyzeInput['settings'] = { pacing_level: 50, false_start_sensitivity: 50, language: 'en', analysis_mode: 'ai_edit' };
const MIN_CORPUS_MINUTES = 10;

const TARGETS = {
  silenceCutIou: 0.9,
  falseStartRecall: 0.9,
  falseStartPrecision: 0.9,
  cutsOverlappingSpeech: 0,
  /** The guard bands alone put boundaries 120–180 ms from the phrase edge; snapping may add 50. */
  cutBoundaryMedianMs: 250,
  analysisTimeRatio: 1.1,
  detectorIou: 0.9,
  /** Well inside the 120 ms tail band a cut keeps after a word. */
  detectorBoundaryMedianMs: 50,
  /** Detection may cost a tenth of the transcription: the program must stay within 1.1× of the recognizer. */
  detectorTimeRatio: 0.1,
};

const say = (line = '') => process.stdout.write(`${line}\n`);
const minutes = (ms: number) => ms / 60_000;
const fixed = (value: number, digits = 2) => value.toFixed(digits);

async function seconds<T>(action: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const started = process.hrtime.bigint();
  const value = await action();
  return { value, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

const results: string[] = [];
let missed = false;
/** One RESULT line, in the DESIGN form; `gated` misses fail the run. */
function result(metric: string, value: number, op: '>=' | '<=' | '=', target: number, digits: number, gated = true): void {
  const ok = op === '>=' ? value >= target : op === '<=' ? value <= target : value === target;
  if (!ok && gated) missed = true;
  results.push(`RESULT ${metric} ${fixed(value, digits)} (target ${op} ${target}) ${ok ? 'ok' : 'miss'}`);
}

/** A detector's silences of every track, timed. */
interface Detection {
  name: string;
  scores: DetectorScore[];
  seconds: number;
}

function detectionLine(detection: Detection, audioMs: number): string {
  const errors = detection.scores.flatMap((score) => score.boundaryErrorsMs);
  const sum = (pick: (score: DetectorScore) => number) => detection.scores.reduce((total, score) => total + pick(score), 0);
  return (
    `  ${detection.name}: IoU ${fixed(iouOf(detection.scores.map((score) => score.overlap)), 3)}, boundary error median ${fixed(median(errors), 0)} ms ` +
    `(p90 ${fixed(quantile(errors, 0.9), 0)}), missed ${sum((score) => score.missedPauses)} pauses, spurious ${sum((score) => score.spuriousSilences)} silences, ` +
    `${fixed((detection.seconds * 1000) / minutes(audioMs), 0)} ms per audio minute`
  );
}

/** Both detectors on every track, one after the other track by track, so that both see the machine alike. */
async function detections(tracks: readonly CorpusTrack[]): Promise<{ energy: Detection; silero: Detection; sileroLoadSeconds: number }> {
  const { value: silero, seconds: sileroLoadSeconds } = await seconds(() => loadSilero(join(DATA, 'bench-deps'), say));
  const energy: Detection = { name: "energy (10 ms RMS relative to the recording's floor and speech level, gaps of 300 ms or more: the program's)", scores: [], seconds: 0 };
  const vad: Detection = { name: 'silero (default model, no speech padding, gaps of 300 ms or more)', scores: [], seconds: 0 };
  try {
    for (const track of tracks) {
      const heard = await seconds(async () => {
        const envelope = wavEnvelope(await readFile(track.path));
        return silencesFromEnvelope(envelope, track.durationMs).map((span) => ({ startMs: span.start_ms, endMs: span.end_ms }));
      });
      energy.seconds += heard.seconds;
      energy.scores.push(scoreDetector(track, heard.value, MIN_SILENCE_MS));
      const speech = await seconds(() => silero.speech(track.path));
      vad.seconds += speech.seconds;
      vad.scores.push(scoreDetector(track, gapsBetween(speech.value, track.durationMs, MIN_SILENCE_MS), MIN_SILENCE_MS));
    }
  } finally {
    await silero.close();
  }
  return { energy, silero: vad, sileroLoadSeconds };
}

/** The analyze program on one track, as its own job: its wall time and its edits. */
async function analyze(bucket: JobBucket, whisperUrl: string, track: CorpusTrack, key: string): Promise<{ seconds: number; edits: AiEdit[] }> {
  const jobId = randomUUID();
  const input: AnalyzeInput = {
    settings,
    sources: [{ media_file_id: randomUUID(), media_item_id: randomUUID(), audio_key: key, duration_ms: Math.round(track.durationMs), timeline_offset_ms: 0, source_start_ms: 0 }],
  };
  const spec = { jobId, program: 'analyze', userId: randomUUID(), projectId: randomUUID(), input, outputPrefix: `bench/analysis/${jobId}`, timeoutSeconds: 900 };
  const outcome = await runProgram(WHISPER_IMAGE_MAIN, spec, { ...bucket.env, WHISPER_BASE_URL: whisperUrl });
  const { result, error } = await readProgramOutcome(bucket.env, spec.outputPrefix);
  if (outcome.exitCode !== 0 || !result) throw new Error(`analyze program failed on ${track.path}: ${error?.message ?? 'no result.json'}\n${outcome.stderr}`);
  const { edits_key: editsKey } = analyzeResultSchema.parse(result);
  return { seconds: outcome.wallSeconds, edits: aiEditsSchema.parse(await bucket.getJson(editsKey)) };
}

const corpus = await loadCorpus(join(DATA, 'bench-corpus'), 2, say);
const { tracks } = corpus;
const audioMs = tracks.reduce((sum, track) => sum + track.durationMs, 0);
if (minutes(audioMs) < MIN_CORPUS_MINUTES) throw new Error(`the corpus holds ${fixed(minutes(audioMs))} min of audio, under ${MIN_CORPUS_MINUTES}`);
const phrases = tracks.flatMap((track) => track.phrases);
const pauses = tracks.flatMap((track) => track.pauses).map(spanMs);
const planted = phrases.filter((phrase) => phrase.dropped).length;
const minimumPause = minimumPauseMs(settings.pacing_level);
say(
  `corpus: ${tracks.length} tracks, ${fixed(minutes(audioMs), 1)} min, ${phrases.length} phrases (${corpus.distinctPhrases} distinct), ` +
    `${pauses.length} pauses ${Math.min(...pauses)}–${Math.max(...pauses)} ms (median ${fixed(median(pauses), 0)}), ${planted} planted false starts`,
);
say(`settings: pacing_level ${settings.pacing_level} (pauses of ${minimumPause} ms or more are cut), false_start_sensitivity ${settings.false_start_sensitivity}`);

// The detectors first, while no recognizer runs beside them.
const trueSilences = pauses.filter((pause) => pause >= MIN_SILENCE_MS).length;
const { energy, silero, sileroLoadSeconds } = await detections(tracks);
say();
say(`silence detectors against the ${trueSilences} true pauses of ${MIN_SILENCE_MS} ms or more:`);
say(detectionLine(energy, audioMs));
say(`${detectionLine(silero, audioMs)} (model load ${fixed(sileroLoadSeconds)} s, not counted)`);

const bucket = await startJobBucket();
const whisper = await startLocalWhisper();
try {
  const keys = tracks.map((_, index) => `bench/analysis/track-${index + 1}.wav`);
  for (const [index, track] of tracks.entries()) await bucket.putFile(keys[index]!, track.path, 'audio/wav');

  // Wall time on the first track: a direct request and the program, alternating.
  const timed = tracks[0]!;
  const transcriber = new Transcriber({ baseUrl: whisper.url, model: 'whisper-1', timeoutMs: 15 * 60_000 });
  const directTimes: number[] = [];
  const programTimes: number[] = [];
  const edits: AiEdit[][] = new Array(tracks.length);
  await transcriber.transcribe(timed.path, settings.language, AbortSignal.timeout(15 * 60_000));
  for (let attempt = 0; attempt < runs; attempt += 1) {
    directTimes.push((await seconds(() => transcriber.transcribe(timed.path, settings.language, AbortSignal.timeout(15 * 60_000)))).seconds);
    const run = await analyze(bucket, whisper.url, timed, keys[0]!);
    programTimes.push(run.seconds);
    edits[0] ??= run.edits;
  }
  const direct = median(directTimes);
  const program = median(programTimes);
  say();
  say(`wall time on track 1 (${fixed(minutes(timed.durationMs), 1)} min), alternating, median of ${runs}:`);
  say(`  direct transcription request: ${fixed(direct)} s   [${directTimes.map((time) => fixed(time)).join(', ')}]`);
  say(`  analyze program (S3 in and out): ${fixed(program)} s   [${programTimes.map((time) => fixed(time)).join(', ')}]`);
  say(`  program ÷ direct, run by run: ${programTimes.map((time, index) => fixed(time / directTimes[index]!, 3)).join(', ')}`);
  say(`  recognizer speed: ${fixed(timed.durationMs / 1000 / direct, 1)}× realtime`);

  // The other tracks, two jobs at a time (not timed).
  let next = 1;
  const worker = async () => {
    for (let index = next++; index < tracks.length; index = next++) edits[index] = (await analyze(bucket, whisper.url, tracks[index]!, keys[index]!)).edits;
  };
  await Promise.all([worker(), worker()]);

  const asSpan = (edit: AiEdit): TimeSpan => ({ startMs: edit.start_ms, endMs: edit.end_ms });
  const all = edits.flat();
  const active = edits.map((each) => each.filter((edit) => edit.active));

  const truths = tracks.map((track) => cuttablePauses(track, minimumPause));
  const silenceCuts = active.map((each) => each.filter((edit) => edit.type === 'silence').map(asSpan));
  const silenceIou = iouOf(tracks.map((_, index) => overlapOf(silenceCuts[index]!, truths[index]!)));
  const totalSeconds = (spans: readonly TimeSpan[]) => spans.reduce((sum, span) => sum + spanMs(span), 0) / 1000;

  const missedTakes: string[] = [];
  const strayCuts: string[] = [];
  let falseStartCuts = 0;
  for (const [index, track] of tracks.entries()) {
    const takes = track.phrases.filter((phrase) => phrase.dropped);
    const cuts = active[index]!.filter((edit) => edit.type === 'false_start');
    for (const take of takes) if (!cuts.some((cut) => overlapMs(asSpan(cut), take) > 0)) missedTakes.push(`"${take.text}" (track ${index + 1})`);
    for (const cut of cuts) if (!takes.some((take) => overlapMs(asSpan(cut), take) > 0)) strayCuts.push(`${cut.reason} (track ${index + 1})`);
    falseStartCuts += cuts.length;
  }
  const takesFound = planted - missedTakes.length;
  const falseStartCutsOnTakes = falseStartCuts - strayCuts.length;
  const recall = takesFound / planted;
  const precision = falseStartCuts > 0 ? falseStartCutsOnTakes / falseStartCuts : 0;

  const clippedMs = tracks.flatMap((track, index) =>
    active[index]!.flatMap((edit) => {
      const ms = track.phrases.filter((phrase) => !phrase.dropped).reduce((sum, phrase) => sum + overlapMs(asSpan(edit), phrase), 0);
      return ms > 0 ? [ms] : [];
    }),
  );

  // Boundaries at a track's edges join nothing: not measured.
  const distances = tracks.flatMap((track, index) =>
    active[index]!.flatMap((edit) => [edit.start_ms, edit.end_ms].filter((ms) => ms > 0 && ms < Math.round(track.durationMs)).map((ms) => distanceToPhraseEdge(track, ms))),
  );

  const count = (type: AiEdit['type'], activeOnly: boolean) => all.filter((edit) => edit.type === type && (!activeOnly || edit.active)).length;
  say();
  say(`analysis of all ${tracks.length} tracks: ${count('silence', true)} silence cuts, ${count('false_start', true)} false_start cuts, ${count('filler', false)} fillers offered (inactive)`);
  say(
    `  silence cuts (${fixed(totalSeconds(silenceCuts.flat()), 1)} s) vs the ${truths.flat().length} true cuttable pause regions ` +
      `(${fixed(totalSeconds(truths.flat()), 1)} s): IoU ${fixed(silenceIou, 3)}`,
  );
  say(`  false starts: ${takesFound} of ${planted} planted takes found (recall ${fixed(recall, 3)}); ${falseStartCutsOnTakes} of ${falseStartCuts} false_start cuts on a planted take (precision ${fixed(precision, 3)})`);
  if (missedTakes.length) say(`    missed: ${missedTakes.join('; ')}`);
  if (strayCuts.length) say(`    not on a planted take: ${strayCuts.join('; ')}`);
  say(`  active cuts overlapping a kept phrase: ${clippedMs.length} (${fixed(clippedMs.reduce((sum, ms) => sum + ms, 0), 0)} ms in all)`);
  say(
    `  cut boundaries from the nearest true phrase edge: median ${fixed(median(distances), 0)} ms, p10 ${fixed(quantile(distances, 0.1), 0)}, ` +
      `p90 ${fixed(quantile(distances, 0.9), 0)}, max ${fixed(Math.max(...distances), 0)} (${distances.length} boundaries; ` +
      `the guard bands put them ${WORD_TAIL_MS} ms after a phrase and ${WORD_LEAD_IN_MS} ms before one by design)`,
  );

  // Detector time per audio second against the recognizer's, on the same machine in the same run.
  const recognizerPerAudioSecond = direct / (timed.durationMs / 1000);
  const timeRatio = (detection: Detection) => detection.seconds / (audioMs / 1000) / recognizerPerAudioSecond;
  const detectorFigures = (detection: Detection) => ({
    iou: iouOf(detection.scores.map((score) => score.overlap)),
    boundary: median(detection.scores.flatMap((score) => score.boundaryErrorsMs)),
    time: timeRatio(detection),
  });
  const energyFigures = detectorFigures(energy);
  const sileroFigures = detectorFigures(silero);
  const sileroWins = sileroFigures.iou >= energyFigures.iou + 0.02 && sileroFigures.boundary <= energyFigures.boundary && sileroFigures.time <= TARGETS.detectorTimeRatio;
  say();
  say(
    sileroWins
      ? `detector: Silero VAD is clearly better on this corpus (IoU ${fixed(sileroFigures.iou, 3)} vs ${fixed(energyFigures.iou, 3)}, boundary ${fixed(sileroFigures.boundary, 0)} vs ${fixed(energyFigures.boundary, 0)} ms)`
      : `detector kept: energy, the program's (IoU ${fixed(energyFigures.iou, 3)} vs Silero's ${fixed(sileroFigures.iou, 3)}, boundary ${fixed(energyFigures.boundary, 0)} vs ${fixed(sileroFigures.boundary, 0)} ms, ` +
          `cost ${fixed(energyFigures.time, 4)}× vs ${fixed(sileroFigures.time, 4)}× the recognizer's, and no 290 MB dependency)`,
  );
  say();

  result('silence_cut_iou', silenceIou, '>=', TARGETS.silenceCutIou, 3);
  result('false_start_recall', recall, '>=', TARGETS.falseStartRecall, 3);
  result('false_start_precision', precision, '>=', TARGETS.falseStartPrecision, 3);
  result('cuts_overlapping_speech', clippedMs.length, '=', TARGETS.cutsOverlappingSpeech, 0);
  result('cut_boundary_median_ms', median(distances), '<=', TARGETS.cutBoundaryMedianMs, 0);
  result('analysis_time_ratio', program / direct, '<=', TARGETS.analysisTimeRatio, 3);
  // Silero is a comparison: its misses do not fail the run.
  for (const [name, figures, gated] of [['energy', energyFigures, true], ['silero', sileroFigures, false]] as const) {
    result(`vad_${name}_silence_iou`, figures.iou, '>=', TARGETS.detectorIou, 3, gated);
    result(`vad_${name}_boundary_median_ms`, figures.boundary, '<=', TARGETS.detectorBoundaryMedianMs, 0, gated);
    result(`vad_${name}_time_ratio`, figures.time, '<=', TARGETS.detectorTimeRatio, 4, gated);
  }
} finally {
  await whisper.close();
  await bucket.close();
}
for (const line of results) say(line);
process.exitCode = missed ? 1 : 0;
