import { createReadStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { JobFailure } from '../../lib/job-failure.ts';
import type { RecognizedWord } from './analysis/words.ts';

/** A busy server (429) is asked again this many times in all, pausing 2 s, 4 s, … between. */
const BUSY_ATTEMPTS = 5;
const BUSY_PAUSE_MS = 2000;
/** Whisper conditions on at most 224 prompt tokens; about this many characters of text. */
const PROMPT_MAX_CHARS = 800;

/** What one transcription returned: the words the cuts are bounded by, and the language heard. */
export interface Transcription {
  language: string | null;
  words: RecognizedWord[] | null;
}

export interface TranscriberOptions {
  baseUrl: string;
  model: string;
  /** Longest one request may take (a long source on a busy server). */
  timeoutMs: number;
}

/**
 * The OpenAI-compatible transcription API (a faster-whisper server in a cluster, the
 * offline recognizer locally) through the `openai` client, asking for word timestamps.
 * Never retried by the client: a long transcription must not silently run twice.
 */
export class Transcriber {
  readonly #client: OpenAI;
  readonly #model: string;

  constructor(options: TranscriberOptions) {
    this.#client = new OpenAI({ baseURL: options.baseUrl, apiKey: 'cutroom', maxRetries: 0, timeout: options.timeoutMs });
    this.#model = options.model;
  }

  /**
   * One transcription; `prompt` (the run's director notes) is the recognizer's prompt, which
   * Whisper follows for names, terms and spelling. A 429 (the server's recognizers are all busy: the audio was never
   * transcribed) is asked again after a pause, a few times; nothing else is retried.
   */
  async transcribe(wavPath: string, language: string | null, signal: AbortSignal, prompt?: string): Promise<Transcription> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#once(wavPath, language, signal, prompt);
      } catch (error) {
        if (!(error instanceof OpenAI.RateLimitError) || attempt >= BUSY_ATTEMPTS) throw transcriptionFailure(error, language);
        await sleep(BUSY_PAUSE_MS * attempt, undefined, { signal });
      }
    }
  }

  async #once(wavPath: string, language: string | null, signal: AbortSignal, prompt: string | undefined): Promise<Transcription> {
    const answer = await this.#client.audio.transcriptions.create(
      {
        file: createReadStream(wavPath),
        model: this.#model,
        response_format: 'verbose_json',
        timestamp_granularities: ['word'],
        ...(language ? { language } : {}),
        // Whisper reads only the prompt's last ~224 tokens: the end of the notes is kept
        ...(prompt?.trim() ? { prompt: prompt.trim().slice(-PROMPT_MAX_CHARS) } : {}),
      },
      { signal },
    );
    return { language: answer.language ?? null, words: (answer.words as RecognizedWord[] | undefined) ?? null };
  }
}

/** What went wrong, in the words the api's catalogs translate. */
function transcriptionFailure(error: unknown, language: string | null): unknown {
  if (error instanceof OpenAI.APIUserAbortError) return error;
  if (error instanceof OpenAI.APIConnectionError) {
    return new JobFailure(`The transcription service could not be reached: ${error.message}`, { cause: error, code: 'analysis.transcriber_unavailable' });
  }
  if (error instanceof OpenAI.APIError) {
    const param = (error.error as { param?: unknown } | undefined)?.param;
    if (error.status === 400 && language && (param === 'language' || /language/i.test(error.message))) {
      return new JobFailure(`The language "${language}" is not supported by the transcription service`, { cause: error, code: 'analysis.unsupported_language', params: { language } });
    }
    if (error.status !== undefined && error.status >= 500) {
      return new JobFailure(`The transcription service failed (${error.status}): ${error.message}`, { cause: error, code: 'analysis.transcriber_failed', params: { detail: String(error.status) } });
    }
    return new JobFailure(`The transcription service refused the audio (${error.status}): ${error.message}`, { cause: error, code: 'analysis.transcriber_failed', params: { detail: error.message.slice(0, 200) } });
  }
  return error;
}
