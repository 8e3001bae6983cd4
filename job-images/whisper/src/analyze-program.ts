import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import {
  analyzeInputSchema,
  type AiEdit,
  type AnalyzeInput,
  type AnalyzeResult,
  type AnalyzeSource,
  type Transcript,
  type TranscriptWord,
} from '../../../crds/contract/programs/analyze.ts';
import type { JobContext, JobProgram } from '../../lib/job-program.ts';
import type { JobSpec } from '../../lib/job-spec.ts';
import type { StepOf } from '../../../crds/contract/programs.ts';
import { stepFraction } from '../../lib/progress.ts';
import { EnergyEnvelopeBuilder, readWavLayout, type EnergyEnvelope } from './analysis/energy.ts';
import { countEdits, type PlannedEdit } from './analysis/plan.ts';
import { hearStretch, planHeardStretch } from './analysis/stretch.ts';
import { DEFAULT_PIECES, piecesOf, type Piece } from './analysis/pieces.ts';
import { normalizeWords, type RecognizedWord, type SpokenWord } from './analysis/words.ts';
import { Transcriber } from './transcriber.ts';

/** Output file names under the job's prefix; fixed so that a retry overwrites. */
const ANALYZE_FILES = { transcript: 'transcript.json', edits: 'edits.json' } as const;

/** 4 KiB holds the header of every WAV that ffmpeg and sox write. */
const WAV_HEADER_BYTES = 4096;

/** What one source sounded like: its words and the AI edits in its own time. */
interface HeardSource {
  source: AnalyzeSource;
  index: number;
  language: string | null;
  words: SpokenWord[];
}

/** One audio file as heard: its envelope and its words (source time). */
interface HeardAudio {
  envelope: EnergyEnvelope;
  language: string | null;
  words: SpokenWord[];
}

/**
 * The stretch [startMs, startMs + durationMs) of an audio file, in its own time from 0: the
 * envelope's frames and the words whose middle lies in it (a word cut by the clip's edge
 * belongs to the side that holds most of it).
 */
function stretchOf(audio: HeardAudio, startMs: number, durationMs: number): { envelope: EnergyEnvelope; words: SpokenWord[] } {
  if (startMs === 0 && durationMs >= audio.envelope.rms.length * audio.envelope.frame_ms) return audio;
  const frame = audio.envelope.frame_ms;
  const [first, last] = [Math.floor(startMs / frame), Math.ceil((startMs + durationMs) / frame)];
  const envelope: EnergyEnvelope = { frame_ms: frame, rms: audio.envelope.rms.slice(first, last) };
  const cepstra = audio.envelope.cepstra;
  if (cepstra) envelope.cepstra = { ...cepstra, values: cepstra.values.slice(first * cepstra.dims, last * cepstra.dims) };
  const endMs = startMs + durationMs;
  const words = audio.words
    .filter((word) => {
      const middle = (word.start_ms + word.end_ms) / 2;
      return middle >= startMs && middle < endMs;
    })
    .map((word) => ({ ...word, start_ms: Math.max(0, word.start_ms - startMs), end_ms: Math.min(durationMs, word.end_ms - startMs) }));
  return { envelope, words };
}

/** The span of an audio file the analysis covers (and is charged for): from the earliest stretch's start to the latest's end. */
function chargedSpanOf(sources: readonly AnalyzeSource[], audioKey: string): { startMs: number; endMs: number } {
  const stretches = sources.filter((source) => source.audio_key === audioKey);
  return {
    startMs: Math.min(...stretches.map((source) => source.source_start_ms)),
    endMs: Math.max(...stretches.map((source) => source.source_start_ms + source.duration_ms)),
  };
}

/**
 * The part of a 16-bit PCM WAV within [startMs, endMs), as a WAV of its own beside it (the
 * original path when the span covers the whole file): only what is charged is transcribed,
 * whatever runs past the duration the file was measured at.
 */
async function wavSpan(path: string, span: Piece, signal: AbortSignal): Promise<string> {
  const file = await open(path);
  try {
    const { size } = await file.stat();
    const head = new Uint8Array(Math.min(WAV_HEADER_BYTES, size));
    await file.read(head, 0, head.length, 0);
    const layout = readWavLayout(head, size);
    const frameBytes = 2 * layout.channels;
    const bytesAt = (ms: number) => Math.min(layout.data_bytes, Math.max(0, Math.floor((ms * layout.sample_rate_hz) / 1000)) * frameBytes);
    const [from, to] = [bytesAt(span.startMs), bytesAt(span.endMs)];
    if (from === 0 && to >= layout.data_bytes) return path;
    const header = Buffer.alloc(44);
    header.write('RIFF', 0, 'ascii');
    header.writeUInt32LE(36 + (to - from), 4);
    header.write('WAVEfmt ', 8, 'ascii');
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20);
    header.writeUInt16LE(layout.channels, 22);
    header.writeUInt32LE(layout.sample_rate_hz, 24);
    header.writeUInt32LE(layout.sample_rate_hz * frameBytes, 28);
    header.writeUInt16LE(frameBytes, 32);
    header.writeUInt16LE(16, 34);
    header.write('data', 36, 'ascii');
    header.writeUInt32LE(to - from, 40);
    const out = `${path}.charged.wav`;
    const target = await open(out, 'w');
    try {
      await target.write(header);
      if (to > from) {
        for await (const chunk of createReadStream(path, { start: layout.data_offset + from, end: layout.data_offset + to - 1, signal })) await target.write(chunk as Buffer);
      }
    } finally {
      await target.close();
    }
    return out;
  } finally {
    await file.close();
  }
}

/** The energy envelope of a 16-bit PCM WAV file, streamed (an hour of audio never sits in memory). */
async function envelopeOf(path: string, signal: AbortSignal): Promise<EnergyEnvelope> {
  const file = await open(path);
  let layout;
  try {
    const { size } = await file.stat();
    const head = new Uint8Array(Math.min(WAV_HEADER_BYTES, size));
    await file.read(head, 0, head.length, 0);
    layout = readWavLayout(head, size);
  } finally {
    await file.close();
  }
  const builder = new EnergyEnvelopeBuilder(layout.sample_rate_hz, layout.channels);
  if (layout.data_bytes === 0) return builder.finish();
  const samples = createReadStream(path, { start: layout.data_offset, end: layout.data_offset + layout.data_bytes - 1, signal });
  for await (const chunk of samples) builder.push(chunk as Buffer);
  return builder.finish();
}

interface TranscribeAudio {
  wav: string;
  /** What is charged, and so transcribed (file time). */
  span: Piece;
  transcriber: Transcriber;
  language: string | null;
  notes: string | undefined;
  signal: AbortSignal;
  /** The fraction of the span transcribed so far, and the seconds left at the pace so far. */
  onProgress: (fraction: number, etaSeconds?: number) => void;
}

/** An audio file's envelope and words (file time), with the recognizer's own time. */
async function transcribeAudio(request: TranscribeAudio): Promise<{ envelope: EnergyEnvelope; language: string | null; words: RecognizedWord[] | null; transcriptionMs: number; pieces: number }> {
  const { wav, span, transcriber, notes, signal } = request;
  if (span.endMs - span.startMs <= DEFAULT_PIECES.pieceMs * 1.5) {
    // one request: the envelope is measured while the recognizer works (the request's wait is
    // most of the job); an envelope that cannot be measured ends the request
    const charged = await wavSpan(wav, span, signal);
    const abort = new AbortController();
    const requested = performance.now();
    let answered = requested;
    const [envelope, transcription] = await Promise.all([
      envelopeOf(wav, signal).catch((error: unknown) => {
        abort.abort(error);
        throw error;
      }),
      transcriber.transcribe(charged, request.language, AbortSignal.any([signal, abort.signal]), notes).finally(() => {
        answered = performance.now();
      }),
    ]);
    const shift = charged === wav ? 0 : span.startMs / 1000;
    const words = transcription.words?.map((word) => ({ ...word, start: word.start + shift, end: word.end + shift })) ?? null;
    return { envelope, language: transcription.language, words, transcriptionMs: Math.round(answered - requested), pieces: 1 };
  }
  // a long recording: pieces cut at quiet moments, one request each, in order; the language
  // the first piece was heard in holds for the rest (a music bed or a mumble does not switch it)
  const envelope = await envelopeOf(wav, signal);
  const pieces = piecesOf(envelope, span);
  const words: RecognizedWord[] = [];
  let language = request.language;
  let heardLanguage: string | null = null;
  let transcriptionMs = 0;
  for (const piece of pieces) {
    const file = await wavSpan(wav, piece, signal);
    const requested = performance.now();
    const transcription = await transcriber.transcribe(file, language, signal, notes);
    transcriptionMs += performance.now() - requested;
    heardLanguage ??= transcription.language;
    language ??= transcription.language;
    for (const word of transcription.words ?? []) words.push({ ...word, start: word.start + piece.startMs / 1000, end: word.end + piece.startMs / 1000 });
    const doneMs = piece.endMs - span.startMs;
    const totalMs = span.endMs - span.startMs;
    request.onProgress(doneMs / totalMs, (transcriptionMs / doneMs) * (totalMs - doneMs) / 1000);
  }
  return { envelope, language: heardLanguage, words, transcriptionMs: Math.round(transcriptionMs), pieces: pieces.length };
}

async function run(spec: JobSpec<AnalyzeInput>, ctx: JobContext<StepOf<'analyze'>>): Promise<AnalyzeResult> {
  const { settings, sources } = spec.input;
  const transcriber = new Transcriber({
    baseUrl: ctx.env.WHISPER_BASE_URL ?? 'http://127.0.0.1:8100/v1',
    model: ctx.env.WHISPER_MODEL ?? 'whisper-1',
    timeoutMs: (spec.timeoutSeconds ?? 3600) * 1000,
  });
  const audible = sources.map((source, index) => ({ source, index })).filter(({ source }) => source.audio_key !== null);
  const heard: HeardSource[] = [];
  const edits: PlannedEdit[] = [];
  const heardAudio = new Map<string, HeardAudio>();
  const weakEvidence: AnalyzeResult['weak_evidence'] = [];

  for (const [position, { source, index }] of audible.entries()) {
    // each audible source has an equal share of every step
    const share = (step: StepOf<'analyze'>) => (fraction: number) => ctx.progress.report(step, (position + Math.min(1, Math.max(0, fraction))) / audible.length);
    // a split clip's stretches share one audio file: it is fetched, measured and transcribed once
    let audio = heardAudio.get(source.audio_key!);
    if (!audio) {
      const wav = join(ctx.workDir, `source-${index}.wav`);
      await ctx.storage.download(source.audio_key!, wav, { signal: ctx.signal, onProgress: share('preparing') });
      share('detecting_speech')(0);
      // only the charged span is sent; its words are put back in the file's time
      const span = chargedSpanOf(sources, source.audio_key!);
      const charged = await wavSpan(wav, span, ctx.signal);
      share('transcribing')(0);
      const heardFile = await transcribeAudio({ wav, span, transcriber, language: settings.language, notes: settings.director_notes, signal: ctx.signal, onProgress: share('transcribing') });
      // the recognizer's own time, apart from the program's: what the job adds to it is the rest of the run
      ctx.log.info('transcription received', { source_index: index, audio_ms: span.endMs - span.startMs, transcription_ms: heardFile.transcriptionMs, pieces: heardFile.pieces });
      const { envelope, language, words } = heardFile;
      // no words is a failure (normalizeWords says so): there would be nothing to bound a cut by
      audio = { envelope, language, words: normalizeWords(words) };
      heardAudio.set(source.audio_key!, audio);
    }
    const stretch = stretchOf(audio, source.source_start_ms, source.duration_ms);
    const { words } = stretch;
    // speech found relative to this stretch's own floor and speech level
    const stretchHeard = hearStretch(stretch.envelope, source.duration_ms);
    const { detection, silences } = stretchHeard;
    share('transcribing')(1);
    ctx.log.info('source transcribed', {
      source_index: index,
      words: words.length,
      silences: silences.length,
      language: audio.language,
      floor_db: Math.round(detection.floor_db),
      speech_db: Math.round(detection.speech_db),
      weak_evidence: detection.weak,
    });
    if (detection.weak !== null && settings.analysis_mode === 'ai_edit') weakEvidence.push({ source_index: index, reason: detection.weak });

    share('finding_cuts')(0);
    if (settings.analysis_mode === 'ai_edit') edits.push(...planHeardStretch(index, source.duration_ms, stretchHeard, words, settings).edits);
    heard.push({ source, index, language: audio.language, words });
  }

  ctx.progress.report('saving', 0);
  const transcript = timelineTranscript(heard);
  const timelineEdits = edits.map((edit) => toTimeline(edit, sources[edit.source_index]!)).sort((a, b) => a.start_ms - b.start_ms);
  const transcriptKey = ctx.outputKey(ANALYZE_FILES.transcript);
  const editsKey = ctx.outputKey(ANALYZE_FILES.edits);
  await Promise.all([ctx.storage.putJson(transcriptKey, transcript, ctx.signal), ctx.storage.putJson(editsKey, timelineEdits, ctx.signal)]);
  return {
    transcript_key: transcriptKey,
    edits_key: editsKey,
    language: transcript.language,
    audio_ms: audible.reduce((sum, { source }) => sum + source.duration_ms, 0),
    counts: countEdits(edits),
    word_count: transcript.words.length,
    weak_evidence: weakEvidence,
  };
}

/** Source time → timeline time: the spine's SINGLE canvases play their sources one after another. */
function toTimeline(edit: PlannedEdit, source: AnalyzeSource): AiEdit {
  return {
    type: edit.type,
    start_ms: source.timeline_offset_ms + edit.start_ms,
    end_ms: source.timeline_offset_ms + edit.end_ms,
    active: edit.active,
    reason: edit.reason,
    confidence: edit.confidence,
  };
}

function timelineTranscript(heard: readonly HeardSource[]): Transcript {
  const words: TranscriptWord[] = heard.flatMap(({ source, index, words: spoken }) =>
    spoken.map((word) => ({
      word: word.text,
      start_ms: source.timeline_offset_ms + word.start_ms,
      end_ms: source.timeline_offset_ms + word.end_ms,
      confidence: word.probability,
      source_index: index,
    })),
  );
  return {
    language: heard.find((source) => source.language)?.language ?? null,
    text: words.map((word) => word.word).join(' '),
    words,
  };
}

/** `program: "analyze"`: per spine source, speech and pauses, the transcript, and the cuts an editor would make. */
export const analyzeProgram: JobProgram<'analyze'> = {
  name: 'analyze',
  run,
};
