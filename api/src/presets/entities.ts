import { defineEntity, p } from '@mikro-orm/core';

/** The spec's export values, shared by presets and their requests. */
export const censorshipModes = ['none', 'mute', 'bleep'] as const;
export const previewFormats = ['16:9', '9:16', '1:1'] as const;
export const captionPositions = ['top', 'middle', 'bottom'] as const;

/** Saved analyze settings of a user (at most 5); at most one is the default. */
export const AnalysisPreset = defineEntity({
  name: 'AnalysisPreset',
  tableName: 'analysis_presets',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().index(),
    name: p.string().length(200),
    pacingLevel: p.integer(),
    falseStartSensitivity: p.integer(),
    language: p.string().length(2).nullable(),
    audioClean: p.boolean().default(false),
    censorshipMode: p.enum([...censorshipModes]).default('none'),
    directorNotes: p.text().default(''),
    isDefault: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type AnalysisPresetRow = InstanceType<typeof AnalysisPreset.class>;

/** Saved look of a preview (format, background, captions, flips) of a user. */
export const PreviewPreset = defineEntity({
  name: 'PreviewPreset',
  tableName: 'preview_presets',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().index(),
    name: p.string().length(200),
    format: p.enum([...previewFormats]),
    background: p.string().length(7),
    captionStyle: p.string().length(100),
    captionFont: p.string().length(100),
    captionSize: p.integer(),
    captionPosition: p.enum([...captionPositions]),
    captionColor: p.string().length(7),
    captionLength: p.integer(),
    videoFlipH: p.boolean().default(false),
    videoFlipV: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type PreviewPresetRow = InstanceType<typeof PreviewPreset.class>;
