import { defineEntity, p } from '@mikro-orm/core';
import { Project } from '../projects/entities.ts';
import type { EditOverrides } from '../timeline/timeline.ts';

/** queued (job written) → rendering (the backend started it) → completed | failed; completed → expired (the sweep). */
export const exportStatuses = ['queued', 'rendering', 'completed', 'failed', 'expired'] as const;

/** ExportSettings as resolved at creation (defaults filled, a draft's values merged): what was rendered. */
export interface StoredExportSettings {
  resolution: '720p' | '1080p';
  aspect_ratio: '16:9' | '9:16' | '1:1';
  letterbox_background: string;
  audio_censorship: 'none' | 'mute' | 'bleep';
  video_flip_h: boolean;
  video_flip_v: boolean;
  audio: { normalize: boolean; target_lufs: number; noise_reduction: boolean; noise_floor: number; main_volume_percent: number };
  captions: { enabled: boolean; style: string; font_size: number };
  edit_overrides: EditOverrides;
  crop?: { zoom: number; pan_x: number; pan_y: number } | null;
  /** Shortened pauses' cuts slid onto the sources' keyframes (issue 42 item 1); absent on exports made before the setting: they were not. */
  snap_cuts_to_keyframes?: boolean;
}

/**
 * One render of a project. `expiresAt` and `watermarkRequired` are decided by the tier at
 * creation and never recomputed (api.md "Export"); the output object lives under the
 * render job's prefix until the sweep removes it at `expiresAt`.
 */
export const Export = defineEntity({
  name: 'Export',
  tableName: 'exports',
  properties: {
    id: p.uuid().primary(),
    project: () => p.manyToOne(Project).deleteRule('cascade'),
    userId: p.uuid().index(),
    /** The draft it was made from; the settings were copied, so a deleted draft leaves it intact. */
    draftId: p.uuid().nullable(),
    name: p.string().length(200),
    exportSettings: p.json<StoredExportSettings>(),
    status: p.enum([...exportStatuses]).default('queued'),
    expiresAt: p.datetime(),
    watermarkRequired: p.boolean(),
    filename: p.string().length(255),
    jobId: p.uuid().nullable(),
    storageKey: p.string().length(1024).nullable(),
    sizeBytes: p.bigint('number').nullable(),
    durationMs: p.integer().nullable(),
    /** smart (whole GOPs copied) or full; null until rendered. */
    renderPath: p.string().length(16).nullable(),
    error: p.text().nullable(),
    errorCode: p.string().length(64).nullable(),
    errorParams: p.json<Record<string, string | number>>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
    completedAt: p.datetime().nullable(),
  },
  // Lists are one project's, newest first; the sweep looks for completed exports past their date.
  indexes: [{ properties: ['project', 'createdAt'] }, { properties: ['status', 'expiresAt'] }],
});

export type ExportRow = InstanceType<typeof Export.class>;
