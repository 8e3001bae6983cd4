import { z } from 'zod';
import { issueKey } from '../i18n/index.ts';
import { captionStyles } from '../../../crds/contract/programs/render.ts';
import { hexColor } from '../shared/colors.ts';
import { captionPositions, censorshipModes, previewFormats, type AnalysisPresetRow, type PreviewPresetRow } from './entities.ts';

/** ISO 639-1: two lowercase letters, as analyze takes it. */
const isoLanguage = z.string().regex(/^[a-z]{2}$/, issueKey('validation.iso_639_1'));
const name = z.string().trim().min(1).max(200);
const stamps = { uuid: z.uuid(), created_at: z.iso.datetime(), updated_at: z.iso.datetime() };

export const PresetParams = z.object({ preset_uuid: z.uuid() });

const analysisFields = {
  name,
  pacing_level: z.int().min(0).max(100),
  false_start_sensitivity: z.int().min(0).max(100),
  language: isoLanguage.nullable().describe('null: detect the language.'),
  audio_clean: z.boolean(),
  censorship_mode: z.enum(censorshipModes).describe("The export's audio_censorship values."),
  director_notes: z.string().max(4000),
  is_default: z.boolean().describe('At most one preset per user is the default: setting it clears the others.'),
};

export const AnalysisPresetRead = z.object({ ...analysisFields, ...stamps }).meta({ id: 'AnalysisPreset' });
export const AnalysisPresetCreate = z
  .strictObject({ ...analysisFields, director_notes: analysisFields.director_notes.default(''), is_default: analysisFields.is_default.default(false) })
  .meta({ id: 'AnalysisPresetCreate' });
export const AnalysisPresetPatch = z.strictObject(analysisFields).partial().meta({ id: 'AnalysisPresetPatch' });

const previewFields = {
  name,
  format: z.enum(previewFormats).describe("One of the export's aspect ratios."),
  background: hexColor,
  caption_style: z.enum(captionStyles).describe('One of the styles exports render (export_settings.captions.style).'),
  caption_font: z.string().trim().min(1).max(100),
  caption_size: z.int().min(8).max(200),
  caption_position: z.enum(captionPositions),
  caption_color: hexColor,
  caption_length: z
    .int()
    .min(2)
    .max(20)
    .describe('Most words per caption line, the max_words of caption-lines/generate (guidance: 3-5 for 9:16, 7-10 for 16:9).'),
  video_flip_h: z.boolean(),
  video_flip_v: z.boolean(),
};

export const PreviewPresetRead = z.object({ ...previewFields, ...stamps }).meta({ id: 'PreviewPreset' });
export const PreviewPresetCreate = z
  .strictObject({ ...previewFields, video_flip_h: previewFields.video_flip_h.default(false), video_flip_v: previewFields.video_flip_v.default(false) })
  .meta({ id: 'PreviewPresetCreate' });
export const PreviewPresetPatch = z.strictObject(previewFields).partial().meta({ id: 'PreviewPresetPatch' });

type AnalysisBody = z.infer<typeof AnalysisPresetPatch>;
type PreviewBody = z.infer<typeof PreviewPresetPatch>;

/** The row properties a request names (absent fields stay as they are). */
export function analysisProperties(body: AnalysisBody): Partial<AnalysisPresetRow> {
  return definedOnly({
    name: body.name,
    pacingLevel: body.pacing_level,
    falseStartSensitivity: body.false_start_sensitivity,
    language: body.language,
    audioClean: body.audio_clean,
    censorshipMode: body.censorship_mode,
    directorNotes: body.director_notes,
    isDefault: body.is_default,
  });
}

export function previewProperties(body: PreviewBody): Partial<PreviewPresetRow> {
  return definedOnly({
    name: body.name,
    format: body.format,
    background: body.background,
    captionStyle: body.caption_style,
    captionFont: body.caption_font,
    captionSize: body.caption_size,
    captionPosition: body.caption_position,
    captionColor: body.caption_color,
    captionLength: body.caption_length,
    videoFlipH: body.video_flip_h,
    videoFlipV: body.video_flip_v,
  });
}

export function analysisPresetRead(preset: AnalysisPresetRow): z.infer<typeof AnalysisPresetRead> {
  return {
    uuid: preset.id,
    name: preset.name,
    pacing_level: preset.pacingLevel,
    false_start_sensitivity: preset.falseStartSensitivity,
    language: preset.language ?? null,
    audio_clean: preset.audioClean,
    censorship_mode: preset.censorshipMode,
    director_notes: preset.directorNotes,
    is_default: preset.isDefault,
    created_at: preset.createdAt.toISOString(),
    updated_at: preset.updatedAt.toISOString(),
  };
}

export function previewPresetRead(preset: PreviewPresetRow): z.infer<typeof PreviewPresetRead> {
  return {
    uuid: preset.id,
    name: preset.name,
    format: preset.format,
    background: preset.background,
    // stored through the same enum (older rows were mapped to classic by a migration)
    caption_style: captionStyles.find((style) => style === preset.captionStyle) ?? 'classic',
    caption_font: preset.captionFont,
    caption_size: preset.captionSize,
    caption_position: preset.captionPosition,
    caption_color: preset.captionColor,
    caption_length: preset.captionLength,
    video_flip_h: preset.videoFlipH,
    video_flip_v: preset.videoFlipV,
    created_at: preset.createdAt.toISOString(),
    updated_at: preset.updatedAt.toISOString(),
  };
}

/** Drops the keys a PATCH left out, so assigning the rest changes only what was sent. */
function definedOnly<T extends object>(properties: T): Partial<T> {
  return Object.fromEntries(Object.entries(properties).filter(([, value]) => value !== undefined)) as Partial<T>;
}
