import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Conflict, NotFound, Invalid } from '../shared/errors.ts';
import { Project } from '../projects/entities.ts';
import { MediaItem } from '../media/entities.ts';
import { Canvas, CanvasMedia, type CanvasMediaRow, type CanvasRow } from './entities.ts';

/**
 * The project's media spine: SINGLE canvases, each filled by one project media item,
 * tiled in sequence_position order 0, 1, 2… without gaps. Callers hold a transaction.
 */

/** Serialises spine changes of one project (positions are read, then written). */
export async function lockProject(tx: EntityManager, projectId: string): Promise<void> {
  await tx.execute(`select 1 from projects where id = ? for update`, [projectId]);
}

/**
 * Canvases one project may hold: each is a piece the renderer reads (an ffmpeg input) and
 * every structural change reads them all, so their number is bounded.
 */
export const PROJECT_MAX_CANVASES = 200;

/** 409 naming the limit when a project holding `count` canvases may not take `adding` more. */
export function checkCanvasRoom(count: number, adding = 1): void {
  if (count + adding > PROJECT_MAX_CANVASES) throw Conflict('canvases.too_many', { code: 'TooManyCanvases', params: { max: PROJECT_MAX_CANVASES } });
}

/** A SINGLE canvas at the end of the spine with the item as its CANVAS_FILL (409 when the project is full). */
export async function appendSingleCanvas(tx: EntityManager, projectId: string, itemId: string): Promise<CanvasRow> {
  await lockProject(tx, projectId);
  const [row] = await tx.execute<{ next: number; n: number }[]>(`select coalesce(max(sequence_position) + 1, 0)::int as next, count(*)::int as n from canvases where project_id = ?`, [projectId]);
  checkCanvasRoom(row?.n ?? 0);
  const canvas = tx.create(Canvas, { id: randomUUID(), project: tx.getReference(Project, projectId), type: 'SINGLE', sequencePosition: row?.next ?? 0 });
  tx.create(CanvasMedia, { id: randomUUID(), canvas, item: tx.getReference(MediaItem, itemId), role: 'CANVAS_FILL' });
  return canvas;
}

/** Removes the SINGLE canvases the item fills and closes the gap they leave. */
export async function removeItemCanvases(tx: EntityManager, itemId: string, projectId: string): Promise<void> {
  await lockProject(tx, projectId);
  await tx.execute(
    `delete from canvases where type = 'SINGLE' and id in (select canvas_id from canvas_media where media_item_id = ? and role = 'CANVAS_FILL')`,
    [itemId],
  );
  await retile(tx, projectId);
}

/** Renumbers the project's canvases 0..n-1 keeping their order. */
async function retile(tx: EntityManager, projectId: string): Promise<void> {
  await tx.execute(
    `update canvases c set sequence_position = o.position
       from (select id, (row_number() over (order by sequence_position, created_at, id) - 1)::int as position from canvases where project_id = ?) o
      where c.id = o.id and c.sequence_position <> o.position`,
    [projectId],
  );
}

export function canvasesOf(em: EntityManager, projectId: string): Promise<CanvasRow[]> {
  return em.find(Canvas, { project: projectId }, { orderBy: { sequencePosition: 'asc', createdAt: 'asc', id: 'asc' } });
}

export async function canvasOf(em: EntityManager, projectId: string, canvasId: string): Promise<CanvasRow> {
  const canvas = await em.findOne(Canvas, { id: canvasId, project: projectId });
  if (!canvas) throw NotFound('canvas.not_found');
  return canvas;
}

/** The media of each canvas, by canvas id. */
export async function mediaOf(em: EntityManager, canvases: CanvasRow[]): Promise<Map<string, CanvasMediaRow[]>> {
  const rows = canvases.length ? await em.find(CanvasMedia, { canvas: { $in: canvases.map((c) => c.id) } }, { populate: ['item', 'item.file'] }) : [];
  const byCanvas = new Map<string, CanvasMediaRow[]>();
  for (const row of rows) byCanvas.set(row.canvas.id, [...(byCanvas.get(row.canvas.id) ?? []), row]);
  return byCanvas;
}

/** SINGLE canvases with their CANVAS_FILL media, in sequence order. */
export async function spineOf(em: EntityManager, projectId: string): Promise<{ canvas: CanvasRow; fill: CanvasMediaRow }[]> {
  const canvases = (await canvasesOf(em, projectId)).filter((canvas) => canvas.type === 'SINGLE');
  const media = await mediaOf(em, canvases);
  return canvases.flatMap((canvas) => {
    const fill = media.get(canvas.id)?.find((row) => row.role === 'CANVAS_FILL');
    return fill ? [{ canvas, fill }] : [];
  });
}

/**
 * Re-tiles the spine in the order given: every SINGLE canvas moves to the position of
 * its item in `itemIds`. A composed spine (any canvas other than SINGLE, or a split clip) is refused, as
 * is a list that does not name each spine item exactly once.
 */
export async function reorderSpine(tx: EntityManager, projectId: string, itemIds: string[]): Promise<void> {
  await lockProject(tx, projectId);
  const canvases = await canvasesOf(tx, projectId);
  // a split clip (a SINGLE canvas playing a stretch of its source) is composition too: one item, several tiles
  const split = canvases.some((canvas) => typeof canvas.params['source_start_ms'] === 'number' || typeof canvas.params['source_end_ms'] === 'number');
  if (split || canvases.some((canvas) => canvas.type !== 'SINGLE')) throw Conflict('spine.composed', { code: 'SpineComposed' });
  const spine = await spineOf(tx, projectId);
  const positionOf = new Map(itemIds.map((id, index) => [id, index]));
  const complete = positionOf.size === itemIds.length && itemIds.length === spine.length && spine.every(({ fill }) => positionOf.has(fill.item.id));
  if (!complete) throw Invalid('spine.incomplete', { code: 'ValidationError' });
  for (const { canvas, fill } of spine) canvas.sequencePosition = positionOf.get(fill.item.id)!;
  await tx.flush();
}
