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
import { EnergyEnvelopeBuilder, readWavLayout, type EnergyEnvelope, type WavLayout } from './analysis/energy.ts';
import { countEdits, type PlannedEdit } from './analysis/plan.ts';
import { hearStretch, planHeardStretch } from './analysis/stretch.ts';
import { DEFAULT_PIECES, piecesAlong, quietestIn, type Piece, type PieceOptions } from './analysis/pieces.ts';
import { normalizeWords, type RecognizedWord, type SpokenWord } from './analysis/words.ts';
import { Transcriber } from './transcriber.ts';

/** Output file names under the job's prefix; fixed so that a retry overwrites. */
const ANALYZE_FILES = { transcript: 'transcript.json', edits: 'edits.json' } as const;

/** 4 KiB holds the header of every WAV that ffmpeg and sox write. */
const WAV_HEADER_BYTES = 4096;
/** The frames a piece's quietest moment is looked for in. */
const QUIET_FRAME_MS = 20;

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
  if (audio.envelope.high_rms) envelope.high_rms = audio.envelope.high_rms.slice(first, last);
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

/** Where a 16-bit PCM WAV's samples are, read from its header. */
async function wavLayoutOf(path: string): Promise<WavLayout> {
  const file = await open(path);
  try {
    const { size } = await file.stat();
    const head = new Uint8Array(Math.min(WAV_HEADER_BYTES, size));
    await file.read(head, 0, head.length, 0);
    return readWavLayout(head, size);
  } finally {
    await file.close();
  }
}

/** The offset into the data of the sample frame at `ms`, within the data. */
function dataBytesAt(layout: WavLayout, ms: number): number {
  return Math.min(layout.data_bytes, Math.max(0, Math.floor((ms * layout.sample_rate_hz) / 1000)) * 2 * layout.channels);
}

/**
 * The part of a 16-bit PCM WAV within [startMs, endMs), as a WAV of its own beside it (the
 * original path when the span covers the whole file): only what is charged is transcribed,
 * whatever runs past the duration the file was measured at.
 */
async function wavSpan(path: string, span: Piece, signal: AbortSignal): Promise<string> {
  const layout = await wavLayoutOf(path);
  const [from, to] = [dataBytesAt(layout, span.startMs), dataBytesAt(layout, span.endMs)];
  const frameBytes = 2 * layout.channels;
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
}

/** The energy envelope of a 16-bit PCM WAV file, streamed (an hour of audio never sits in memory). */
async function envelopeOf(path: string, signal: AbortSignal): Promise<EnergyEnvelope> {
  const layout = await wavLayoutOf(path);
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
  pieces: PieceOptions;
}

/** WHISPER_PIECE_SECONDS: a long recording's piece (default 120 s; at least 10 s). */
function pieceOptions(env: NodeJS.ProcessEnv): PieceOptions {
  const seconds = Number(env.WHISPER_PIECE_SECONDS);
  if (!env.WHISPER_PIECE_SECONDS || !Number.isFinite(seconds)) return DEFAULT_PIECES;
  const pieceMs = Math.max(10, seconds) * 1000;
  return { ...DEFAULT_PIECES, pieceMs, searchMs: Math.min(DEFAULT_PIECES.searchMs, pieceMs / 6) };
}

/** The envelope of the stretch [fromMs, toMs) of a 16-bit PCM WAV, read from the file: a piece's end is found without the whole envelope. */
async function stretchEnvelope(path: string, fromMs: number, toMs: number, signal: AbortSignal): Promise<EnergyEnvelope> {
  const layout = await wavLayoutOf(path);
  // 20 ms frames: loudness alone (the cepstra are made at 10 ms only)
  const builder = new EnergyEnvelopeBuilder(layout.sample_rate_hz, layout.channels, QUIET_FRAME_MS);
  const [from, to] = [dataBytesAt(layout, fromMs), dataBytesAt(layout, toMs)];
  if (to > from) for await (const chunk of createReadStream(path, { start: layout.data_offset + from, end: layout.data_offset + to - 1, signal })) builder.push(chunk as Buffer);
  return builder.finish();
}

/**
 * An audio file's envelope and words (file time), with the recognizer's own time. The span is
 * sent in pieces (pieces.ts), one request each, in order, the progress reported after each;
 * the envelope is measured meanwhile (the requests' wait is most of the job), and one that
 * cannot be measured ends them. The language the first piece was heard in holds for the rest
 * (a music bed or a mumble does not switch it).
 */
async function transcribeAudio(request: TranscribeAudio): Promise<{ envelope: EnergyEnvelope; language: string | null; words: RecognizedWord[] | null; transcriptionMs: number; pieces: number }> {
  const { wav, span, transcriber, notes } = request;
  const abort = new AbortController();
  const signal = AbortSignal.any([request.signal, abort.signal]);
  const quietest = async (fromMs: number, toMs: number) => quietestIn(await stretchEnvelope(wav, fromMs, toMs, signal), fromMs, fromMs, toMs, request.pieces.quietWindowMs);
  const transcribe = async () => {
    let words: RecognizedWord[] | null = null;
    let language = request.language;
    let heardLanguage: string | null = null;
    let transcriptionMs = 0;
    let pieces = 0;
    const totalMs = span.endMs - span.startMs;
    for await (const piece of piecesAlong(span, request.pieces, quietest)) {
      const file = await wavSpan(wav, piece, signal);
      const requested = performance.now();
      const transcription = await transcriber.transcribe(file, language, signal, notes);
      transcriptionMs += performance.now() - requested;
      pieces += 1;
      heardLanguage ??= transcription.language;
      language ??= transcription.language;
      const shift = file === wav ? 0 : piece.startMs / 1000;
      if (transcription.words) (words ??= []).push(...transcription.words.map((word) => ({ ...word, start: word.start + shift, end: word.end + shift })));
      const doneMs = piece.endMs - span.startMs;
      request.onProgress(doneMs / totalMs, ((transcriptionMs / doneMs) * (totalMs - doneMs)) / 1000);
    }
    return { language: heardLanguage, words, transcriptionMs: Math.round(transcriptionMs), pieces };
  };
  const [envelope, heard] = await Promise.all([
    envelopeOf(wav, request.signal).catch((error: unknown) => {
      abort.abort(error);
      throw error;
    }),
    transcribe(),
  ]);
  return { envelope, ...heard };
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
    // (the time left is known for the one source being transcribed: said only when it is the last)
    const share = (step: StepOf<'analyze'>) => (fraction: number, etaSeconds?: number) =>
      ctx.progress.report(step, (position + Math.min(1, Math.max(0, fraction))) / audible.length, position === audible.length - 1 ? etaSeconds : undefined);
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
      const heardFile = await transcribeAudio({ wav, span, transcriber, language: settings.language, notes: settings.director_notes, signal: ctx.signal, onProgress: share('transcribing'), pieces: pieceOptions(ctx.env) });
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
    ...(edit.pause ? { pause: { ...edit.pause, start_ms: source.timeline_offset_ms + edit.pause.start_ms, end_ms: source.timeline_offset_ms + edit.pause.end_ms, breath: edit.pause.breath && { start_ms: source.timeline_offset_ms + edit.pause.breath.start_ms, end_ms: source.timeline_offset_ms + edit.pause.breath.end_ms } } } : {}),
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
