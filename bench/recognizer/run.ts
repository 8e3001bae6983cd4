/**
 * The recognizer: its accuracy, its speed on a long talk, what the analysis adds to it, and
 * its memory, for each set of Whisper weights the project installs (recognizer/, the default
 * first). Per weights, in one run on this machine:
 *
 * - a talk of --minutes (default 20) of flite sentences (bench/analysis/corpus.ts, tracks
 *   joined end to end and repeated) is transcribed by one direct request to a Whisper server
 *   of those weights (the recognizer alone), then analysed by the whisper image's `analyze`
 *   program as its real entrypoint against an embedded S3 and the same server: the program's
 *   wall time against the talk's length and against the recognizer alone, the longest wait
 *   between two of its progress reports while it transcribes, and the word error rate of the
 *   direct transcript against the script;
 * - the recognizer processes' peak resident memory (VmHWM): over the program's pieces (what an
 *   analysis costs, gated), then once the whole talk has gone in one request (reported);
 * - a 40-second espeak-ng talk (the voice a new user tried first), its word error rate.
 *
 *   node bench/recognizer/run.ts [--minutes 20] [--weights base,tiny.en]
 *
 * Gated (the run fails on a miss) for the default weights: analysis ≤ 0.15× the talk's length
 * and ≤ 1.1× the recognizer alone, progress at least every 30 s, flite WER ≤ 0.15, 1 GiB
 * resident over the pieces. The others'
 * lines are reported, to choose between them.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import type { AnalyzeInput } from '../../crds/contract/programs/analyze.ts';
import { parseProgressLine } from '../../crds/contract/progress-lines.ts';
import { readProgramOutcome, runProgram, startJobBucket, WHISPER_IMAGE_MAIN, type JobBucket } from '../../hack/fixtures/job-program.ts';
import { makeSpokenTrack, wordErrorRate } from '../../hack/fixtures/speech.ts';
import { startLocalWhisper } from '../../recognizer/server/server.ts';
import { Transcriber } from '../../job-images/whisper/src/transcriber.ts';
import { loadCorpus } from '../analysis/corpus.ts';

const run = promisify(execFile);
const DATA = new URL('../../.data/', import.meta.url).pathname;
const { values: options } = parseArgs({ options: { minutes: { type: 'string', default: '20' }, weights: { type: 'string', default: 'base,tiny.en' } } });
const talkMinutes = Number(options.minutes);
const weightsList = options.weights.split(',').map((name) => name.trim());
const DEFAULT_WEIGHTS = 'base';

/**
 * Resident memory against a small pod's budget (the chart's server: a 2 GiB limit, two requests
 * at once): gated over the program's pieces, reported for a whole long talk in one request.
 */
const TARGETS = { analysisPerTalk: 0.15, analysisPerRecognizer: 1.1, progressGapSeconds: 30, fliteWer: 0.15, espeakWer: 0.15, residentMb: 1024 };

/** What a new user spoke first (espeak-ng's default English voice). */
const ESPEAK_SCRIPT =
  'Hello and welcome back to my channel. Today I want to show you three simple ways to make your videos shorter without losing anything important. ' +
  'First, cut the long pauses, because nobody wants to watch you think. Second, remove the false starts, the sentences you began and then said again. ' +
  'Third, keep your sentences short and your points clear. If you liked this video, subscribe and I will see you next week.';

const say = (line = '') => process.stdout.write(`${line}\n`);
const fixed = (value: number, digits = 2) => value.toFixed(digits);
const results: string[] = [];
let missed = false;

function result(metric: string, value: number, op: '>=' | '<=', target: number, digits: number, gated: boolean): void {
  const ok = op === '>=' ? value >= target : value <= target;
  if (!ok && gated) missed = true;
  results.push(`RESULT ${metric} ${fixed(value, digits)} (target ${op} ${target}) ${ok ? 'ok' : 'miss'}`);
}

async function seconds<T>(action: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const started = performance.now();
  const value = await action();
  return { value, seconds: (performance.now() - started) / 1000 };
}

/** The largest VmHWM (peak resident set, MB) of the recognizer worker processes running these weights. */
async function recognizerPeakMb(weights: string): Promise<number> {
  let peak = 0;
  for (const pid of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.includes('cutroom_recognizer') || !cmdline.split('\0').includes(weights)) continue;
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
    peak = Math.max(peak, kb / 1024);
  }
  return peak;
}

/** The long talk: the corpus's tracks end to end, repeated until it lasts `minutes`, with its script. */
async function longTalk(minutes: number): Promise<{ path: string; durationMs: number; script: string }> {
  const { tracks } = await loadCorpus(join(DATA, 'bench-corpus'), 2, say);
  const chosen: typeof tracks = [];
  let durationMs = 0;
  for (let index = 0; durationMs < minutes * 60_000; index++) {
    const track = tracks[index % tracks.length]!;
    chosen.push(track);
    durationMs += track.durationMs;
  }
  const path = join(DATA, 'bench-corpus', `talk-${minutes}min.wav`);
  await run('sox', [...chosen.map((track) => track.path), path]);
  const script = chosen.flatMap((track) => track.phrases.map((phrase) => phrase.text)).join(' ');
  return { path, durationMs, script };
}

interface ProgramTiming {
  seconds: number;
  /** The longest wait between two progress reports from the first `transcribing` one to the last. */
  longestGapSeconds: number;
  transcribingReports: number;
}

/** The analyze program on the talk, its progress reports timed as they come. */
async function analyzeTalk(bucket: JobBucket, whisperUrl: string, key: string, durationMs: number): Promise<ProgramTiming> {
  const jobId = randomUUID();
  const input: AnalyzeInput = {
    settings: { pacing_level: 50, false_start_sensitivity: 50, language: 'en', analysis_mode: 'ai_edit' },
    sources: [{ media_file_id: randomUUID(), media_item_id: randomUUID(), audio_key: key, duration_ms: Math.round(durationMs), timeline_offset_ms: 0, source_start_ms: 0 }],
  };
  const spec = { jobId, program: 'analyze', userId: randomUUID(), projectId: randomUUID(), input, outputPrefix: `bench/recognizer/${jobId}`, timeoutSeconds: 3600 };
  const started = performance.now();
  const reports: { at: number; step: string }[] = [];
  const outcome = await runProgram(WHISPER_IMAGE_MAIN, spec, { ...bucket.env, WHISPER_BASE_URL: whisperUrl }, (line) => {
    const report = parseProgressLine(line);
    if (report) reports.push({ at: (performance.now() - started) / 1000, step: report.step });
  });
  const { result: programResult, error } = await readProgramOutcome(bucket.env, spec.outputPrefix);
  if (outcome.exitCode !== 0 || !programResult) throw new Error(`analyze program failed: ${error?.message ?? 'no result.json'}\n${outcome.stderr}`);
  const first = reports.findIndex((report) => report.step === 'transcribing');
  const last = reports.findLastIndex((report) => report.step === 'transcribing');
  let longestGapSeconds = 0;
  for (let index = Math.max(1, first + 1); first >= 0 && index <= Math.min(last + 1, reports.length - 1); index++) {
    longestGapSeconds = Math.max(longestGapSeconds, reports[index]!.at - reports[index - 1]!.at);
  }
  return { seconds: outcome.wallSeconds, longestGapSeconds, transcribingReports: last - first + 1 };
}

const talk = await longTalk(talkMinutes);
const talkSeconds = talk.durationMs / 1000;
say(`long talk: ${fixed(talkSeconds / 60, 1)} min of flite sentences, ${talk.script.split(' ').length} words`);
const espeakDir = join(DATA, 'bench-corpus');
const espeak = join(espeakDir, 'espeak-talk.wav');
await run('espeak-ng', ['-w', espeak, ESPEAK_SCRIPT]);

const bucket = await startJobBucket();
try {
  const talkKey = 'bench/recognizer/talk.wav';
  await bucket.putFile(talkKey, talk.path, 'audio/wav');
  for (const weights of weightsList) {
    const gated = weights === DEFAULT_WEIGHTS;
    const whisper = await startLocalWhisper({ weights, concurrency: 1, recognizerTimeoutMs: 60 * 60_000 });
    try {
      const transcriber = new Transcriber({ baseUrl: whisper.url, model: 'whisper-1', timeoutMs: 60 * 60_000 });
      const signal = AbortSignal.timeout(60 * 60_000);
      const heard = async (path: string) => ((await transcriber.transcribe(path, 'en', signal)).words ?? []).map((word) => word.word);
      // warms the worker (its model loaded), not timed
      const espeakWords = await heard(espeak);
      // the program first, on a worker that has seen nothing longer than a piece: its peak is what an analysis costs
      const program = await analyzeTalk(bucket, whisper.url, talkKey, talk.durationMs);
      const piecesPeakMb = await recognizerPeakMb(weights);
      const direct = await seconds(() => heard(talk.path));
      const peakMb = await recognizerPeakMb(weights);
      const fliteWer = wordErrorRate(talk.script, direct.value);
      const espeakWer = wordErrorRate(ESPEAK_SCRIPT, espeakWords);
      say();
      say(`weights ${weights}:`);
      say(`  recognizer alone: ${fixed(direct.seconds, 1)} s for ${fixed(talkSeconds, 0)} s of talk (${fixed(talkSeconds / direct.seconds, 1)}× realtime)`);
      say(`  recognizer's peak resident memory: ${fixed(piecesPeakMb, 0)} MB over the program's pieces, ${fixed(peakMb, 0)} MB once it has had the whole talk in one request`);
      say(`  analyze program: ${fixed(program.seconds, 1)} s (${fixed(program.seconds / talkSeconds, 3)}× the talk, ${fixed(program.seconds / direct.seconds, 3)}× the recognizer alone)`);
      say(`  progress while transcribing: ${program.transcribingReports} reports, longest wait ${fixed(program.longestGapSeconds, 1)} s`);
      say(`  word error rate: flite talk ${fixed(fliteWer, 3)}, espeak talk ${fixed(espeakWer, 3)}`);
      say(`  espeak talk heard: "${espeakWords.join('').trim()}"`);
      const metric = `recognizer_${weights.replace(/\W/g, '_')}`;
      result(`${metric}_analysis_per_talk_length`, program.seconds / talkSeconds, '<=', TARGETS.analysisPerTalk, 3, gated);
      result(`${metric}_analysis_per_recognizer_alone`, program.seconds / direct.seconds, '<=', TARGETS.analysisPerRecognizer, 3, gated);
      result(`${metric}_longest_progress_wait_s`, program.longestGapSeconds, '<=', TARGETS.progressGapSeconds, 1, gated);
      result(`${metric}_flite_word_error_rate`, fliteWer, '<=', TARGETS.fliteWer, 3, gated);
      result(`${metric}_espeak_word_error_rate`, espeakWer, '<=', TARGETS.espeakWer, 3, false);
      result(`${metric}_resident_mb_in_pieces`, piecesPeakMb, '<=', TARGETS.residentMb, 0, gated);
      result(`${metric}_resident_mb_whole_talk`, peakMb, '<=', TARGETS.residentMb, 0, false);
    } finally {
      await whisper.close();
    }
  }
} finally {
  await bucket.close();
}

say();
for (const line of results) say(line);
process.exit(missed ? 1 : 0);
