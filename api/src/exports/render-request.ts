import type { EntityManager } from '@mikro-orm/postgresql';
import type { TranscriptWord } from '../../../crds/contract/programs/analyze.ts';
import type { CaptionStyle, RenderAsset, RenderCaption, RenderRequestInput, RenderSource } from '../../../crds/contract/programs/render.ts';
import { DEFAULT_MAX_WORDS, planCaptionLines } from '../captions/lines.ts';
import { CaptionLine } from '../captions/entities.ts';
import { correctionsOf, withCorrections } from '../captions/corrections.ts';
import type { OutputTimeline } from '../editing/output-timeline.ts';
import { resolveEdit, type PlacedAsset } from '../editing/resolve-edit.ts';
import type { ProjectRow } from '../projects/entities.ts';
import { Conflict } from '../shared/errors.ts';
import { censoredWordTest } from './censored-words.ts';
import type { StoredExportSettings } from './entities.ts';

/** Vertical video reads better with shorter caption lines (captions feature: 3–5 for 9:16). */
const VERTICAL_MAX_WORDS = 4;

/**
 * The render job's input: the project as it is now (timeline, active run's edits with the
 * export's overrides and its keyframe setting, caption lines, transcript) as the editing core resolves it: the
 * segments and the overlays in the core's frames, captions and words in its output time. Reads only;
 * the caller writes the export and the job in its transaction.
 */
export async function renderRequest(em: EntityManager, project: ProjectRow, settings: StoredExportSettings, watermark: boolean): Promise<RenderRequestInput> {
  const { overlays, output, files, transcript, run, cuts, keptWords } = await resolveEdit(em, project, settings.edit_overrides, { snapCutsToKeyframes: settings.snap_cuts_to_keyframes });
  const sources: Record<string, RenderSource> = Object.fromEntries(
    files.map((file) => [file.id, { key: file.storageKey, kind: (file.kind ?? 'video') as RenderSource['kind'], durationMs: file.durationMs ?? null, hasAudio: file.hasAudio }]),
  );

  const captions = settings.captions.enabled ? await captionsOf(em, run?.id ?? null, keptWords, cuts, captionMaxWords(settings), output) : [];
  const censor = censoredWordTest(transcript.success ? transcript.data.language : null);
  const censored = settings.audio_censorship === 'none' ? [] : keptWords.filter((word) => censor(word.word)).flatMap((word) => output.spanToOutput(word.start_ms, word.end_ms) ?? []);

  return {
    sources,
    ...placedOnOutput(output, overlays),
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
    watermark,
  };
}

/** What the render plays where, as the editing core placed it: its rate, the segments' frame edges, the overlays' frames. */
export function placedOnOutput(output: OutputTimeline, overlays: readonly PlacedAsset[]): Pick<RenderRequestInput, 'frameRate' | 'segments' | 'assets'> {
  return {
    frameRate: output.rate,
    segments: output.segments.map((segment) => ({ sourceId: segment.mediaFileId, sourceStartMs: segment.sourceStartMs, sourceEndMs: segment.sourceEndMs, outStartMs: segment.outStartMs, inserted: segment.inserted })),
    assets: overlays.map((overlay) => assetOf(overlay.edit, overlay.mediaFileId, overlay.frames)),
  };
}

/** The line length burned-in captions are planned with when the run has no stored lines. */
export function captionMaxWords(settings: Pick<StoredExportSettings, 'aspect_ratio'>): number {
  return settings.aspect_ratio === '9:16' ? VERTICAL_MAX_WORDS : DEFAULT_MAX_WORDS;
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

function assetOf(edit: PlacedAsset['edit'], sourceId: string, span: { outStartMs: number; outEndMs: number }): RenderAsset {
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
