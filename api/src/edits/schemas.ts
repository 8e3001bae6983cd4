import { z } from 'zod';
import type { EditRow } from './entities.ts';

const visualModes = ['overlay', 'replace', 'insert', 'none'] as const;
const audioModes = ['mix', 'replace', 'duck', 'mute'] as const;
const overlayPositions = ['top_left', 'top_right', 'bottom_left', 'bottom_right', 'center', 'custom'] as const;

const timelineMs = z.int().min(0).max(2_147_483_647);
const percent = z.int().min(0).max(100);
const fraction = z.number().min(0).max(1);

/** The fields of an asset edit, each optional (PATCH); the create body adds their defaults. */
const assetFields = {
  media_item_id: z.uuid().describe('The asset: a media item of the caller.'),
  visual_mode: z.enum(visualModes).describe('overlay (picture over the video), replace (instead of the video), insert (extends the timeline), none (audio only).'),
  audio_mode: z.enum(audioModes).describe("mix (with the main audio), replace (instead of it), duck (main audio lowered), mute (the asset's audio off)."),
  overlay_position: z.enum(overlayPositions).describe('custom places the overlay at overlay_x, overlay_y.'),
  overlay_size_percent: percent,
  overlay_opacity_percent: percent,
  overlay_x: fraction.describe('Fraction of the frame width (0.5 = middle).'),
  overlay_y: fraction.describe('Fraction of the frame height (0.5 = middle).'),
  overlay_flip_h: z.boolean(),
  overlay_flip_v: z.boolean(),
  overlay_rotation_deg: z.int().min(-360).max(360),
  audio_volume_percent: percent,
  audio_duck_main: z.boolean(),
  asset_offset_ms: timelineMs.describe("Where in the asset playing starts; below the asset's duration_ms."),
};
export type AssetField = keyof typeof assetFields;
export const assetFieldNames = Object.keys(assetFields) as AssetField[];

const common = {
  start_ms: timelineMs,
  end_ms: timelineMs.describe('Greater than start_ms; within the timeline duration unless an insert.'),
  active: z.boolean().default(true),
  reason: z.string().max(2000).default(''),
};

export const EditCreate = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('manual').describe('A cut the user adds.'), ...common }).meta({ id: 'ManualEditCreate' }),
    z
      .strictObject({
        type: z.literal('asset'),
        ...common,
        media_item_id: assetFields.media_item_id,
        visual_mode: assetFields.visual_mode.default('overlay'),
        audio_mode: assetFields.audio_mode.default('mix'),
        overlay_position: assetFields.overlay_position.default('top_right'),
        overlay_size_percent: assetFields.overlay_size_percent.default(30),
        overlay_opacity_percent: assetFields.overlay_opacity_percent.default(100),
        overlay_x: assetFields.overlay_x.default(0.5),
        overlay_y: assetFields.overlay_y.default(0.5),
        overlay_flip_h: assetFields.overlay_flip_h.default(false),
        overlay_flip_v: assetFields.overlay_flip_v.default(false),
        overlay_rotation_deg: assetFields.overlay_rotation_deg.default(0),
        audio_volume_percent: assetFields.audio_volume_percent.default(100),
        audio_duck_main: assetFields.audio_duck_main.default(false),
        asset_offset_ms: assetFields.asset_offset_ms.default(0),
      })
      .meta({ id: 'AssetEditCreate' }),
  ])
  .meta({ id: 'EditCreate' });
export type EditCreateInput = z.infer<typeof EditCreate>;

/** What a person may change of a shortened pause (issue 39): how much of it stays, and its breath. */
export const pauseFields = {
  kept_ms: z
    .int()
    .min(100)
    .max(60_000)
    .describe(
      'Beyond the spec, a shortened pause only (an edit with `pause`): how much of the pause stays in the output, ms, split as `pause.kept_split` says; start_ms and end_ms move to what is then removed. Less than the pause lasts (else 422). Under about 200 ms a soft word onset may be clipped; the analysis keeps 250–700 ms.',
    ),
  keep_breath: z.boolean().describe('Beyond the spec, a shortened pause only: keep the breath the pause holds (`pause.breath`); the removed range then stops 30 ms short of it, on the side of it that removes more.'),
};
export type PauseField = keyof typeof pauseFields;

export const EditPatch = z
  .strictObject({ active: z.boolean().optional(), start_ms: timelineMs.optional(), end_ms: timelineMs.optional(), ...z.object(assetFields).partial().shape, ...z.object(pauseFields).partial().shape })
  .meta({ id: 'EditPatch' });
export type EditPatchInput = z.infer<typeof EditPatch>;

export const EditsQuery = z.object({
  active_only: z.enum(['true', 'false']).default('false').transform((value) => value === 'true'),
});
export const EditUuidParams = z.object({ edit_uuid: z.uuid() });

export const EditRead = z
  .object({
    uuid: z.uuid(),
    type: z.string().describe('manual, asset, or an AI-detected kind: silence, false_start, filler.'),
    start_ms: z.int(),
    end_ms: z.int(),
    active: z.boolean(),
    reason: z.string().describe('Why, for a person: "Pause of 2.3 s", \'False start, restarted: "so today I want to talk about", said again as "so today I want to show you" (its first words said again)\' (a false start quotes the take, its restart and the rule that matched); an AI edit on weak evidence (confidence under 0.3, or a take that says a word otherwise) is offered inactive, its reason ending "(offered, not cut: …)"; empty or the user\'s own on manual and asset edits.'),
    confidence: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .describe(
        'Beyond the spec: how sure an AI edit is, 0–1, from its evidence (a pause: how far speech stands over the noise floor; a false start: how much the take resembles its restart, in its words and, where the recording\'s sound is known, in its sound, times the recognizer\'s confidence; a filler: the recognizer\'s confidence). Null on manual and asset edits and on edits of runs made before it.',
      ),
    pause: z
      .object({
        start_ms: z.int().describe('Where the pause begins: the speech before it ends (the detector heard silence and the recognizer no word from here).'),
        end_ms: z.int().describe('Where the pause ends: the speech after it begins.'),
        kept_ms: z.int().nullable().describe('How much of the pause stays in the output; null once start_ms/end_ms of the edit were set by hand (the edit removes that range as set).'),
        kept_split: z.number().min(0).max(1).describe('The share of kept_ms left after the speech before the pause, the rest before the speech after it: 0.6 after a sentence end, 0.4 within a sentence, 0 at a source\'s start, 1 at its end.'),
        breath: z.object({ start_ms: z.int(), end_ms: z.int() }).nullable().describe('The breath the pause holds (heard as hiss, no word), timeline ms; null when none.'),
        keep_breath: z.boolean().describe('Whether the breath stays (false: it goes with the removed range where it lies in it).'),
      })
      .nullable()
      .describe(
        'Beyond the spec (issue 39): a silence edit shortens its pause rather than deleting it; start_ms/end_ms are what it removes, the middle of `pause` less kept_ms (the analysis keeps 700 ms at pacing_level 0 down to 250 ms at 100). PATCH kept_ms and keep_breath change it; a draft\'s or export\'s edit_overrides may too. Null on every other edit and on pauses of runs made before it.',
      )
      .meta({ id: 'EditPause' }),
    media_item_id: z.uuid().nullable(),
    visual_mode: z.enum(visualModes).nullable(),
    audio_mode: z.enum(audioModes).nullable(),
    overlay_position: z.enum(overlayPositions).nullable(),
    overlay_size_percent: z.int().nullable(),
    overlay_opacity_percent: z.int().nullable(),
    overlay_x: z.number().nullable(),
    overlay_y: z.number().nullable(),
    overlay_flip_h: z.boolean().nullable(),
    overlay_flip_v: z.boolean().nullable(),
    overlay_rotation_deg: z.int().nullable(),
    audio_volume_percent: z.int().nullable(),
    audio_duck_main: z.boolean().nullable(),
    asset_offset_ms: z.int().nullable(),
  })
  .meta({ id: 'Edit' });

export function editRead(edit: EditRow): z.infer<typeof EditRead> {
  return {
    uuid: edit.id,
    type: edit.type,
    start_ms: edit.startMs,
    end_ms: edit.endMs,
    active: edit.active,
    reason: edit.reason,
    confidence: edit.confidence ?? null,
    pause: edit.pause ?? null,
    media_item_id: edit.mediaItemId ?? null,
    visual_mode: (edit.visualMode ?? null) as z.infer<typeof EditRead>['visual_mode'],
    audio_mode: (edit.audioMode ?? null) as z.infer<typeof EditRead>['audio_mode'],
    overlay_position: (edit.overlayPosition ?? null) as z.infer<typeof EditRead>['overlay_position'],
    overlay_size_percent: edit.overlaySizePercent ?? null,
    overlay_opacity_percent: edit.overlayOpacityPercent ?? null,
    overlay_x: edit.overlayX ?? null,
    overlay_y: edit.overlayY ?? null,
    overlay_flip_h: edit.overlayFlipH ?? null,
    overlay_flip_v: edit.overlayFlipV ?? null,
    overlay_rotation_deg: edit.overlayRotationDeg ?? null,
    audio_volume_percent: edit.audioVolumePercent ?? null,
    audio_duck_main: edit.audioDuckMain ?? null,
    asset_offset_ms: edit.assetOffsetMs ?? null,
  };
}
