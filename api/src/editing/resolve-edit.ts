/**
 * The editing core's one read of a project's edit: the spine and canvases (the timeline),
 * the active run's edits and the manual ones with a draft's or an export's overrides, the
 * inserts and overlays, resolved into one output timeline on the main footage's frame grid
 * (output-timeline.ts), with the transcript's kept words. The render request, the timeline
 * files and the caption, transcript and chapter files are adapters of what this returns.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { outputRateOf, type Rational } from '../../../crds/contract/editing/frame-grid.ts';
import { transcriptSchema, type TranscriptWord } from '../../../crds/contract/programs/analyze.ts';
import { AnalysisRun, type AnalysisRunRow } from '../analysis/entities.ts';
import { Edit, type EditRow } from '../edits/entities.ts';
import { MediaFile, MediaItem, type MediaFileRow } from '../media/entities.ts';
import type { ProjectRow } from '../projects/entities.ts';
import { Conflict, InvalidInput } from '../shared/errors.ts';
import { assertNoFailedSource, projectTimeline } from '../timeline/project-timeline.ts';
import { hasMedia, type KnownTimeline, type TimeRange } from '../timeline/timeline.ts';
import { outputTimeline, type InsertSpan, type OutputFrames, type OutputTimeline } from './output-timeline.ts';
import { editsAsPlayed, pauseCutsOnKeyframes, type PlayedOverrides } from './played-edits.ts';

/** An asset edit that is not inserted (overlay, replace, none), placed on the output's frames. */
export interface PlacedAsset {
  edit: EditRow;
  mediaFileId: string;
  frames: OutputFrames;
}

/** What a render and a timeline export both start from: the edit as it would play now. */
export interface ResolvedEdit {
  timeline: KnownTimeline;
  /** The project's edits (active run's and manual ones) with the overrides applied (a shortened pause at the range it removes: editsAsPlayed), by start. */
  edits: EditRow[];
  /** Active asset edits that lie over the output (overlay, replace, none), on its frames. */
  overlays: PlacedAsset[];
  output: OutputTimeline;
  /** Every media file the output plays (sources, inserts, assets). */
  files: MediaFileRow[];
  run: AnalysisRunRow | null;
  transcript: ReturnType<typeof transcriptSchema.safeParse>;
  /** What the output leaves out of the timeline (output.cuts). */
  cuts: TimeRange[];
  /** The transcript's words outside what the output leaves out (timeline time). */
  keptWords: TranscriptWord[];
}

interface AssetFile {
  id: string;
  kind: string | null | undefined;
  durationMs: number | null | undefined;
}

/** A source file's keyframes, ms of the source, ascending; null or empty where unknown. */
export type KeyframesOf = (mediaFileId: string) => readonly number[] | null | undefined;

/** The keyframes the artifact program listed for each file (media_files.keyframes_ms, loaded). */
export function storedKeyframes(files: readonly Pick<MediaFileRow, 'id' | 'keyframesMs'>[]): KeyframesOf {
  const byId = new Map(files.map((file) => [file.id, file.keyframesMs]));
  return (mediaFileId) => byId.get(mediaFileId);
}

/** The spine's keyframes on the timeline (ms, ascending): each piece's source keyframes within it, placed where the piece plays. */
export function timelineKeyframes(timeline: KnownTimeline, keyframesOf: KeyframesOf): number[] {
  const placed: number[] = [];
  for (const piece of timeline.pieces) {
    if (piece.type !== 'SINGLE') continue;
    for (const sourceMs of keyframesOf(piece.mediaFileId) ?? []) {
      if (sourceMs >= piece.sourceStartMs && sourceMs <= piece.sourceStartMs + piece.durationMs) placed.push(piece.timelineStartMs + sourceMs - piece.sourceStartMs);
    }
  }
  return placed.sort((a, b) => a - b);
}

/** How an edit is resolved: `snapCutsToKeyframes` (an export's `snap_cuts_to_keyframes`) slides shortened pauses' cuts onto the sources' stored keyframes. */
export interface ResolveOptions {
  snapCutsToKeyframes?: boolean | undefined;
}

/**
 * The project's edit resolved: 400 without media, 409 while a source is processing or when
 * the cuts leave nothing. With `snapCutsToKeyframes`, every shortened pause's cut slides onto
 * a keyframe of its source (media_files.keyframes_ms; a file without them slides nothing)
 * where its pause allows (pauseCutsOnKeyframes), before anything reads the output, so the
 * render and the timeline and caption files read one edge. Reads only.
 */
export async function resolveEdit(em: EntityManager, project: ProjectRow, overrides: PlayedOverrides, options: ResolveOptions = {}): Promise<ResolvedEdit> {
  const timeline = await projectTimeline(em, project.id);
  if (!hasMedia(timeline)) throw InvalidInput('timeline.no_media');
  assertNoFailedSource(timeline);
  // Before every source is measured there is no timeline to cut: the client retries once media_ready arrived.
  if (!timeline.known) throw Conflict('exports.media_processing');
  const spineFileIds = [...new Set(timeline.pieces.map((piece) => piece.mediaFileId))];
  const spineFiles = options.snapCutsToKeyframes ? await em.find(MediaFile, { id: spineFileIds }, { populate: ['keyframesMs'] }) : await em.find(MediaFile, { id: spineFileIds });
  const runFilter = project.activeRunId ? { $or: [{ runId: project.activeRunId }, { runId: null }] } : { runId: null };
  const played = editsAsPlayed(await em.find(Edit, { project: project.id, ...runFilter }, { orderBy: { startMs: 'asc', id: 'asc' } }), overrides);
  const edits = options.snapCutsToKeyframes ? pauseCutsOnKeyframes(played, timelineKeyframes(timeline, storedKeyframes(spineFiles)), overrides) : played;
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
  const stills = new Set([...spineFiles.filter((file) => file.kind === 'image').map((file) => file.id), ...[...assetFiles.values()].filter((file) => file.kind === 'image').map((file) => file.id)]);
  const output = outputTimeline(timeline, edits, { inserts, rate: outputRate(timeline, spineFiles), stills });
  if (output.segments.length === 0) throw Conflict('exports.nothing_kept');

  const fileIds = new Set([...output.segments.map((segment) => segment.mediaFileId), ...[...assetFiles.values()].map((file) => file.id)]);
  // in the order the output first plays them, then the assets: a timeline's source list (EDL reels, FCPXML assets) stays the same between reads
  const order = [...fileIds];
  const files = (await em.find(MediaFile, { id: order })).sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
  const failedAsset = files.find((file) => file.status === 'FAILED');
  // an asset edit's media that failed never plays either: name it, as a failed source is named
  if (failedAsset) throw Conflict('timeline.source_failed', { code: 'SourceFailed', params: { name: failedAsset.originalFilename } });
  if (files.some((file) => file.status !== 'UPLOADED')) throw Conflict('exports.media_processing');

  const overlays = assetEdits.flatMap((edit): PlacedAsset[] => {
    const file = assetFiles.get(edit.mediaItemId!);
    const frames = edit.visualMode === 'insert' ? null : output.spanToFrames(edit.startMs, edit.endMs);
    return file && frames ? [{ edit, mediaFileId: file.id, frames }] : [];
  });
  const run = project.activeRunId ? await em.findOne(AnalysisRun, { id: project.activeRunId, status: 'completed' }) : null;
  const transcript = transcriptSchema.safeParse(run?.transcript);
  const words = transcript.success ? transcript.data.words : [];
  const { cuts } = output;
  const inCut = (word: TranscriptWord) => cuts.some((cut) => cut.startMs <= (word.start_ms + word.end_ms) / 2 && (word.start_ms + word.end_ms) / 2 < cut.endMs);
  const keptWords = words.filter((word) => !inCut(word));
  return { timeline, edits, overlays, output, files, run, transcript, cuts, keptWords };
}

/**
 * The output's frame rate: the rate the first spine video states (the recordings set the
 * grid, not an inserted b-roll), made sane by outputRateOf; 30/1 when no spine video states one.
 */
export function outputRate(timeline: KnownTimeline, files: readonly MediaFileRow[]): Rational {
  for (const piece of timeline.pieces) {
    if (piece.type !== 'SINGLE' || piece.durationMs <= 0) continue;
    const file = files.find((candidate) => candidate.id === piece.mediaFileId);
    if (file?.kind === 'video' && file.frameRateNum && file.frameRateDen) return outputRateOf({ num: file.frameRateNum, den: file.frameRateDen });
  }
  return outputRateOf(null);
}

/** Media file of each asset item (an item the user deleted since is skipped). */
async function filesOfItems(em: EntityManager, itemIds: string[]) {
  if (itemIds.length === 0) return new Map<string, AssetFile>();
  const items = await em.find(MediaItem, { id: itemIds }, { populate: ['file'] });
  return new Map(items.map((item): [string, AssetFile] => [item.id, { id: item.file.id, kind: item.file.kind, durationMs: item.file.durationMs }]));
}
