import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Offline English speech recognition with Debian's pocketsphinx (`pocketsphinx` and its
 * model `pocketsphinx-en-us`): any media ffmpeg can decode → 16 kHz mono PCM → one
 * `pocketsphinx_continuous` process → words with times, grouped in utterances.
 */

const run = promisify(execFile);
const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';
const RECOGNIZER = 'pocketsphinx_continuous';

const SAMPLE_RATE = 16_000;
const BYTES_PER_SECOND = SAMPLE_RATE * 2;
/** OpenAI's own floor: shorter audio is refused rather than transcribed as nothing. */
const MIN_AUDIO_SECONDS = 0.1;
/** pocketsphinx prints the first 10 ms frame of a word's last frame, so a word ends one frame later. */
const FRAME_SECONDS = 0.01;
/** Decoding a long video's audio track can take a while; the recognizer's own bound is set by the audio's length. */
const CONVERSION_TIMEOUT_MS = 5 * 60_000;
/** pocketsphinx ran 2–7× faster than realtime here: a run slower than realtime plus this is stuck. */
const RECOGNIZER_SLACK_MS = 60_000;
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

export interface RecognizedWord {
  /** As Whisper gives words: with a leading space. */
  word: string;
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  /** pocketsphinx's posterior probability of the word, 0–1; null when it printed none. */
  probability: number | null;
}

export interface Recognition {
  durationSeconds: number;
  /** The words of each stretch of speech pocketsphinx decoded on its own (between two silences). */
  utterances: RecognizedWord[][];
}

export type RecognitionFailure = 'unreadable-audio' | 'audio-too-short' | 'timed-out' | 'cancelled' | 'recognizer-failed';

export class RecognitionError extends Error {
  readonly failure: RecognitionFailure;

  constructor(failure: RecognitionFailure, message: string) {
    super(message);
    this.name = 'RecognitionError';
    this.failure = failure;
  }
}

export interface RecognizeOptions {
  /** A directory of this request's own, for the decoded audio and the recognizer's log. */
  workDir: string;
  /** Bound on the recognizer process; default: the audio's duration plus a minute. */
  timeoutMs?: number;
  /** Kills the running process, e.g. when the client has gone. */
  signal?: AbortSignal;
}

/** Transcribes the speech of a media file. */
export async function recognizeSpeech(input: string, options: RecognizeOptions): Promise<Recognition> {
  const pcm = join(options.workDir, 'audio.raw');
  await decodeToPcm(input, pcm, options.signal);
  const durationSeconds = (await stat(pcm)).size / BYTES_PER_SECOND;
  if (durationSeconds < MIN_AUDIO_SECONDS) {
    throw new RecognitionError('audio-too-short', `Audio file is too short. Minimum audio length is ${MIN_AUDIO_SECONDS} seconds.`);
  }
  const log = join(options.workDir, 'recognizer.log');
  const timeoutMs = options.timeoutMs ?? RECOGNIZER_SLACK_MS + Math.ceil(durationSeconds * 1000);
  let stdout: string;
  try {
    // A file name not ending in .wav is read as headerless PCM at -samprate (16 kHz by default).
    ({ stdout } = await run(RECOGNIZER, ['-infile', pcm, '-time', 'yes', '-logfn', log], {
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: MAX_OUTPUT_BYTES,
      ...(options.signal ? { signal: options.signal } : {}),
    }));
  } catch (error) {
    throw await recognizerFailure(error, log, timeoutMs, options.signal);
  }
  return { durationSeconds, utterances: parseRecognizerOutput(stdout) };
}

async function decodeToPcm(input: string, output: string, signal: AbortSignal | undefined): Promise<void> {
  try {
    await run(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', '-i', input, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', String(SAMPLE_RATE), '-f', 's16le', '-c:a', 'pcm_s16le', output], {
      timeout: CONVERSION_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      maxBuffer: 1 << 20,
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted) throw new RecognitionError('cancelled', 'The request was cancelled.');
    const failure = error as NodeJS.ErrnoException & { stderr?: string; killed?: boolean };
    if (failure.code === 'ENOENT') throw new RecognitionError('recognizer-failed', `${FFMPEG} is not installed (Debian package ffmpeg).`);
    if (failure.killed) throw new RecognitionError('timed-out', `Decoding the audio took longer than ${CONVERSION_TIMEOUT_MS / 1000} s.`);
    // ffmpeg names the upload's temporary path first: not the client's business.
    const reason = lastLine(failure.stderr ?? '').replace(`${input}: `, '') || 'no audio stream';
    throw new RecognitionError('unreadable-audio', `Invalid file format: ffmpeg could not decode an audio stream from it (${reason}).`);
  }
}

async function recognizerFailure(error: unknown, log: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<RecognitionError> {
  if (signal?.aborted) return new RecognitionError('cancelled', 'The request was cancelled.');
  const failure = error as NodeJS.ErrnoException & { killed?: boolean };
  if (failure.code === 'ENOENT') {
    return new RecognitionError('recognizer-failed', `${RECOGNIZER} is not installed (Debian packages pocketsphinx and pocketsphinx-en-us).`);
  }
  if (failure.killed) return new RecognitionError('timed-out', `The recognizer took longer than ${Math.round(timeoutMs / 1000)} s.`);
  const text = await readFile(log, 'utf8').catch(() => '');
  const reason = text.split('\n').filter((line) => /^(FATAL|ERROR)/.test(line)).at(-1) ?? failure.message;
  return new RecognitionError('recognizer-failed', `${RECOGNIZER} failed: ${reason.trim()}`);
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.trim() ?? '';
}

/** `word start end [probability]`, times in seconds; hypothesis lines (the utterance's text) do not match. */
const WORD_LINE = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)(?: (\S+))?$/;
const UTTERANCE_START = '<s>';
/** Sentence marks, silence, and noise words such as `[NOISE]` or `++UH++`: not speech. */
const NOT_A_WORD = /^(<\/?s>|<sil>|\[.*\]|\+\+?.*\+\+?)$/;
/** An alternative pronunciation of a dictionary word: `want(2)`. */
const PRONUNCIATION_SUFFIX = /\(\d+\)$/;

/**
 * The words of `pocketsphinx_continuous -time yes` output: per utterance a line with its
 * text, then one `word start end probability` line per token, `<s>` first.
 */
export function parseRecognizerOutput(stdout: string): RecognizedWord[][] {
  const utterances: RecognizedWord[][] = [];
  let current: RecognizedWord[] = [];
  const finish = () => {
    if (current.length) utterances.push(current);
    current = [];
  };
  for (const line of stdout.split('\n')) {
    const match = WORD_LINE.exec(line.trim());
    if (!match) {
      finish();
      continue;
    }
    const [, token = '', start = '', end = '', probability] = match;
    if (token === UTTERANCE_START) finish();
    if (NOT_A_WORD.test(token)) continue;
    const posterior = probability === undefined ? NaN : Number(probability);
    current.push({
      word: ` ${token.replace(PRONUNCIATION_SUFFIX, '')}`,
      start: seconds(Number(start)),
      end: seconds(Number(end) + FRAME_SECONDS),
      // pocketsphinx's log-math rounding can print a posterior of 1.0001.
      probability: Number.isFinite(posterior) ? Math.min(1, Math.max(0, posterior)) : null,
    });
  }
  finish();
  return utterances;
}

/** Milliseconds precision: pocketsphinx works in 10 ms frames, and sums of floats should not show. */
function seconds(value: number): number {
  return Math.round(value * 1000) / 1000;
}
