import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/**
 * One faster-whisper process (recognizer/cutroom_recognizer, in the virtual environment
 * hack/recognizer.sh makes from recognizer/requirements.lock): the model is loaded once, then
 * requests are answered one at a time over JSON lines. A request that is cancelled or runs
 * too long ends the process; the pool starts another.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The model load (1–3 s on a CPU) and Python's imports, bounded. */
const READY_TIMEOUT_MS = 120_000;
const STDERR_TAIL_LINES = 20;

export interface WorkerOptions {
  /** The virtual environment's interpreter; default RECOGNIZER_PYTHON, else `.venv/bin/python` in the project. */
  python?: string;
  /** Weights name (recognizer/cutroom_recognizer/weights.py); default WHISPER_WEIGHTS, else base. */
  weights?: string;
  /** CTranslate2's threads for one request; default 0 (its own choice: every core). */
  threads?: number;
  /** false decodes without the guards against text made up over non-speech: only for tests that show what they remove. */
  guards?: boolean;
  /** Decode every window by sampling at this temperature: only for the test that shows sampled decodes repeat. */
  samplingTemperature?: number;
}

const segmentSchema = z.object({
  start: z.number(),
  end: z.number(),
  text: z.string(),
  tokens: z.array(z.number()),
  temperature: z.number(),
  avg_logprob: z.number(),
  compression_ratio: z.number(),
  no_speech_prob: z.number(),
  words: z.array(z.object({ word: z.string(), start: z.number(), end: z.number(), probability: z.number() })),
});

const messageSchema = z.union([
  z.object({ ready: z.object({ weights: z.string(), device: z.string(), compute_type: z.string(), languages: z.array(z.string()).nullable() }) }),
  z.object({ result: z.object({ language: z.string(), language_probability: z.number(), duration: z.number(), segments: z.array(segmentSchema) }) }),
  z.object({ error: z.object({ kind: z.enum(['unsupported-language', 'recognizer-failed']), message: z.string() }) }),
]);

export type WorkerSegment = z.infer<typeof segmentSchema>;
export type WorkerReady = Extract<z.infer<typeof messageSchema>, { ready: unknown }>['ready'];
export type WorkerResult = Extract<z.infer<typeof messageSchema>, { result: unknown }>['result'];

/** What the worker said went wrong with one request, or that it died. */
export class WorkerError extends Error {
  readonly kind: 'unsupported-language' | 'recognizer-failed' | 'timed-out';

  constructor(kind: WorkerError['kind'], message: string) {
    super(message);
    this.name = 'WorkerError';
    this.kind = kind;
  }
}

export interface WorkerRequest {
  /** 16 kHz mono s16le PCM. */
  audio: string;
  language: string | null;
  prompt: string | null;
}

type Pending = { resolve: (result: WorkerResult) => void; reject: (error: Error) => void };

export function recognizerPython(options: WorkerOptions = {}): string {
  return options.python ?? (process.env.RECOGNIZER_PYTHON || join(ROOT, '.venv', 'bin', 'python'));
}

export class WhisperWorker {
  readonly ready: WorkerReady;
  readonly #process: ChildProcessByStdio<Writable, Readable, Readable>;
  readonly #stderr: string[];
  #pending: Pending | null = null;
  #exited = false;

  private constructor(child: ChildProcessByStdio<Writable, Readable, Readable>, ready: WorkerReady, stderr: string[]) {
    this.#process = child;
    this.ready = ready;
    this.#stderr = stderr;
  }

  /** Starts a worker and waits for its model to load. */
  static async start(options: WorkerOptions = {}): Promise<WhisperWorker> {
    const python = recognizerPython(options);
    if (!existsSync(python)) throw new WorkerError('recognizer-failed', `${python} does not exist: run hack/recognizer.sh (or hack/up.sh) to make the recognizer's virtual environment`);
    const args = [
      '-m',
      'cutroom_recognizer',
      ...(options.weights ? ['--weights', options.weights] : []),
      ...(options.threads ? ['--threads', String(options.threads)] : []),
      ...(options.guards === false ? ['--no-guards'] : []),
      ...(options.samplingTemperature === undefined ? [] : ['--sampling-temperature', String(options.samplingTemperature)]),
    ];
    const child = spawn(python, args, {
      cwd: join(ROOT, 'recognizer'),
      env: { ...process.env, PYTHONPATH: join(ROOT, 'recognizer'), PYTHONUNBUFFERED: '1', HF_HUB_OFFLINE: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stderr: string[] = [];
    createInterface({ input: child.stderr }).on('line', (line) => {
      stderr.push(line);
      if (stderr.length > STDERR_TAIL_LINES) stderr.shift();
    });
    const lines = createInterface({ input: child.stdout });
    const first = await Promise.race([
      once(lines, 'line').then(([line]) => parseMessage(line as string)),
      // 'close': after the process's output has all been read (its last words on stderr included)
      once(child, 'close').then(() => null),
      once(child, 'error').then(([error]) => {
        throw new WorkerError('recognizer-failed', `the recognizer could not start: ${(error as Error).message}`);
      }),
      new Promise<null>((resolveTimeout) => setTimeout(() => resolveTimeout(null), READY_TIMEOUT_MS).unref()),
    ]);
    if (first === null || !('ready' in first)) {
      child.kill('SIGKILL');
      const said = first && 'error' in first ? first.error.message : stderr.at(-1) ?? 'no answer';
      throw new WorkerError('recognizer-failed', `the recognizer did not start: ${said}`);
    }
    const worker = new WhisperWorker(child, first.ready, stderr);
    lines.on('line', (line) => worker.#onLine(line));
    child.once('exit', (code, signal) => worker.#onExit(code, signal));
    return worker;
  }

  get alive(): boolean {
    return !this.#exited;
  }

  /** One request; `signal` or `timeoutMs` ends the worker (a Whisper decode cannot be stopped halfway otherwise). */
  transcribe(request: WorkerRequest, options: { signal?: AbortSignal; timeoutMs: number }): Promise<WorkerResult> {
    if (this.#exited) return Promise.reject(new WorkerError('recognizer-failed', 'the recognizer has exited'));
    if (this.#pending) return Promise.reject(new Error('a worker answers one request at a time'));
    return new Promise<WorkerResult>((resolveResult, rejectResult) => {
      const timer = setTimeout(() => stop(new WorkerError('timed-out', `timed out after ${Math.round(options.timeoutMs / 1000)} s`)), options.timeoutMs);
      const stop = (reason: Error) => {
        this.kill();
        finish(() => rejectResult(reason));
      };
      const onAbort = () => stop(options.signal?.reason instanceof Error ? options.signal.reason : new Error('cancelled'));
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.#pending = null;
        settle();
      };
      this.#pending = {
        resolve: (result) => finish(() => resolveResult(result)),
        reject: (error) => finish(() => rejectResult(error)),
      };
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.#process.stdin.write(`${JSON.stringify({ audio: request.audio, language: request.language, prompt: request.prompt })}\n`);
    });
  }

  kill(): void {
    if (!this.#exited) this.#process.kill('SIGKILL');
  }

  /** Ends the worker and waits for it to be gone. */
  async close(): Promise<void> {
    if (this.#exited) return;
    const exited = once(this.#process, 'exit');
    this.kill();
    await exited;
  }

  #onLine(line: string): void {
    const message = parseMessage(line);
    const pending = this.#pending;
    if (!message || !pending) return;
    if ('result' in message) pending.resolve(message.result);
    else if ('error' in message) pending.reject(new WorkerError(message.error.kind, message.error.message));
  }

  #onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.#exited = true;
    const why = signal ? `signal ${signal}` : `code ${code}`;
    this.#pending?.reject(new WorkerError('recognizer-failed', `the recognizer exited (${why}): ${this.#stderr.at(-1) ?? 'nothing said'}`));
  }
}

function parseMessage(line: string): z.infer<typeof messageSchema> | null {
  try {
    const parsed = messageSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
