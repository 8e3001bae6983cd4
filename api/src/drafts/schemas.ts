import { z } from 'zod';
import { pauseFields } from '../edits/schemas.ts';
import type { DraftRow, StoredDraftSettings } from './entities.ts';

/** Shared with ExportSettings (api.md): the output's resolution and aspect ratio. */
export const resolutions = ['720p', '1080p'] as const;
export const aspectRatios = ['16:9', '9:16', '1:1'] as const;

const timelineMs = z.int().min(0).max(2_147_483_647);

/** One edit's override: the fields it changes (a draft's and an export's `edit_overrides`). */
const EditOverride = z
  .strictObject({
    active: z.boolean().optional(),
    start_ms: timelineMs.optional().describe('Timeline ms; within the timeline duration.'),
    end_ms: timelineMs.optional().describe('Timeline ms; within the timeline duration, greater than start_ms when both are given.'),
    kept_ms: pauseFields.kept_ms
      .optional()
      .describe(
        'Beyond the spec, a shortened pause (an edit with `pause`, issue 39): how much of the pause stays in this draft\'s output, split as the edit\'s pause.kept_split says; ignored on other edits, and when this override also sets start_ms or end_ms (the range it sets stands). Keeping the whole pause removes nothing.',
      ),
    keep_breath: pauseFields.keep_breath.optional().describe('Beyond the spec, a shortened pause: keep the breath it holds in this draft\'s output; ignored as kept_ms is.'),
  })
  .meta({ id: 'EditOverride' });

export const EditOverridesSchema = z
  .record(z.uuid(), EditOverride)
  .describe('Edit uuid → the fields that override it.')
  .meta({ id: 'EditOverrides' });

/**
 * What a draft keeps of the export: no analysis settings, no caption_length. Crop is zoom
 * plus pan, never a resolved region, so it survives a change of source or resolution.
 */
const DraftSettings = z
  .strictObject({
    platform: z.string().trim().min(1).max(50).describe('Where the video is meant to go (youtube, tiktok, instagram…): free text, 1–50 characters.'),
    resolution: z.enum(resolutions),
    aspect_ratio: z.enum(aspectRatios),
    crop_enabled: z.boolean(),
    crop_zoom: z.number().min(1).max(10).describe('1 (the whole frame) to 10 (a tenth of it).'),
    crop_pan_x: z.number().min(-1).max(1).describe('Horizontal pan of the zoomed crop: -1 left edge, 0 centred, 1 right edge.'),
    crop_pan_y: z.number().min(-1).max(1).describe('Vertical pan of the zoomed crop: -1 top edge, 0 centred, 1 bottom edge.'),
  })
  .partial()
  .meta({ id: 'DraftSettings' });
// what the edge accepts is exactly what the entity stores
DraftSettings satisfies z.ZodType<StoredDraftSettings>;

// Strict bodies: analysis_run_id (set by the server) or any other unknown key is 422.
export const DraftCreate = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    edit_overrides: EditOverridesSchema.default({}),
    export_settings: DraftSettings.default({}),
  })
  .meta({ id: 'DraftCreate' });
export type DraftCreateInput = z.infer<typeof DraftCreate>;

/** Each field given replaces the draft's value whole (edit_overrides and export_settings are not merged). */
export const DraftPatch = z
  .strictObject({ name: DraftCreate.shape.name.optional(), edit_overrides: EditOverridesSchema.optional(), export_settings: DraftSettings.optional() })
  .meta({ id: 'DraftPatch' });
export type DraftPatchInput = z.infer<typeof DraftPatch>;

export const DraftsQuery = z.object({
  analysis_run_id: z.uuid().optional().describe("Only this run's drafts and the drafts saved before any analysis."),
});
export const DraftUuidParams = z.object({ draft_uuid: z.uuid() });

export const DraftRead = z
  .object({
    uuid: z.uuid(),
    name: z.string(),
    edit_overrides: EditOverridesSchema,
    export_settings: DraftSettings,
    analysis_run_id: z.uuid().nullable().describe("The project's active run when the draft was saved; null before the first analysis."),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Draft' });

export function draftRead(draft: DraftRow): z.infer<typeof DraftRead> {
  return {
    uuid: draft.id,
    name: draft.name,
    edit_overrides: draft.editOverrides,
    export_settings: draft.exportSettings,
    analysis_run_id: draft.runId ?? null,
    created_at: draft.createdAt.toISOString(),
    updated_at: draft.updatedAt.toISOString(),
  };
}
