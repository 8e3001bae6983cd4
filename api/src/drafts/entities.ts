import { defineEntity, p } from '@mikro-orm/core';
import { Project } from '../projects/entities.ts';
import type { PlayedOverrides } from '../editing/played-edits.ts';

/**
 * A saved state of a project's edit: overrides of its edits and the export settings, made on
 * the project's active run (`runId`, null before the first analysis; a plain uuid like
 * `edits.run_id`). Drafts go with their project.
 */
/** DraftSettings as stored: only the keys the caller sent (schemas.ts validates them at the edge). */
export interface StoredDraftSettings {
  platform?: string;
  resolution?: '720p' | '1080p';
  aspect_ratio?: '16:9' | '9:16' | '1:1';
  crop_enabled?: boolean;
  crop_zoom?: number;
  crop_pan_x?: number;
  crop_pan_y?: number;
}

export const Draft = defineEntity({
  name: 'Draft',
  tableName: 'drafts',
  properties: {
    id: p.uuid().primary(),
    project: () => p.manyToOne(Project).deleteRule('cascade'),
    runId: p.uuid().nullable(),
    name: p.string().length(200),
    /** Edit uuid → what it changes, a shortened pause's kept_ms and keep_breath among them (editsAsPlayed reads them). */
    editOverrides: p.json<PlayedOverrides>(),
    exportSettings: p.json<StoredDraftSettings>(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  // Lists are one project's, newest first.
  indexes: [{ properties: ['project', 'createdAt'] }],
});

export type DraftRow = InstanceType<typeof Draft.class>;
