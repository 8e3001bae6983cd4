import type { EntityManager } from '@mikro-orm/postgresql';
import { transcriptSchema, type TranscriptWord } from '../../../crds/contract/programs/analyze.ts';
import type { CaptionStyle, RenderAsset, RenderCaption, RenderRequestInput, RenderSource } from '../../../crds/contract/programs/render.ts';
import { AnalysisRun, type AnalysisRunRow } from '../analysis/entities.ts';
import { DEFAULT_MAX_WORDS, planCaptionLines } from '../captions/lines.ts';
import { CaptionLine } from '../captions/entities.ts';
import { correctionsOf, withCorrections } from '../captions/corrections.ts';
import { Edit, type EditRow } from '../edits/entities.ts';
import { MediaFile, MediaItem, type MediaFileRow } from '../media/entities.ts';
import type { ProjectRow } from '../projects/entities.ts';
import { Conflict, InvalidInput } from '../shared/errors.ts';
import { assertNoFailedSource, projectTimeline } from '../timeline/project-timeline.ts';
import { cutRanges, hasMedia, withOverrides, type EditOverrides, type KnownTimeline, type TimeRange } from '../timeline/timeline.ts';
import { censoredWordTest } from './censored-words.ts';
import type { StoredExportSettings } from './entities.ts';
import { outputTimeline, type InsertSpan, type OutputTimeline } from './output-timeline.ts';

/** Vertical video reads better with shorter caption lines (captions feature: 3–5 for 9:16). */
const VERTICAL_MAX_WORDS = 4;

/**
 * The render job's input: the project as it is now (timeline, active run's edits with the
 * export's overrides, caption lines, transcript) resolved into output time. Reads only;
 * the caller writes the export and the job in its transaction.
 */
export async function renderRequest(em: EntityManager, project: ProjectRow, settings: StoredExportSettings, watermark: boolean): Promise<RenderRequestInput> {
  const { assetEdits, assetFiles, output, files, transcript, run, cuts, keptWords } = await resolveEdit(em, project, settings.edit_overrides);
  const sources: Record<string, RenderSource> = Object.fromEntries(
    files.map((file) => [file.id, { key: file.storageKey, kind: (file.kind ?? 'video') as RenderSource['kind'], durationMs: file.durationMs ?? null, hasAudio: file.hasAudio }]),
  );

  const captions = settings.captions.enabled ? await captionsOf(em, run?.id ?? null, keptWords, cuts, captionMaxWords(settings), output) : [];
  const censor = censoredWordTest(transcript.success ? transcript.data.language : null);
  const censored = settings.audio_censorship === 'none' ? [] : keptWords.filter((word) => censor(word.word)).flatMap((word) => output.spanToOutput(word.start_ms, word.end_ms) ?? []);

  const assets = assetEdits.flatMap((edit): RenderAsset[] => {
    const file = assetFiles.get(edit.mediaItemId!);
    const span = edit.visualMode === 'insert' ? null : output.spanToOutput(edit.startMs, edit.endMs);
    if (!file || !span) return [];
    return [assetOf(edit, file.id, span)];
  });

  return {
    sources,
    segments: output.segments.map((segment) => ({ sourceId: segment.mediaFileId, sourceStartMs: segment.sourceStartMs, sourceEndMs: segment.sourceEndMs, outStartMs: segment.outStartMs, inserted: segment.inserted })),
    settings: {
      resolution: settings.resolution,
      aspectRatio: settings.aspect_ratio,
      letterboxColor: settings.letterbox_background,
      flipH: settings.video_flip_h,
      flipV: settings.video_flip_v,
      crop: settings.crop ? { zoom: settings.crop.zoom, panX: settings.crop.pan_x, panY: settings.crop.pan_y } : null,
      audio: {
        normalize: settings.audio.normalize,
        targetLufs: settings.audio.target_lufs,
        noiseReduction: settings.audio.noise_reduction,
        noiseFloorDb: settings.audio.noise_floor,
        mainVolumePercent: settings.audio.main_volume_percent,
      },
      censorship: settings.audio_censorship,
      captions: settings.captions.enabled ? { style: settings.captions.style as CaptionStyle, fontSize: settings.captions.font_size } : null,
    },
    captions,
    censored: censored.map((span) => ({ outStartMs: span.outStartMs, outEndMs: span.outEndMs })),
    assets,
    watermark,
  };
}

/** What a render and a timeline export both start from: the edit as it would play now (api/src/interchange reads it too). */
export interface ResolvedEdit {
  timeline: KnownTimeline;
  /** The project's edits (active run's and manual ones) with the overrides applied, by start. */
  edits: EditRow[];
  assetEdits: EditRow[];
  assetFiles: Map<string, AssetFile>;
  output: OutputTimeline;
  /** Every media file the output plays (sources, inserts, assets). */
  files: MediaFileRow[];
  run: AnalysisRunRow | null;
  transcript: ReturnType<typeof transcriptSchema.safeParse>;
  cuts: TimeRange[];
  /** The transcript's words outside the active cuts (timeline time). */
  keptWords: TranscriptWord[];
}

/**
 * The project's edit resolved (timeline, edits after the overrides, inserts spliced in):
 * 400 without media, 409 while a source is processing or when the cuts leave nothing. Reads only.
 */
export async function resolveEdit(em: EntityManager, project: ProjectRow, overrides: EditOverrides): Promise<ResolvedEdit> {
  const timeline = await projectTimeline(em, project.id);
  if (!hasMedia(timeline)) throw InvalidInput('timeline.no_media');
  assertNoFailedSource(timeline);
  // Before every source is measured there is no timeline to cut: the client retries once media_ready arrived.
  if (!timeline.known) throw Conflict('exports.media_processing');
  const runFilter = project.activeRunId ? { $or: [{ runId: project.activeRunId }, { runId: null }] } : { runId: null };
  const edits = withOverrides(await em.find(Edit, { project: project.id, ...runFilter }, { orderBy: { startMs: 'asc', id: 'asc' } }), overrides);
  const assetEdits = edits.filter((edit) => edit.active && edit.type === 'asset' && edit.mediaItemId);
  const assetFiles = await filesOfItems(em, assetEdits.map((edit) => edit.mediaItemId!));
  const inserts: InsertSpan[] = assetEdits.flatMap((edit) => {
    const file = assetFiles.get(edit.mediaItemId!);
    if (edit.visualMode !== 'insert' || !file) return [];
    const offset = edit.assetOffsetMs ?? 0;
    const wanted = edit.endMs - edit.startMs;
    // A video or audio asset plays at most to its end; a still holds for the whole insert.
    const durationMs = file.kind === 'image' || file.durationMs === null || file.durationMs === undefined ? wanted : Math.min(wanted, Math.max(0, file.durationMs - offset));
    return [{ mediaFileId: file.id, atMs: edit.startMs, durationMs, assetOffsetMs: file.kind === 'image' ? 0 : offset }];
  });
  const output = outputTimeline(timeline, edits, {}, inserts);
  if (output.segments.length === 0) throw Conflict('exports.nothing_kept');

  const fileIds = new Set([...output.segments.map((segment) => segment.mediaFileId), ...[...assetFiles.values()].map((file) => file.id)]);
  // in the order the output first plays them, then the assets: a timeline's source list (EDL reels, FCPXML assets) stays the same between reads
  const order = [...fileIds];
  const files = (await em.find(MediaFile, { id: order })).sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
  const failedAsset = files.find((file) => file.status === 'FAILED');
  // an asset edit's media that failed never plays either: name it, as a failed source is named
  if (failedAsset) throw Conflict('timeline.source_failed', { code: 'SourceFailed', params: { name: failedAsset.originalFilename } });
  if (files.some((file) => file.status !== 'UPLOADED')) throw Conflict('exports.media_processing');

  const run = project.activeRunId ? await em.findOne(AnalysisRun, { id: project.activeRunId, status: 'completed' }) : null;
  const transcript = transcriptSchema.safeParse(run?.transcript);
  const words = transcript.success ? transcript.data.words : [];
  const cuts = cutRanges(edits, timeline.durationMs);
  const inCut = (word: TranscriptWord) => cuts.some((cut) => cut.startMs <= (word.start_ms + word.end_ms) / 2 && (word.start_ms + word.end_ms) / 2 < cut.endMs);
  const keptWords = words.filter((word) => !inCut(word));
  return { timeline, edits, assetEdits, assetFiles, output, files, run, transcript, cuts, keptWords };
}

interface AssetFile {
  id: string;
  kind: string | null | undefined;
  durationMs: number | null | undefined;
}

/** The line length burned-in captions are planned with when the run has no stored lines. */
export function captionMaxWords(settings: Pick<StoredExportSettings, 'aspect_ratio'>): number {
  return settings.aspect_ratio === '9:16' ? VERTICAL_MAX_WORDS : DEFAULT_MAX_WORDS;
}

/** Media file of each asset item (an item the user deleted since is skipped). */
async function filesOfItems(em: EntityManager, itemIds: string[]) {
  if (itemIds.length === 0) return new Map<string, AssetFile>();
  const items = await em.find(MediaItem, { id: itemIds }, { populate: ['file'] });
  return new Map(items.map((item): [string, AssetFile] => [item.id, { id: item.file.id, kind: item.file.kind, durationMs: item.file.durationMs }]));
}

/**
 * The run's caption lines (generated with the captions feature's rules when none were),
 * each with its words' times while its text is still the transcript's: an edited line has
 * no word timing to highlight, so it shows whole.
 */
export async function captionsOf(
  em: EntityManager,
  runId: string | null,
  keptWords: readonly TranscriptWord[],
  cuts: readonly { startMs: number; endMs: number }[],
  maxWords: number,
  output: OutputTimeline,
): Promise<RenderCaption[]> {
  if (!runId) throw Conflict('exports.captions_need_analysis');
  const stored = await em.find(CaptionLine, { run: runId }, { orderBy: { sequence: 'asc' } });
  const lines =
    stored.length > 0
      ? stored.map((line) => ({ text: line.text, original: line.originalText, start_ms: line.startMs, end_ms: line.endMs }))
      : // planned now: text the user corrected on another run follows, as when lines are generated
        withCorrections(planCaptionLines(keptWords, cuts.map((cut) => ({ start_ms: cut.startMs, end_ms: cut.endMs })), maxWords), await correctionsOf(em, runId));
  return lines.flatMap((line): RenderCaption[] => {
    const span = output.spanToOutput(line.start_ms, line.end_ms);
    const text = line.text.trim();
    if (!span || text === '') return [];
    const lineWords = line.text === line.original ? keptWords.filter((word) => word.start_ms >= line.start_ms && word.end_ms <= line.end_ms && word.word.trim() !== '') : [];
    const timed = lineWords.flatMap((word) => {
      const at = output.spanToOutput(word.start_ms, word.end_ms);
      return at ? [{ ...at, text: word.word.trim() }] : [];
    });
    return [{ outStartMs: span.outStartMs, outEndMs: span.outEndMs, text, words: timed }];
  });
}

function assetOf(edit: EditRow, sourceId: string, span: { outStartMs: number; outEndMs: number }): RenderAsset {
  const audioMode = (edit.audioMode ?? 'mix') as RenderAsset['audioMode'];
  return {
    sourceId,
    outStartMs: span.outStartMs,
    outEndMs: span.outEndMs,
    assetOffsetMs: edit.assetOffsetMs ?? 0,
    visualMode: (edit.visualMode ?? 'overlay') as RenderAsset['visualMode'],
    audioMode,
    position: (edit.overlayPosition ?? 'top_right') as RenderAsset['position'],
    sizePercent: edit.overlaySizePercent ?? 30,
    opacityPercent: edit.overlayOpacityPercent ?? 100,
    x: edit.overlayX ?? 0.5,
    y: edit.overlayY ?? 0.5,
    flipH: edit.overlayFlipH ?? false,
    flipV: edit.overlayFlipV ?? false,
    rotationDeg: edit.overlayRotationDeg ?? 0,
    volumePercent: edit.audioVolumePercent ?? 100,
    duckMain: (edit.audioDuckMain ?? false) || audioMode === 'duck',
  };
}
