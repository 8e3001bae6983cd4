import type { EntityManager } from '@mikro-orm/postgresql';
import { canvasesOf, mediaOf } from '../canvases/spine.ts';
import type { CanvasRow } from '../canvases/entities.ts';
import { INSERT_MAX_DURATION_MS, sourceLengthOf, sourceRangeOf } from '../canvases/source-range.ts';
import { Conflict, InvalidInput } from '../shared/errors.ts';
import { hasMedia, timelineOf, type SpinePiece, type Timeline } from './timeline.ts';

/**
 * The project's timeline from its canvases in sequence order: each SINGLE canvas plays
 * its CANVAS_FILL source's stretch (the whole source unless split); an INSERT canvas plays its INSERT_ASSET for
 * `params.duration_ms` when set, otherwise for the asset's own duration. Other canvas
 * types cannot be created yet and take no time. An image is a still (its canvas's
 * `params.duration_ms`, else the still duration recorded on the file); a source that failed
 * to process plays nothing (0 ms, marked `failed`), so the rest of the timeline stays measured.
 */
export async function projectTimeline(em: EntityManager, projectId: string): Promise<Timeline> {
  const canvases = (await canvasesOf(em, projectId)).filter((canvas) => canvas.type === 'SINGLE' || canvas.type === 'INSERT');
  const media = await mediaOf(em, canvases);
  return timelineOf(
    canvases.flatMap((canvas): SpinePiece[] => {
      const type = canvas.type as SpinePiece['type'];
      const row = media.get(canvas.id)?.find((candidate) => candidate.role === (type === 'SINGLE' ? 'CANVAS_FILL' : 'INSERT_ASSET'));
      if (!row) return [];
      const piece = { canvasId: canvas.id, type, mediaItemId: row.item.id, mediaFileId: row.item.file.id };
      if (row.item.file.status === 'FAILED') return [{ ...piece, sourceStartMs: 0, durationMs: 0, failed: { name: row.item.displayName ?? row.item.file.originalFilename } }];
      const sourceMs = type === 'SINGLE' ? sourceLengthOf(canvas, row.item.file) : row.item.file.durationMs ?? null;
      if (type === 'INSERT') return [{ ...piece, sourceStartMs: 0, durationMs: insertDurationMs(canvas) ?? sourceMs }];
      // a split SINGLE canvas plays its stretch of the source; one never split plays it whole
      const range = sourceRangeOf(canvas, sourceMs);
      return [{ ...piece, sourceStartMs: range.startMs, durationMs: range.endMs === null ? null : range.endMs - range.startMs }];
    }),
  );
}

function insertDurationMs(canvas: CanvasRow): number | null {
  const value = canvas.params['duration_ms'];
  // a row written before the cap keeps playing, but no longer than an INSERT may now
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? Math.min(value, INSERT_MAX_DURATION_MS) : null;
}

/**
 * The spec's timeline bound (edits, drafts, exports): 400 when the project has no media or
 * a value exceeds the total duration; skipped while a source's duration is unknown.
 */
export function assertWithinTimeline(timeline: Timeline, values: readonly { field: string; ms: number | undefined }[]): void {
  if (!hasMedia(timeline)) throw InvalidInput('timeline.no_media');
  if (!timeline.known) return;
  for (const { field, ms } of values) {
    if (ms !== undefined && ms > timeline.durationMs) throw InvalidInput('timeline.beyond_duration', { params: { field, value_ms: ms, duration_ms: timeline.durationMs } });
  }
}

/**
 * 409 `SourceFailed` naming the first source that failed to process: it will never play,
 * so what is made of the timeline (an analysis, an export) waits until the user deletes it
 * or uploads it again, and the message says so.
 */
export function assertNoFailedSource(timeline: Timeline): void {
  const failed = timeline.pieces.find((piece) => piece.failed);
  if (failed?.failed) throw Conflict('timeline.source_failed', { code: 'SourceFailed', params: { name: failed.failed.name } });
}
