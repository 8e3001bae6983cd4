import type { CanvasRow } from './entities.ts';

/** Longest an INSERT canvas may play: a still held for days would be rendered frame by frame. */
export const INSERT_MAX_DURATION_MS = 10 * 60 * 1000;

/**
 * The stretch of its CANVAS_FILL source a SINGLE canvas plays: `params.source_start_ms`
 * (default 0) to `params.source_end_ms` (default the source's duration_ms; null while
 * that is unknown). Canvases made before splitting existed carry neither: the whole source.
 */
export interface SourceRange {
  startMs: number;
  endMs: number | null;
}

export function sourceRangeOf(canvas: CanvasRow, sourceDurationMs: number | null): SourceRange {
  const start = canvas.params['source_start_ms'];
  const end = canvas.params['source_end_ms'];
  return { startMs: typeof start === 'number' ? start : 0, endMs: typeof end === 'number' ? end : sourceDurationMs };
}

/** The params with the range written; the whole source is written as no range at all. */
export function withSourceRange(params: Record<string, unknown>, range: { startMs: number; endMs: number }, sourceDurationMs: number | null): Record<string, unknown> {
  const { source_start_ms: _start, source_end_ms: _end, ...rest } = params;
  if (range.startMs === 0 && range.endMs === sourceDurationMs) return rest;
  return { ...rest, source_start_ms: range.startMs, source_end_ms: range.endMs };
}

/**
 * How long a SINGLE canvas's whole source lasts: an image is a still, whose canvas may set
 * its own length (`params.duration_ms`, else the still duration recorded on the file); any
 * other source its duration_ms (null while unknown).
 */
export function sourceLengthOf(canvas: CanvasRow, file: { kind?: string | null | undefined; durationMs?: number | null | undefined }): number | null {
  const own = canvas.params['duration_ms'];
  if (file.kind === 'image' && typeof own === 'number' && Number.isInteger(own) && own > 0) return own;
  return file.durationMs ?? null;
}
