import type { Recognition, RecognizedWord } from './recognizer.ts';

/**
 * The bodies a faster-whisper server answers to POST /v1/audio/transcriptions, built from
 * what the recognizer decoded. Times in seconds; words keep Whisper's leading space.
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
  language: string;
  duration: number;
  text: string;
  segments: TranscriptionSegment[];
  /** Only when `timestamp_granularities[]=word` was asked for, as OpenAI and faster-whisper do: one flat list. */
  words?: RecognizedWord[];
}

export function verboseTranscription(recognition: Recognition, options: { words: boolean }): VerboseTranscription {
  return {
    task: 'transcribe',
    language: recognition.language,
    duration: Math.round(recognition.durationSeconds * 1000) / 1000,
    text: transcriptText(recognition),
    segments: recognition.segments.map(({ words: _words, ...segment }, id) => ({ id, seek: Math.round(segment.start * 100), ...segment })),
    ...(options.words ? { words: recognition.segments.flatMap((segment) => segment.words) } : {}),
  };
}

export function transcriptText(recognition: Recognition): string {
  return recognition.segments
    .map((segment) => segment.text)
    .join('')
    .trim();
}
