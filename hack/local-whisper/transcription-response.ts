import { deflateSync } from 'node:zlib';
import type { Recognition, RecognizedWord } from './recognizer.ts';

/**
 * The bodies a faster-whisper server answers to POST /v1/audio/transcriptions, built from
 * what pocketsphinx recognized. Times in seconds; words keep Whisper's leading space.
 */

export type ResponseFormat = 'json' | 'text' | 'verbose_json';
export const RESPONSE_FORMATS: readonly ResponseFormat[] = ['json', 'text', 'verbose_json'];

export interface TranscriptionSegment {
  id: number;
  seek: number;
  start: number;
  end: number;
  text: string;
  tokens: number[];
  temperature: number;
  avg_logprob: number;
  compression_ratio: number;
  no_speech_prob: number;
}

export interface VerboseTranscription {
  task: 'transcribe';
  language: 'en';
  duration: number;
  text: string;
  segments: TranscriptionSegment[];
  /** Only when `timestamp_granularities[]=word` was asked for, as OpenAI and faster-whisper do. */
  words?: RecognizedWord[];
}

/** One segment per utterance: pocketsphinx cuts utterances at silences, as Whisper's segments roughly are. */
export function verboseTranscription(recognition: Recognition, options: { words: boolean }): VerboseTranscription {
  const segments = recognition.utterances.map((words, id) => segmentOf(words, id));
  return {
    task: 'transcribe',
    language: 'en',
    duration: Math.round(recognition.durationSeconds * 1000) / 1000,
    text: transcriptText(recognition),
    segments,
    ...(options.words ? { words: recognition.utterances.flat() } : {}),
  };
}

export function transcriptText(recognition: Recognition): string {
  return recognition.utterances.map(segmentText).join('').trim();
}

function segmentOf(words: RecognizedWord[], id: number): TranscriptionSegment {
  const text = segmentText(words);
  const start = words[0]?.start ?? 0;
  return {
    id,
    // Whisper's seek counts 10 ms mel frames.
    seek: Math.round(start * 100),
    start,
    end: words.at(-1)?.end ?? start,
    text,
    tokens: [],
    temperature: 0,
    avg_logprob: averageLogProbability(words),
    compression_ratio: compressionRatio(text),
    no_speech_prob: 0,
  };
}

function segmentText(words: readonly RecognizedWord[]): string {
  return words.map((word) => word.word).join('');
}

function averageLogProbability(words: readonly RecognizedWord[]): number {
  const known = words.flatMap((word) => (word.probability === null ? [] : [Math.log(Math.max(word.probability, 1e-6))]));
  if (!known.length) return 0;
  return Math.round((known.reduce((sum, value) => sum + value, 0) / known.length) * 1000) / 1000;
}

/** As Whisper computes it (text bytes over zlib-compressed bytes); high values flag repetition. */
function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  if (!bytes.length) return 0;
  return Math.round((bytes.length / deflateSync(bytes).length) * 1000) / 1000;
}
