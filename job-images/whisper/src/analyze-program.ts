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
} from '../../../crds/analyze-contract.ts';
import type { JobContext, JobProgram } from '../../lib/job-program.ts';
import type { JobSpec } from '../../lib/job-spec.ts';
import { progressSlice } from '../../lib/progress.ts';
import { EnergyEnvelopeBuilder, readWavLayout, type EnergyEnvelope } from './analysis/energy.ts';
import { countEdits, planSourceEdits, type PlannedEdit } from './analysis/plan.ts';
import { silencesFromEnvelope } from './analysis/silences.ts';
import { normalizeWords, type SpokenWord } from './analysis/words.ts';
import { Transcriber } from './transcriber.ts';

/** Output file names under the job's prefix; fixed so that a retry overwrites. */
export const ANALYZE_FILES = { transcript: 'transcript.json', edits: 'edits.json' } as const;

/** Slices of the job's percentage, by step (analysis_progress `step`). */
const PROGRESS = {
  preparing: [0, 10],
  detecting_speech: [10, 20],
  transcribing: [20, 85],
  finding_cuts: [85, 95],
  saving: [95, 100],
} as const;

/** 4 KiB holds the header of every WAV that ffmpeg and sox write. */
const WAV_HEADER_BYTES = 4096;

/** What one source sounded like: its words and the AI edits in its own time. */
interface HeardSource {
  source: AnalyzeSource;
  index: number;
  language: string | null;
  words: SpokenWord[];
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

async function run(spec: JobSpec<AnalyzeInput>, ctx: JobContext): Promise<AnalyzeResult> {
  const { settings, sources } = spec.input;
  const transcriber = new Transcriber({
    baseUrl: ctx.env.WHISPER_BASE_URL ?? 'http://127.0.0.1:8100/v1',
    model: ctx.env.WHISPER_MODEL ?? 'whisper-1',
    timeoutMs: (spec.timeoutSeconds ?? 3600) * 1000,
  });
  const audible = sources.map((source, index) => ({ source, index })).filter(({ source }) => source.audio_key !== null);
  const heard: HeardSource[] = [];
  const edits: PlannedEdit[] = [];

  for (const [position, { source, index }] of audible.entries()) {
    const share = (step: keyof typeof PROGRESS) => {
      const [from, to] = PROGRESS[step];
      const width = (to - from) / audible.length;
      return progressSlice(ctx.progress, step, from + width * position, from + width * (position + 1));
    };
    const wav = join(ctx.workDir, `source-${index}.wav`);
    await ctx.storage.download(source.audio_key!, wav, { signal: ctx.signal, onProgress: share('preparing') });

    share('detecting_speech')(0);
    const envelope = await envelopeOf(wav, ctx.signal);
    const silences = silencesFromEnvelope(envelope, {}, source.duration_ms);

    share('transcribing')(0);
    const transcription = await transcriber.transcribe(wav, settings.language, ctx.signal);
    // no words is a failure (normalizeWords says so): there would be nothing to bound a cut by
    const words = normalizeWords(transcription.words);
    share('transcribing')(1);
    ctx.log.info('source transcribed', { source_index: index, words: words.length, silences: silences.length, language: transcription.language });

    share('finding_cuts')(0);
    if (settings.analysis_mode === 'ai_edit') {
      const plan = planSourceEdits({ source_index: index, duration_ms: source.duration_ms, words, silences, envelope }, settings);
      edits.push(...plan.edits);
    }
    heard.push({ source, index, language: transcription.language, words });
  }

  ctx.progress.report('saving', PROGRESS.saving[0]);
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
export const analyzeProgram: JobProgram<AnalyzeInput, AnalyzeResult> = {
  name: 'analyze',
  inputSchema: analyzeInputSchema,
  run,
};
