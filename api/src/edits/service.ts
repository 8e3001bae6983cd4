import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ownedBy } from '../accounts/ownership.ts';
import { MediaItem } from '../media/entities.ts';
import type { ProjectService } from '../projects/service.ts';
import { Conflict, Invalid, InvalidInput } from '../shared/errors.ts';
import { assertWithinTimeline, projectTimeline } from '../timeline/project-timeline.ts';
import { keepingOf, removedRange } from '../../../crds/contract/editing/kept-pause.ts';
import { Edit, type EditPause, type EditRow } from './entities.ts';
import { assetFieldNames, pauseFields, type AssetField, type EditCreateInput, type EditPatchInput, type PauseField } from './schemas.ts';

/**
 * Manual and asset edits one project may hold (those of every run): each is read by every
 * export, timeline change and list. The analysis's own edits are bounded by what it finds.
 */
export const PROJECT_MAX_MANUAL_EDITS = 500;

export interface EditDeps {
  projects: ProjectService;
  /** MAX_VIDEO_DURATION_MS: the longest insert edit. */
  maxInsertMs: number;
}

/** Edit types the user makes, and may delete; the analysis' own are only toggled. */
const userEditTypes: readonly string[] = ['manual', 'asset'];

/** The edit's column of each asset field. */
const assetColumns = {
  media_item_id: 'mediaItemId',
  visual_mode: 'visualMode',
  audio_mode: 'audioMode',
  overlay_position: 'overlayPosition',
  overlay_size_percent: 'overlaySizePercent',
  overlay_opacity_percent: 'overlayOpacityPercent',
  overlay_x: 'overlayX',
  overlay_y: 'overlayY',
  overlay_flip_h: 'overlayFlipH',
  overlay_flip_v: 'overlayFlipV',
  overlay_rotation_deg: 'overlayRotationDeg',
  audio_volume_percent: 'audioVolumePercent',
  audio_duck_main: 'audioDuckMain',
  asset_offset_ms: 'assetOffsetMs',
} as const satisfies Record<AssetField, keyof EditRow>;

/** The asset fields given, as the edit's columns. */
function assetColumnsOf(input: Partial<Record<AssetField, unknown>>): Partial<EditRow> {
  return Object.fromEntries(assetFieldNames.filter((name) => input[name] !== undefined).map((name) => [assetColumns[name], input[name]]));
}

/** What the bound rules look at: the edit as it would be. */
interface Span {
  type: string;
  startMs: number;
  endMs: number;
  visualMode: string | null | undefined;
}

/**
 * Edits of a project's timeline: the active run's list, and the user's manual and asset
 * edits, which belong to the project rather than to a run (a re-analysis or the activation
 * of another run keeps them listed and exported), checked against the timeline (api.md rules 1–7).
 */
export class EditService {
  readonly #d: EditDeps;

  constructor(deps: EditDeps) {
    this.#d = deps;
  }

  /** The active run's edits and the user's own (run-less: manual and asset edits), in timeline order. */
  async list(em: EntityManager, userId: string, projectId: string, activeOnly: boolean): Promise<EditRow[]> {
    const project = await this.#d.projects.owned(em, userId, projectId);
    const runFilter = project.activeRunId ? { $or: [{ runId: project.activeRunId }, { runId: null }] } : { runId: null };
    return em.find(Edit, { project: projectId, ...runFilter, ...(activeOnly ? { active: true } : {}) }, { orderBy: { startMs: 'asc', id: 'asc' } });
  }

  async create(em: EntityManager, userId: string, projectId: string, input: EditCreateInput): Promise<EditRow> {
    const project = await this.#d.projects.owned(em, userId, projectId);
    const asset = input.type === 'asset' ? input : undefined;
    await this.#checkSpan(em, project.id, { type: input.type, startMs: input.start_ms, endMs: input.end_ms, visualMode: asset?.visual_mode });
    // The asset may still be uploading at creation (rule 6 speaks of a change by PATCH only).
    if (asset) await this.#checkAsset(em, userId, asset.media_item_id, asset.asset_offset_ms, { mustBeUploaded: false });
    return em.transactional(async (tx) => {
      // one project's creations queue behind each other, so the cap counts what the others committed
      await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`edits:${project.id}`]);
      const count = await tx.count(Edit, { project: project.id, type: { $in: ['manual', 'asset'] } });
      if (count >= PROJECT_MAX_MANUAL_EDITS) throw Conflict('edits.too_many', { code: 'TooManyEdits', params: { max: PROJECT_MAX_MANUAL_EDITS } });
      const edit = tx.create(Edit, {
        id: randomUUID(),
        project,
        // the user's work is the project's: a new analysis run replaces the AI's edits, never these
        runId: null,
        type: input.type,
        startMs: input.start_ms,
        endMs: input.end_ms,
        active: input.active,
        reason: input.reason,
        ...(asset ? assetColumnsOf(asset) : {}),
      });
      await tx.flush();
      return edit;
    });
  }

  /**
   * Judges the edit as the PATCH leaves it (rule 7: a move out of insert must also bring
   * end_ms within the timeline); asset fields on any other edit are 422.
   */
  async update(em: EntityManager, userId: string, editId: string, patch: EditPatchInput): Promise<EditRow> {
    const edit = await this.#owned(em, userId, editId);
    const assetChanges = assetFieldNames.filter((name) => patch[name] !== undefined);
    if (edit.type !== 'asset' && assetChanges[0]) {
      throw Invalid('edits.asset_field_on_cut', { code: 'ValidationError', params: { field: assetChanges[0], type: edit.type } });
    }
    const pause = this.#pauseChange(edit, patch);
    if (patch.start_ms !== undefined || patch.end_ms !== undefined || patch.visual_mode !== undefined) {
      await this.#checkSpan(em, edit.project.id, {
        type: edit.type,
        startMs: patch.start_ms ?? edit.startMs,
        endMs: patch.end_ms ?? edit.endMs,
        visualMode: patch.visual_mode ?? edit.visualMode,
      });
    }
    if (patch.media_item_id !== undefined || patch.asset_offset_ms !== undefined) {
      const itemId = patch.media_item_id ?? edit.mediaItemId;
      const changesItem = patch.media_item_id !== undefined && patch.media_item_id !== edit.mediaItemId;
      if (itemId) await this.#checkAsset(em, userId, itemId, patch.asset_offset_ms ?? edit.assetOffsetMs ?? 0, { mustBeUploaded: changesItem });
    }
    em.assign(edit, {
      ...(patch.active !== undefined ? { active: patch.active } : {}),
      ...(patch.start_ms !== undefined ? { startMs: patch.start_ms } : {}),
      ...(patch.end_ms !== undefined ? { endMs: patch.end_ms } : {}),
      ...assetColumnsOf(patch),
      ...pause,
    });
    await em.flush();
    return edit;
  }

  /**
   * A shortened pause as the PATCH leaves it (issue 39): kept_ms and keep_breath place its
   * removed range anew by the contract's rule (removedRange, the editing core's reading); a
   * range set by hand (start_ms/end_ms) leaves the pause keeping no set length. 422: pause
   * fields on an edit that shortens no pause, with start_ms/end_ms, or keeping all of it.
   */
  #pauseChange(edit: EditRow, patch: EditPatchInput): Partial<EditRow> {
    const changed = (Object.keys(pauseFields) as PauseField[]).filter((name) => patch[name] !== undefined);
    const setsRange = patch.start_ms !== undefined || patch.end_ms !== undefined;
    if (changed.length === 0) return setsRange && edit.pause && edit.pause.kept_ms !== null ? { pause: { ...edit.pause, kept_ms: null } } : {};
    if (!edit.pause) throw Invalid('edits.pause_field_on_other', { code: 'ValidationError', params: { field: changed[0]!, type: edit.type } });
    if (setsRange) throw Invalid('edits.kept_with_range', { code: 'ValidationError' });
    const pause: EditPause = { ...edit.pause, kept_ms: patch.kept_ms ?? edit.pause.kept_ms, keep_breath: patch.keep_breath ?? edit.pause.keep_breath };
    if (pause.kept_ms === null) return { pause };
    const removed = removedRange(pause.start_ms, pause.end_ms, keepingOf(pause));
    if (!removed) throw Invalid('edits.kept_leaves_nothing', { code: 'ValidationError', params: { kept_ms: pause.kept_ms, pause_ms: pause.end_ms - pause.start_ms } });
    return { pause, startMs: removed.startMs, endMs: removed.endMs };
  }

  /**
   * The spec's rule: a manual edit is deleted; an AI-detected edit is toggled inactive
   * instead (returned, so the client sees it). An asset edit is deleted too: like a manual
   * one the user added it, and an inactive overlay nobody can remove would only clutter the list.
   */
  async remove(em: EntityManager, userId: string, editId: string): Promise<{ deleted: true } | { deleted: false; edit: EditRow }> {
    const edit = await this.#owned(em, userId, editId);
    if (userEditTypes.includes(edit.type)) {
      em.remove(edit);
      await em.flush();
      return { deleted: true };
    }
    edit.active = false;
    await em.flush();
    return { deleted: false, edit };
  }

  async #owned(em: EntityManager, userId: string, editId: string): Promise<EditRow> {
    const edit = await em.findOne(Edit, editId, { populate: ['project'] });
    return ownedBy(edit, userId, { owner: (found) => found.project.userId, notFound: 'edits.not_found' });
  }

  /**
   * end > start (422); an asset insert extends the timeline, so only its length is bounded
   * (rule 3); every other edit ends within the timeline (rules 1, 2, 4).
   */
  async #checkSpan(em: EntityManager, projectId: string, span: Span): Promise<void> {
    if (span.endMs <= span.startMs) throw Invalid('edits.end_before_start', { code: 'ValidationError', params: { start_ms: span.startMs, end_ms: span.endMs } });
    if (span.type === 'asset' && span.visualMode === 'insert') {
      const length = span.endMs - span.startMs;
      if (length > this.#d.maxInsertMs) throw InvalidInput('edits.insert_too_long', { params: { max_ms: this.#d.maxInsertMs, length_ms: length } });
      return;
    }
    assertWithinTimeline(await projectTimeline(em, projectId), [{ field: 'end_ms', ms: span.endMs }]);
  }

  /** The asset is the caller's (404), uploaded when a PATCH switches to it (409, rule 6), and the offset inside it (400, rule 5). */
  async #checkAsset(em: EntityManager, userId: string, itemId: string, offsetMs: number, { mustBeUploaded }: { mustBeUploaded: boolean }): Promise<void> {
    const item = ownedBy(await em.findOne(MediaItem, itemId, { populate: ['file'] }), userId, { notFound: 'edits.asset_not_found' });
    const file = item.file;
    if (mustBeUploaded && (file.status !== 'UPLOADED' || item.pendingFileId)) {
      const status = item.pendingFileId || file.status === 'MULTIPART_INITIATED' ? 'pending' : file.status.toLowerCase();
      throw Conflict('edits.asset_not_ready', { params: { status } });
    }
    const durationMs = file.durationMs ?? null;
    if (durationMs !== null && offsetMs >= durationMs) throw InvalidInput('edits.asset_offset_beyond', { params: { offset_ms: offsetMs, duration_ms: durationMs } });
  }
}
