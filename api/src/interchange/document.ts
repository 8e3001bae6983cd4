/**
 * The edit as an editor's timeline sees it: the editing core's output timeline, frame for
 * frame as the render plays it (the core quantized it; nothing here rounds a segment again), the rate kept rational;
 * the inserted assets on an upper track over a gap of the main one, the overlays on the
 * track above those, and every cut edit as a marker (applied ones where the cut was,
 * offered ones over the time they would remove). Pure: the writers read it.
 */
import { frameAt, frameEdgeMs, sameRate, type Rational } from '../../../crds/contract/editing/frame-grid.ts';
import type { OutputFrames, OutputTimeline } from '../editing/output-timeline.ts';

export type { Rational };

export interface DocSource {
  id: string;
  /** The file id its owner knows it by (their own upload's, where the content folded onto a file stored before). */
  shownId: string;
  /** The file name the editor looks for (unique within the document). */
  name: string;
  /** What the format points at: the name, a path under the chosen root, or a presigned URL. */
  reference: string;
  kind: 'video' | 'audio' | 'image';
  hasAudio: boolean;
  width: number | null;
  height: number | null;
  rate: Rational;
  /** Whole frames at `rate` (0 for a still). */
  durationFrames: number;
}

export type ClipTrack = 'main' | 'insert' | 'overlay';

/** One clip: source frames [sourceIn, sourceIn + duration) play at record frame recordIn. */
export interface DocClip {
  sourceId: string;
  sourceIn: number;
  recordIn: number;
  duration: number;
  /**
   * main: the source recordings' cut (V1/A1). insert: an inserted asset, played where the
   * main track has a gap of its length (the first upper track). overlay: an asset over the
   * main track (the upper track after the inserts').
   */
  track: ClipTrack;
  hasVideo: boolean;
  hasAudio: boolean;
  note?: string;
}

export interface DocMarker {
  /** Record frame. */
  at: number;
  /** Frames (1 for an applied cut: it marks the join). */
  duration: number;
  type: string;
  reason: string;
  /** applied: the cut was made here; offered: not applied, its span still plays. */
  state: 'applied' | 'offered';
  editId: string;
}

export interface DocChapter {
  at: number;
  title: string;
}

export interface InterchangeDocument {
  name: string;
  rate: Rational;
  width: number;
  height: number;
  /** Record frames of the whole sequence. */
  duration: number;
  sources: DocSource[];
  clips: DocClip[];
  markers: DocMarker[];
  chapters: DocChapter[];
  /** What the document itself leaves out, whatever the format (format writers add their own). */
  unexpressed: string[];
}

/** Frames at `rate` → ms (exact rational, rounded to the ms only for display). */
export const msOf = frameEdgeMs;

export interface SourceFacts {
  id: string;
  /** The file id and name the project's owner uploaded it as (content addressing may have folded it onto another's file). */
  shownId: string;
  filename: string;
  kind: string | null | undefined;
  hasAudio: boolean;
  width: number | null | undefined;
  height: number | null | undefined;
  durationMs: number | null | undefined;
  rate: Rational | null;
}

export interface EditFacts {
  id: string;
  type: string;
  reason: string;
  active: boolean;
  startMs: number;
  endMs: number;
}

export interface OverlayFacts {
  mediaFileId: string;
  /** Its output frames, as the editing core placed them (the render shows it on exactly these). */
  frames: OutputFrames;
  assetOffsetMs: number;
  visualMode: string;
  /** mute: the asset's sound is off, so it has no audio clip. */
  audioMode: string;
}

/** Edit types a marker is made for: the cuts, the AI's and the user's. */
export const MARKED_EDIT_TYPES = ['silence', 'false_start', 'filler', 'manual'];

export function buildDocument(input: {
  name: string;
  output: OutputTimeline;
  files: readonly SourceFacts[];
  edits: readonly EditFacts[];
  overlays: readonly OverlayFacts[];
  chapters: readonly { outMs: number; title: string }[];
  reference: (source: { id: string; name: string }) => string;
}): InterchangeDocument {
  const unexpressed: string[] = [];
  const names = uniqueNames(input.files);
  const { rate } = input.output;
  const mainFiles = input.output.segments.map((segment) => input.files.find((file) => file.id === segment.mediaFileId)!);
  const firstVideo = mainFiles.find((file) => file.kind === 'video' && file.rate && sameRate(file.rate, rate));
  if (!firstVideo) unexpressed.push(`No video of the recordings states a frame rate Cutroom renders at: the sequence runs at ${rate.num}/${rate.den}, as the render does.`);
  const sizeOf = firstVideo ?? mainFiles.find((file) => file.width && file.height);
  const sources = input.files.map((file): DocSource => {
    const kind = (file.kind === 'audio' || file.kind === 'image' ? file.kind : 'video') as DocSource['kind'];
    const sourceRate = file.rate ?? rate;
    if (file.rate && !sameRate(file.rate, rate)) {
      unexpressed.push(`${names.get(file.id)} runs at ${file.rate.num}/${file.rate.den}, the sequence at ${rate.num}/${rate.den}: its cut points are placed on the sequence's frame grid.`);
    }
    return {
      id: file.id,
      shownId: file.shownId,
      name: names.get(file.id)!,
      reference: input.reference({ id: file.id, name: names.get(file.id)! }),
      kind,
      hasAudio: file.hasAudio,
      width: file.width ?? null,
      height: file.height ?? null,
      rate: sourceRate,
      durationFrames: kind === 'image' ? 0 : frameAt(file.durationMs ?? 0, sourceRate),
    };
  });
  const sourceOf = (id: string) => sources.find((source) => source.id === id)!;

  // The core's segments as they are: its frames are the render's.
  const clips: DocClip[] = input.output.segments.map((segment): DocClip => {
    const source = sourceOf(segment.mediaFileId);
    const placed = { sourceId: source.id, sourceIn: segment.sourceFirstFrame, recordIn: segment.outFirstFrame, duration: segment.frameCount, hasVideo: source.kind !== 'audio', hasAudio: source.hasAudio };
    return segment.inserted ? { ...placed, track: 'insert', note: 'inserted asset' } : { ...placed, track: 'main' };
  });
  const record = input.output.frameCount;
  const recordOf = (outMs: number) => input.output.frameOfOutputMs(outMs);

  for (const overlay of input.overlays) {
    const source = sourceOf(overlay.mediaFileId);
    clips.push({
      sourceId: source.id,
      sourceIn: source.kind === 'image' ? 0 : frameAt(overlay.assetOffsetMs, rate),
      recordIn: overlay.frames.outFirstFrame,
      duration: overlay.frames.frameCount,
      track: 'overlay',
      hasVideo: source.kind !== 'audio' && overlay.visualMode !== 'none',
      hasAudio: source.hasAudio && overlay.audioMode !== 'mute',
      note: `${overlay.visualMode} asset`,
    });
  }
  if (input.overlays.length > 0) unexpressed.push("Overlay geometry (position, size, opacity, rotation, flips) and asset audio modes (mix, duck, replace) are Cutroom render settings: the overlay clips are placed, their look is not.");

  const markers = input.edits
    .filter((edit) => MARKED_EDIT_TYPES.includes(edit.type))
    .map((edit): DocMarker => {
      const base = { type: edit.type, reason: edit.reason.trim() || edit.type.replace(/_/g, ' '), editId: edit.id };
      if (edit.active) return { ...base, at: recordOf(input.output.toOutput(edit.startMs, 'start')), duration: 1, state: 'applied' };
      const span = input.output.spanToOutput(edit.startMs, edit.endMs);
      if (!span) return { ...base, at: recordOf(input.output.toOutput(edit.startMs, 'start')), duration: 1, state: 'offered' };
      const at = recordOf(span.outStartMs);
      return { ...base, at, duration: Math.max(1, recordOf(span.outEndMs) - at), state: 'offered' };
    })
    .sort((a, b) => a.at - b.at);

  return {
    name: input.name,
    rate,
    width: sizeOf?.width ?? 1920,
    height: sizeOf?.height ?? 1080,
    duration: record,
    sources,
    clips,
    markers,
    chapters: input.chapters.map((chapter) => ({ at: recordOf(chapter.outMs), title: chapter.title })),
    unexpressed,
  };
}

/**
 * The text a marker shows: its type and its reason ("silence: pause 2.3 s"), the type left
 * out where the reason already begins with it ("false start: 'so today'", "filler: um").
 */
export function markerLabel(marker: DocMarker): string {
  const typeWords = marker.type.replace(/_/g, ' ');
  return marker.reason.toLowerCase().startsWith(typeWords) ? marker.reason : `${typeWords}: ${marker.reason}`;
}

export function markerNote(marker: DocMarker): string {
  return marker.state === 'applied'
    ? `Cutroom ${marker.type} cut applied here (edit ${marker.editId}).`
    : `Cutroom ${marker.type} offered, not applied: this span still plays (edit ${marker.editId}); activate the edit to cut it.`;
}

/** File names as the editor finds them: the uploaded name, made unique with the file's id where two share it. */
function uniqueNames(files: readonly SourceFacts[]): Map<string, string> {
  const names = new Map<string, string>();
  const clean = (name: string) => name.replace(/[\\/:*?"<>|\p{Cc}]+/gu, '_').trim() || 'media';
  for (const file of files) {
    let name = clean(file.filename);
    if ([...names.values()].includes(name)) {
      const dot = name.lastIndexOf('.');
      name = dot > 0 ? `${name.slice(0, dot)}-${file.shownId.slice(0, 8)}${name.slice(dot)}` : `${name}-${file.shownId.slice(0, 8)}`;
    }
    names.set(file.id, name);
  }
  return names;
}
