import { z } from 'zod';
import { hexColorRrggbb } from '../shared/colors.ts';
import { captionStyles } from '../../../crds/contract/programs/render.ts';
import { pageQuery, pageSchema } from '../http/pagination.ts';
import { aspectRatios, EditOverridesSchema, resolutions } from '../drafts/schemas.ts';
import { exportStatuses, type ExportRow, type StoredExportSettings } from './entities.ts';

/** The spec's defaults (api.md "export_settings", "export_settings.audio") and ours where it gives none. */
export const EXPORT_DEFAULTS = {
  resolution: '1080p',
  aspect_ratio: '16:9',
  letterbox_background: '#000000',
  audio_censorship: 'none',
  video_flip_h: false,
  video_flip_v: false,
  audio: { normalize: false, target_lufs: -14.0, noise_reduction: false, noise_floor: -25.0, main_volume_percent: 100 },
  captions: { enabled: false, style: 'classic', font_size: 48 },
  snap_cuts_to_keyframes: true,
} as const satisfies Omit<StoredExportSettings, 'edit_overrides' | 'crop'>;

/** The option's words in the document: the export's setting and the timeline's parameter say the same. */
export const SNAP_CUTS_TO_KEYFRAMES_TEXT =
  "Slide each shortened pause's cut, within its pause, onto a keyframe of the source (at most 400 ms, the same kept pause length, each side keeping 100 ms of its quiet, never over a kept breath), so a cut-only export copies that side of the seam; timelines and captions follow. Default true; false keeps the cuts where the pause rule placed them.";


/** Every field optional: what is left out comes from the draft (draft_id), then from the defaults. */
const ExportSettings = z
  .strictObject({
    resolution: z.enum(resolutions).optional().describe('Default 1080p (or the draft\'s).'),
    aspect_ratio: z.enum(aspectRatios).optional().describe('Default 16:9 (or the draft\'s); the picture is letterboxed when its shape differs.'),
    letterbox_background: hexColorRrggbb.optional().describe('#rgb or #rrggbb (kept as lowercase #rrggbb), default #000000.'),
    audio_censorship: z.enum(['none', 'mute', 'bleep']).optional().describe('none (default), mute or bleep the censored words (word lists per language: docs/decisions.md).'),
    video_flip_h: z.boolean().optional().describe('Default false.'),
    video_flip_v: z.boolean().optional().describe('Default false.'),
    audio: z
      .strictObject({
        normalize: z.boolean().optional().describe('Two-pass EBU R128 loudness normalisation; default false.'),
        target_lufs: z.number().min(-70).max(-5).optional().describe('Default -14.0.'),
        noise_reduction: z.boolean().optional().describe('Spectral noise reduction; default false.'),
        noise_floor: z.number().min(-80).max(-20).optional().describe('dB, default -25.0; lower is more aggressive.'),
        main_volume_percent: z.int().min(0).max(100).optional().describe('0–100, default 100; applied before the other audio processing.'),
      })
      .optional(),
    captions: z
      .strictObject({
        enabled: z.boolean().optional().describe('Burn the caption lines in; default false.'),
        style: z.enum(captionStyles).optional().describe('classic (default), bold, boxed, highlight (the spoken word coloured), karaoke (words fill as spoken).'),
        font_size: z.int().min(8).max(200).optional().describe('Pixels at the output height; default 48.'),
      })
      .optional(),
    edit_overrides: EditOverridesSchema.optional().describe('Inline overrides (not with draft_id): checked against the timeline.'),
    snap_cuts_to_keyframes: z.boolean().optional().describe(SNAP_CUTS_TO_KEYFRAMES_TEXT),
  })
  .meta({ id: 'ExportSettings' });

export const ExportCreate = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    draft_id: z.uuid().optional().describe("A saved draft of the project: its overrides, resolution, aspect ratio and crop; export_settings fills the rest and wins where both say."),
    export_settings: ExportSettings.default({}),
  })
  .meta({ id: 'ExportCreate' });
export type ExportCreateInput = z.infer<typeof ExportCreate>;

export const ExportUuidParams = z.object({ export_uuid: z.uuid() });
export const ExportsQuery = z.object(pageQuery);

const ResolvedSettings = z
  .object({
    resolution: z.enum(resolutions),
    aspect_ratio: z.enum(aspectRatios),
    letterbox_background: z.string(),
    audio_censorship: z.enum(['none', 'mute', 'bleep']),
    video_flip_h: z.boolean(),
    video_flip_v: z.boolean(),
    audio: z.object({ normalize: z.boolean(), target_lufs: z.number(), noise_reduction: z.boolean(), noise_floor: z.number(), main_volume_percent: z.int() }),
    captions: z.object({ enabled: z.boolean(), style: z.string(), font_size: z.int() }),
    edit_overrides: EditOverridesSchema,
    crop: z.object({ zoom: z.number(), pan_x: z.number(), pan_y: z.number() }).nullable().optional(),
    snap_cuts_to_keyframes: z.boolean().describe('Whether the cuts were slid onto keyframes (false for exports made before the setting).'),
  })
  .meta({ id: 'ResolvedExportSettings' });

export const ExportRead = z
  .object({
    uuid: z.uuid(),
    name: z.string(),
    draft_id: z.uuid().nullable(),
    export_settings: ResolvedSettings.describe('What is rendered: the request, the draft and the defaults merged.'),
    status: z.enum(exportStatuses).describe('queued → rendering → completed | failed; completed → expired once expires_at passed (the output is deleted).'),
    expires_at: z.iso.datetime().describe("Creation time plus the tier's export retention days, fixed at creation."),
    watermark_required: z.boolean().describe("The inverse of the tier's can_watermark_free at creation, fixed."),
    filename: z.string().describe('The name the download is saved under.'),
    size_bytes: z.int().nullable(),
    duration_ms: z.int().nullable(),
    render_path: z.enum(['smart', 'full']).nullable().describe('smart: a cut-only export whose whole GOPs were copied; full: re-encoded.'),
    error: z.string().nullable().describe("Why it failed, in the caller's language."),
    created_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Export' });
export type ExportReadBody = z.infer<typeof ExportRead>;

export const ExportPage = pageSchema(ExportRead, 'ExportPage');

export const ExportDownload = z
  .object({
    uuid: z.uuid(),
    url: z.string().describe('Presigned GET of the MP4, saved as `filename`.'),
    expires_in: z.int().describe('Seconds the URL works: 3600.'),
    filename: z.string(),
    sidecars: z
      .array(z.object({ format: z.enum(['srt', 'vtt', 'words', 'chapters']), filename: z.string(), path: z.string().describe('GET it with the session: the file in this export\'s output time.') }))
      .describe('The files beside the video, re-timed to this export\'s cut: captions (SRT, WebVTT), the word-level transcript, chapters. They need an analysed project (409 otherwise).'),
  })
  .meta({ id: 'ExportDownload' });

export function exportRead(row: ExportRow, error: string | null): ExportReadBody {
  return {
    uuid: row.id,
    name: row.name,
    draft_id: row.draftId ?? null,
    export_settings: { ...row.exportSettings, crop: row.exportSettings.crop ?? null, snap_cuts_to_keyframes: row.exportSettings.snap_cuts_to_keyframes ?? false },
    status: row.status,
    expires_at: row.expiresAt.toISOString(),
    watermark_required: row.watermarkRequired,
    filename: row.filename,
    size_bytes: row.sizeBytes ?? null,
    duration_ms: row.durationMs ?? null,
    render_path: (row.renderPath ?? null) as ExportReadBody['render_path'],
    error,
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}
