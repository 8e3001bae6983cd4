import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ownedBy } from '../accounts/ownership.ts';
import { Edit, type EditRow } from '../edits/entities.ts';
import { MediaItem } from '../media/entities.ts';
import type { ProjectService } from '../projects/service.ts';
import { Project } from '../projects/entities.ts';
import { Conflict, Invalid, NotFound } from '../shared/errors.ts';
import { projectTimeline } from '../timeline/project-timeline.ts';
import { Canvas, CanvasMedia, type CanvasMediaRow, type CanvasRow } from './entities.ts';
import { sourceLengthOf, sourceRangeOf, withSourceRange } from './source-range.ts';
import { followContent } from './edits-follow.ts';
import { canvasesOf, checkCanvasRoom, lockProject, mediaOf } from './spine.ts';
import type { CanvasCreateInput, CanvasPatchInput } from './schemas.ts';

/** What one structural change leaves: the new sequence, and what it created, changed or removed. */
interface Change {
  order: CanvasRow[];
  /** Split and merge keep every source time where it plays, so no edit can move. */
  timelineUnchanged?: boolean;
  touched?: CanvasRow[];
  removed?: string[];
}

/** The rows a change produced, for the HTTP layer to read out. */
export interface ChangeOutcome {
  canvases: CanvasRow[];
  media: Awaited<ReturnType<typeof mediaOf>>;
  removed: string[];
  /** The canvas a create or an update made or changed. */
  subject: CanvasRow | undefined;
  moved: EditRow[];
  stranded: EditRow[];
}

const refused = (key: Parameters<typeof Invalid>[0], params?: Record<string, string | number>) => Invalid(key, { code: 'ValidationError', ...(params ? { params } : {}) });

/**
 * The structural editor: every change runs in one transaction holding the project's row
 * lock, renumbers the canvases 0..n-1 in their new order, and moves the edits that lie
 * wholly on one moved piece with it (edits-follow.ts).
 */
export class CanvasEditor {
  readonly #projects: ProjectService;

  constructor(projects: ProjectService) {
    this.#projects = projects;
  }

  /** SPLIT and TALKING_HEAD cannot be rendered yet: always 422, after the project's ownership (404). */
  async layout(em: EntityManager, userId: string, projectId: string, canvasType: string): Promise<never> {
    await this.#projects.owned(em, userId, projectId);
    throw Invalid('canvases.layout_unrenderable', { code: 'LayoutNotRenderable', params: { canvas_type: canvasType } });
  }

  /** Two adjacent non-INSERT canvases trade places. */
  swap(em: EntityManager, userId: string, projectId: string, aId: string, bId: string): Promise<ChangeOutcome> {
    return this.#change(em, userId, projectId, (_tx, canvases) => {
      const a = indexOf(canvases, aId);
      const b = indexOf(canvases, bId);
      if (a === b) throw refused('canvases.swap_same');
      if (canvases[a]!.type === 'INSERT' || canvases[b]!.type === 'INSERT') throw refused('canvases.swap_insert');
      if (Math.abs(a - b) !== 1) throw refused('canvases.swap_not_adjacent', { position_a: a, position_b: b });
      const order = [...canvases];
      [order[a], order[b]] = [order[b]!, order[a]!];
      return Promise.resolve({ order });
    });
  }

  /** An INSERT canvas moves to `position` (0..n-1); the others close up around it. */
  reorder(em: EntityManager, userId: string, projectId: string, canvasId: string, position: number): Promise<ChangeOutcome> {
    return this.#change(em, userId, projectId, (_tx, canvases) => {
      const index = indexOf(canvases, canvasId);
      const canvas = canvases[index]!;
      if (canvas.type !== 'INSERT') throw refused('canvases.reorder_not_insert', { type: canvas.type });
      if (position > canvases.length - 1) throw refused('canvases.position_out_of_range', { max: canvases.length - 1, value: position });
      const order = canvases.filter((other) => other !== canvas);
      order.splice(position, 0, canvas);
      return Promise.resolve({ order });
    });
  }

  /**
   * A SINGLE canvas playing source [start, end) becomes two contiguous ones: itself
   * [start, p) and a new canvas right after it [p, end), same fill, crop, aspect,
   * letterbox and flags. p must lie strictly inside (422); a source whose duration is
   * still unknown cannot be split (409).
   */
  split(em: EntityManager, userId: string, projectId: string, canvasId: string, p: number): Promise<ChangeOutcome> {
    return this.#change(em, userId, projectId, async (tx, canvases) => {
      const index = indexOf(canvases, canvasId);
      const canvas = canvases[index]!;
      if (canvas.type !== 'SINGLE') throw refused('canvases.split_not_single', { type: canvas.type });
      checkCanvasRoom(canvases.length);
      const fill = await fillOf(tx, canvas);
      const durationMs = sourceLengthOf(canvas, fill.item.file);
      const { startMs, endMs } = sourceRangeOf(canvas, durationMs);
      if (endMs === null) throw Conflict('canvases.source_duration_unknown', { code: 'SourceDurationUnknown' });
      if (p <= startMs || p >= endMs) throw refused('canvases.split_outside', { p, start_ms: startMs, end_ms: endMs });
      const second = tx.create(Canvas, {
        id: randomUUID(),
        project: canvas.project,
        type: 'SINGLE',
        sequencePosition: index + 1,
        params: withSourceRange(canvas.params, { startMs: p, endMs }, durationMs),
        crop: canvas.crop ?? null,
        aspect: canvas.aspect ?? null,
        letterbox: canvas.letterbox ?? null,
        flags: { ...canvas.flags },
      });
      tx.create(CanvasMedia, { id: randomUUID(), canvas: second, item: fill.item, role: 'CANVAS_FILL' });
      canvas.params = withSourceRange(canvas.params, { startMs, endMs: p }, durationMs);
      const order = [...canvases];
      order.splice(index + 1, 0, second);
      return { order, touched: [canvas, second], timelineUnchanged: true };
    });
  }

  /**
   * A SINGLE canvas and its SINGLE neighbour (left or right) playing contiguous stretches
   * of the same source become one: the earlier canvas stays (its crop, flags… kept) and
   * spans both; the later one is removed. Anything else is 422.
   */
  merge(em: EntityManager, userId: string, projectId: string, canvasId: string, direction: 'left' | 'right'): Promise<ChangeOutcome> {
    return this.#change(em, userId, projectId, async (tx, canvases) => {
      const index = indexOf(canvases, canvasId);
      const [first, second] = direction === 'left' ? [canvases[index - 1], canvases[index]!] : [canvases[index]!, canvases[index + 1]];
      if (!first || !second) throw refused('canvases.merge_no_neighbour', { direction });
      if (first.type !== 'SINGLE' || second.type !== 'SINGLE') throw refused('canvases.merge_not_single');
      const [firstFill, secondFill] = [await fillOf(tx, first), await fillOf(tx, second)];
      if (firstFill.item.id !== secondFill.item.id) throw refused('canvases.merge_not_contiguous');
      const durationMs = sourceLengthOf(first, firstFill.item.file);
      const [a, b] = [sourceRangeOf(first, durationMs), sourceRangeOf(second, durationMs)];
      if (a.endMs === null || b.endMs === null || a.endMs !== b.startMs) throw refused('canvases.merge_not_contiguous');
      first.params = withSourceRange(first.params, { startMs: a.startMs, endMs: b.endMs }, durationMs);
      tx.remove(second);
      return { order: canvases.filter((canvas) => canvas !== second), touched: [first], removed: [second.id], timelineUnchanged: true };
    });
  }

  /**
   * INSERT is dropped. SPLIT and TALKING_HEAD become SINGLE: keep=clip keeps the CANVAS_FILL,
   * keep=asset makes the CO_STAR the fill (SPLIT defaults to clip, TALKING_HEAD needs keep: 422).
   * SINGLE is the spine itself and GRID cannot be undone yet: 409.
   */
  remove(em: EntityManager, userId: string, projectId: string, canvasId: string, keep: 'asset' | 'clip' | undefined): Promise<ChangeOutcome> {
    return this.#change(em, userId, projectId, async (tx, canvases) => {
      const canvas = canvases[indexOf(canvases, canvasId)]!;
      if (canvas.type === 'SINGLE') throw Conflict('canvases.single_not_deletable', { code: 'CanvasNotDeletable' });
      if (canvas.type === 'GRID') throw Conflict('canvases.grid_not_deletable', { code: 'CanvasNotDeletable' });
      if (canvas.type === 'INSERT') {
        tx.remove(canvas);
        return { order: canvases.filter((other) => other !== canvas), removed: [canvas.id] };
      }
      if (canvas.type === 'TALKING_HEAD' && !keep) throw refused('canvases.keep_required');
      const rows = (await mediaOf(tx, [canvas])).get(canvas.id) ?? [];
      const fill = rows.find((row) => row.role === 'CANVAS_FILL');
      const coStar = rows.find((row) => row.role === 'CO_STAR');
      // keep=asset without a co-star (or with the clip itself as co-star) keeps the clip.
      const kept = keep === 'asset' && coStar && coStar.item.id !== fill?.item.id ? coStar : fill;
      for (const row of rows) if (row !== kept) tx.remove(row);
      if (kept) kept.role = 'CANVAS_FILL';
      tx.assign(canvas, { type: 'SINGLE', params: {} });
      return { order: canvases, touched: [canvas] };
    });
  }

  /** An INSERT canvas of a media item of the caller (404 otherwise) at `sequence_position` (0..n, default the end). */
  async create(em: EntityManager, userId: string, projectId: string, input: CanvasCreateInput): Promise<ChangeOutcome> {
    return this.#change(em, userId, projectId, async (tx, canvases) => {
      checkCanvasRoom(canvases.length);
      const item = ownedBy(await tx.findOne(MediaItem, input.media_item_id), userId, { notFound: 'canvases.asset_not_found' });
      const position = input.sequence_position ?? canvases.length;
      if (position > canvases.length) throw refused('canvases.position_out_of_range', { max: canvases.length, value: position });
      const canvas = tx.create(Canvas, { id: randomUUID(), project: tx.getReference(Project, projectId), type: 'INSERT', sequencePosition: position, params: { ...input.params } });
      tx.create(CanvasMedia, { id: randomUUID(), canvas, item, role: 'INSERT_ASSET' });
      const order = [...canvases];
      order.splice(position, 0, canvas);
      return { order, touched: [canvas] };
    });
  }

  /**
   * The mutable fields; params (duration_ms) belong to INSERT canvases and to SINGLE canvases
   * playing a still (an image), and a crop stays inside the frame (422).
   */
  async update(em: EntityManager, userId: string, projectId: string, canvasId: string, patch: CanvasPatchInput): Promise<ChangeOutcome> {
    return this.#change(em, userId, projectId, async (tx, canvases) => {
      const canvas = canvases[indexOf(canvases, canvasId)]!;
      const still = canvas.type === 'SINGLE' && patch.params !== undefined && (await fillOf(tx, canvas)).item.file.kind === 'image';
      if (patch.params !== undefined && canvas.type !== 'INSERT' && !still) throw refused('canvases.params_not_insert', { type: canvas.type });
      if (patch.crop && (patch.crop.x + patch.crop.width > 1 || patch.crop.y + patch.crop.height > 1)) throw refused('canvases.crop_outside');
      // a still's canvas keeps its split range (source_start_ms/source_end_ms) beside its length
      const { duration_ms: _length, ...kept } = canvas.params;
      tx.assign(canvas, {
        ...(patch.params !== undefined ? { params: still ? { ...kept, ...patch.params } : { ...patch.params } } : {}),
        ...(patch.crop !== undefined ? { crop: patch.crop } : {}),
        ...(patch.aspect !== undefined ? { aspect: patch.aspect } : {}),
        ...(patch.letterbox !== undefined ? { letterbox: patch.letterbox } : {}),
        ...(patch.flags !== undefined ? { flags: patch.flags } : {}),
      });
      return { order: canvases, touched: [canvas] };
    });
  }

  /**
   * One transaction under the project's row lock (two changes of one project never
   * interleave): the change, positions renumbered 0..n-1 in its order, edits following
   * their content.
   */
  async #change(em: EntityManager, userId: string, projectId: string, change: (tx: EntityManager, canvases: CanvasRow[]) => Promise<Change>): Promise<ChangeOutcome> {
    const project = await this.#projects.owned(em, userId, projectId);
    return em.transactional(async (tx) => {
      await lockProject(tx, project.id);
      const canvases = await canvasesOf(tx, project.id);
      const before = await projectTimeline(tx, project.id);
      const positions = new Map(canvases.map((canvas) => [canvas.id, canvas.sequencePosition]));
      const { order, touched = [], removed = [], timelineUnchanged = false } = await change(tx, canvases);
      order.forEach((canvas, index) => (canvas.sequencePosition = index));
      await tx.flush();

      const edits = timelineUnchanged ? [] : await tx.find(Edit, { project: project.id }, { orderBy: { startMs: 'asc', id: 'asc' } });
      const { moved, stranded } = timelineUnchanged ? { moved: [], stranded: [] } : followContent(before, await projectTimeline(tx, project.id), edits);
      const byId = new Map(edits.map((edit) => [edit.id, edit]));
      for (const { id, deltaMs } of moved) {
        const edit = byId.get(id)!;
        edit.startMs += deltaMs;
        edit.endMs += deltaMs;
      }
      await tx.flush();

      const changed = order.filter((canvas) => touched.includes(canvas) || positions.get(canvas.id) !== canvas.sequencePosition);
      return {
        canvases: changed,
        media: await mediaOf(tx, changed),
        removed,
        subject: touched[0],
        moved: moved.map(({ id }) => byId.get(id)!),
        stranded: stranded.map((id) => byId.get(id)!),
      };
    });
  }
}

async function fillOf(tx: EntityManager, canvas: CanvasRow): Promise<CanvasMediaRow> {
  const fill = (await mediaOf(tx, [canvas])).get(canvas.id)?.find((row) => row.role === 'CANVAS_FILL');
  if (!fill) throw Conflict('canvases.no_fill', { code: 'CanvasNotFilled' });
  return fill;
}

function indexOf(canvases: readonly CanvasRow[], canvasId: string): number {
  const index = canvases.findIndex((canvas) => canvas.id === canvasId);
  if (index < 0) throw NotFound('canvas.not_found');
  return index;
}
