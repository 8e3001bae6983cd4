import { z } from 'zod';
import { hexColorRrggbb } from '../shared/colors.ts';
import { EditRead } from '../edits/schemas.ts';
import { INSERT_MAX_DURATION_MS } from './source-range.ts';
import { canvasMediaRoles, canvasTypes, type CanvasMediaRow, type CanvasRow } from './entities.ts';
import { issueKey } from '../i18n/index.ts';

export const CanvasRead = z
  .object({
    uuid: z.uuid(),
    project_id: z.uuid(),
    type: z.enum(canvasTypes),
    sequence_position: z.number().int(),
    params: z.record(z.string(), z.unknown()),
    crop: z.record(z.string(), z.unknown()).nullable(),
    aspect: z.string().nullable(),
    letterbox: z.record(z.string(), z.unknown()).nullable(),
    flags: z.record(z.string(), z.boolean()),
    media: z.array(z.object({ media_item_id: z.uuid(), role: z.enum(canvasMediaRoles) })),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'CanvasRead' });

export function canvasRead(canvas: CanvasRow, media: CanvasMediaRow[]): z.infer<typeof CanvasRead> {
  return {
    uuid: canvas.id,
    project_id: canvas.project.id,
    type: canvas.type,
    sequence_position: canvas.sequencePosition,
    params: canvas.params,
    crop: canvas.crop ?? null,
    aspect: canvas.aspect ?? null,
    letterbox: canvas.letterbox ?? null,
    flags: canvas.flags,
    media: media.map((row) => ({ media_item_id: row.item.id, role: row.role })),
    created_at: canvas.createdAt.toISOString(),
    updated_at: canvas.updatedAt.toISOString(),
  };
}

export const CanvasUuidParams = z.object({ canvas_uuid: z.uuid() });

export const CanvasLayout = z.strictObject({
  canvas_type: z.enum(['SPLIT', 'TALKING_HEAD']),
  t1: z.int().min(0),
  t2: z.int().min(0),
  co_star_media_item_id: z.uuid(),
  params: z.record(z.string(), z.unknown()).default({}),
});

export const CanvasSwap = z.strictObject({ canvas_a_uuid: z.uuid(), canvas_b_uuid: z.uuid() });
export const CanvasReorder = z.strictObject({ new_sequence_position: z.int().min(0) });
export const CanvasSplit = z.strictObject({ p: z.int().min(0).describe("A source-time point (ms) strictly inside the canvas's source range.") });
export const CanvasMerge = z.strictObject({ direction: z.enum(['left', 'right']) });
export const CanvasDeleteQuery = z.object({ keep: z.enum(['asset', 'clip']).optional() });

/** INSERT canvas params, and a still's (a SINGLE canvas playing an image): how long it plays (default: the asset's own duration, or the still duration), at most 10 minutes. */
const insertParams = z.strictObject({ duration_ms: z.int().min(1).max(INSERT_MAX_DURATION_MS).optional() });

export const CanvasCreate = z
  .strictObject({
    type: z.literal('INSERT').describe('Only INSERT canvases are created here; SINGLE ones come with project media, the others with layout.'),
    media_item_id: z.uuid().describe('The inserted asset: a media item of the caller.'),
    sequence_position: z.int().min(0).optional().describe('Where it goes, 0..n; the end when omitted.'),
    params: insertParams.default({}),
  })
  .meta({ id: 'CanvasCreate' });
export type CanvasCreateInput = z.infer<typeof CanvasCreate>;

/** Fractions of the source frame. */
const crop = z.strictObject({ x: z.number().min(0).max(1), y: z.number().min(0).max(1), width: z.number().gt(0).max(1), height: z.number().gt(0).max(1) });
const canvasAspects = ['16:9', '9:16', '1:1', '4:5', '4:3'] as const;
const letterbox = z.strictObject({ color: hexColorRrggbb, blur: z.boolean().default(false) });

export const CanvasPatch = z
  .strictObject({
    params: insertParams.optional().describe('INSERT canvases, and SINGLE canvases playing an image (a still): { duration_ms }; {} restores the default length.'),
    crop: crop.nullable().optional().describe('{ x, y, width, height } as fractions of the frame; null clears it.'),
    aspect: z.enum(canvasAspects).nullable().optional(),
    letterbox: letterbox.nullable().optional().describe('{ color: #rrggbb, blur }; null clears it.'),
    flags: z.record(z.string().regex(/^[a-z][a-z0-9_]{0,31}$/), z.boolean()).refine((flags) => Object.keys(flags).length <= 16, { error: issueKey('validation.at_most_flags'), params: { max: 16 } }).optional().describe('Replaces the flags.'),
  })
  .meta({ id: 'CanvasPatch' });
export type CanvasPatchInput = z.infer<typeof CanvasPatch>;

/**
 * What a structural change did: the canvases it created, changed or moved (sequence order),
 * the ones it removed, the edits that moved with their content, and the edits left where
 * they were although other content now plays under them.
 */
const mutationResult = {
  canvases: z.array(CanvasRead),
  removed_canvas_uuids: z.array(z.uuid()),
  edits: z.array(EditRead).describe('Edits moved with the source content they lie on.'),
  stranded_edits: z.array(EditRead).describe('Edits not moved whose timeline span now falls on other content.'),
};
export const CanvasReorderResult = z.object(mutationResult).meta({ id: 'CanvasReorderResult' });
export const CanvasSplitResult = z.object(mutationResult).meta({ id: 'CanvasSplitResult' });
export const CanvasMergeResult = z.object(mutationResult).meta({ id: 'CanvasMergeResult' });
export const CanvasDeleteResult = z.object(mutationResult).meta({ id: 'CanvasDeleteResult' });
export type CanvasMutationResult = z.infer<typeof CanvasReorderResult>;
