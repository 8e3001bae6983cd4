import type { EntityManager } from '@mikro-orm/postgresql';
import { Draft } from '../drafts/entities.ts';
import { checkEditOverrides } from '../drafts/service.ts';
import { Export } from '../exports/entities.ts';
import { resolveEdit, type ResolvedEdit } from '../editing/resolve-edit.ts';
import { captionMaxWords, captionsOf } from '../exports/render-request.ts';
import { EXPORT_DEFAULTS } from '../exports/schemas.ts';
import { MediaItem } from '../media/entities.ts';
import type { ProjectRow } from '../projects/entities.ts';
import type { ProjectService } from '../projects/service.ts';
import { Conflict, Invalid, NotFound } from '../shared/errors.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import type { EditOverrides } from '../timeline/timeline.ts';
import { buildDocument, type ClipTrack, type InterchangeDocument } from './document.ts';
import { writeTimeline, type TimelineFormat } from './formats.ts';
import { chapterList, planChapters, srt, vtt, wordsDocument, type CaptionFormat, type OutputWord } from './sidecars.ts';

/** How long a presigned source URL in a timeline works (api.md Limits: downloads an hour). */
const SOURCE_URL_TTL_SECONDS = 3600;

/** Which edit: the active edits (nothing), a saved draft, inline overrides, or what an export rendered. */
export interface EditSelection {
  draftId?: string | undefined;
  editOverrides?: EditOverrides | undefined;
  exportId?: string | undefined;
  /** The export setting snap_cuts_to_keyframes: default true, or with exportId what that export did. */
  snapCutsToKeyframes?: boolean | undefined;
}

export interface SourceReferences {
  /** name (default): the file name; path: media_root/name; url: a presigned GET valid SOURCE_URL_TTL_SECONDS. */
  sourceRef: 'name' | 'path' | 'url';
  mediaRoot?: string | undefined;
}

export interface ExchangedFile {
  filename: string;
  mediaType: string;
  content: string;
  unexpressed: string[];
  rate: { num: number; den: number };
  durationFrames: number;
  segments: { source: string; source_in: number; record_in: number; duration: number; track: ClipTrack }[];
  markers: number;
}

/**
 * The edit leaves Cutroom: timelines for editors and the files beside the video, built
 * from the editing core's one resolution of the edit (resolveEdit), which the render reads
 * too. Reads only: no row, no object.
 */
export class Interchange {
  readonly #projects: ProjectService;
  readonly #storage: ObjectStorage;

  constructor(deps: { projects: ProjectService; storage: ObjectStorage }) {
    this.#projects = deps.projects;
    this.#storage = deps.storage;
  }

  async timeline(em: EntityManager, userId: string, projectId: string, selection: EditSelection, format: TimelineFormat, references: SourceReferences): Promise<ExchangedFile> {
    const { project, resolved } = await this.#resolve(em, userId, projectId, selection);
    const doc = await this.#document(em, project, resolved, references);
    const file = writeTimeline(format, doc);
    return {
      filename: `${safeStem(project.name)}.${file.extension}`,
      mediaType: file.mediaType,
      content: file.content,
      unexpressed: file.unexpressed,
      rate: doc.rate,
      durationFrames: doc.duration,
      segments: doc.clips.map((clip) => ({ source: doc.sources.find((source) => source.id === clip.sourceId)!.name, source_in: clip.sourceIn, record_in: clip.recordIn, duration: clip.duration, track: clip.track })),
      markers: doc.markers.length,
    };
  }

  async sidecar(em: EntityManager, userId: string, projectId: string, selection: EditSelection, format: CaptionFormat, maxWords: number | undefined): Promise<{ filename: string; mediaType: string; content: string }> {
    const { project, resolved, exportedMaxWords, exportFilename } = await this.#resolve(em, userId, projectId, selection);
    // Beside an export, the files share its name (players pick up "video.srt" next to "video.mp4").
    const stem = exportFilename ? exportFilename.replace(/\.mp4$/, '') : safeStem(project.name);
    switch (format) {
      case 'srt':
      case 'vtt': {
        const cues = await captionsOf(em, resolved.run?.id ?? null, resolved.keptWords, resolved.cuts, maxWords ?? exportedMaxWords, resolved.output);
        return format === 'srt' ? { filename: `${stem}.srt`, mediaType: 'application/x-subrip', content: srt(cues) } : { filename: `${stem}.vtt`, mediaType: 'text/vtt', content: vtt(cues) };
      }
      case 'words': {
        const words = outputWords(resolved);
        return { filename: `${stem}.words.json`, mediaType: 'application/json', content: wordsDocument(words, resolved.output.durationMs, resolved.transcript.success ? resolved.transcript.data.language : null) };
      }
      case 'chapters':
        return { filename: `${stem}.chapters.txt`, mediaType: 'text/plain', content: chapterList(planChapters(outputWords(resolved), resolved.output.durationMs), resolved.output.durationMs) };
    }
  }

  async #resolve(em: EntityManager, userId: string, projectId: string, selection: EditSelection): Promise<{ project: ProjectRow; resolved: ResolvedEdit; exportedMaxWords: number; exportFilename?: string }> {
    const project = await this.#projects.owned(em, userId, projectId);
    // After ownership: another user's project is 404 whatever else the request says.
    if (selection.draftId && selection.editOverrides) throw Invalid('exports.overrides_with_draft', { code: 'ValidationError' });
    if (selection.draftId && selection.exportId) throw Invalid('interchange.draft_or_export', { code: 'ValidationError' });
    let overrides: EditOverrides = {};
    // as an export made now from this edit would (its default), unless the request says
    let snapCutsToKeyframes = selection.snapCutsToKeyframes ?? EXPORT_DEFAULTS.snap_cuts_to_keyframes;
    let exportFilename: string | undefined;
    let exportedMaxWords = captionMaxWords({ aspect_ratio: '16:9' });
    if (selection.draftId) {
      const draft = await em.findOne(Draft, { id: selection.draftId, project: project.id });
      if (!draft) throw NotFound('exports.draft_not_found');
      overrides = draft.editOverrides;
      exportedMaxWords = captionMaxWords({ aspect_ratio: draft.exportSettings.aspect_ratio ?? '16:9' });
    } else if (selection.exportId) {
      const row = await em.findOne(Export, { id: selection.exportId, project: project.id });
      if (!row) throw NotFound('exports.not_found');
      overrides = row.exportSettings.edit_overrides;
      // an export made before the setting slid nothing
      snapCutsToKeyframes = selection.snapCutsToKeyframes ?? row.exportSettings.snap_cuts_to_keyframes ?? false;
      exportedMaxWords = captionMaxWords(row.exportSettings);
      exportFilename = row.filename;
    } else if (selection.editOverrides) {
      await checkEditOverrides(em, project.id, selection.editOverrides);
      overrides = selection.editOverrides;
    }
    return { project, resolved: await resolveEdit(em, project, overrides, { snapCutsToKeyframes }), exportedMaxWords, ...(exportFilename ? { exportFilename } : {}) };
  }

  async #document(em: EntityManager, project: ProjectRow, resolved: ResolvedEdit, references: SourceReferences): Promise<InterchangeDocument> {
    const { output, files, edits } = resolved;
    const urls = new Map<string, string>();
    if (references.sourceRef === 'url') {
      for (const file of files) urls.set(file.id, await this.#storage.presignGet(file.storageKey, SOURCE_URL_TTL_SECONDS, file.contentType ? { contentType: file.contentType } : {}));
    }
    const root = (references.mediaRoot ?? '').replace(/\/+$/, '');
    const overlays = resolved.overlays.map(({ edit, mediaFileId, frames }) => ({ mediaFileId, frames, assetOffsetMs: edit.assetOffsetMs ?? 0, visualMode: edit.visualMode ?? 'overlay', audioMode: edit.audioMode ?? 'mix' }));
    // Each source as its owner uploaded it: a file its upload folded onto (identical content stored before) keeps the owner's own id and name.
    const items = await em.find(MediaItem, { userId: project.userId, file: files.map((file) => file.id) }, { orderBy: { createdAt: 'asc' } });
    const uploadedAs = new Map<string, { id: string; filename: string }>();
    // an item that is the stored file itself (not folded) names it as stored
    const ownsStored = new Set(items.filter((item) => !item.uploadedFileId).map((item) => item.file.id));
    for (const item of items) {
      const fileId = item.file.id;
      if (!ownsStored.has(fileId) && !uploadedAs.has(fileId) && item.uploadedFileId && item.uploadedFilename) uploadedAs.set(fileId, { id: item.uploadedFileId, filename: item.uploadedFilename });
    }
    const doc = buildDocument({
      name: project.name,
      output,
      files: files.map((file) => ({
        id: file.id,
        shownId: uploadedAs.get(file.id)?.id ?? file.id,
        filename: uploadedAs.get(file.id)?.filename ?? file.originalFilename,
        kind: file.kind,
        hasAudio: file.hasAudio,
        width: file.width,
        height: file.height,
        durationMs: file.durationMs,
        rate: file.frameRateNum && file.frameRateDen ? { num: file.frameRateNum, den: file.frameRateDen } : null,
      })),
      edits,
      overlays,
      chapters: resolved.run ? planChapters(outputWords(resolved), output.durationMs) : [],
      reference: (source) => (references.sourceRef === 'url' ? urls.get(source.id)! : references.sourceRef === 'path' ? `${root}/${source.name}` : source.name),
    });
    if (references.sourceRef === 'url') doc.unexpressed.push(`Source URLs are presigned and work for ${SOURCE_URL_TTL_SECONDS} s: relink to downloaded files after that.`);
    return doc;
  }
}

/** The transcript's kept words in output time, in order. */
function outputWords(resolved: ResolvedEdit): OutputWord[] {
  if (!resolved.run || !resolved.transcript.success) throw Conflict('exports.captions_need_analysis');
  return resolved.keptWords.flatMap((word) => {
    const span = resolved.output.spanToOutput(word.start_ms, word.end_ms);
    return span && word.word.trim() !== '' ? [{ word: word.word.trim(), outStartMs: span.outStartMs, outEndMs: span.outEndMs, timelineStartMs: word.start_ms, timelineEndMs: word.end_ms }] : [];
  });
}

function safeStem(name: string): string {
  return name.replace(/[\\/:*?"<>|\p{Cc}]+/gu, ' ').replace(/\s+/g, ' ').trim().slice(0, 200) || 'cutroom';
}
