import { defineEntity, p } from '@mikro-orm/core';
import type { StoredPause } from '../../../crds/contract/editing/kept-pause.ts';
import { Project } from '../projects/entities.ts';

/**
 * A shortened pause (issue 39): the pause a silence edit lies in and what of it stays (the
 * contract's StoredPause). While kept_ms is set, start_ms/end_ms are what removedRange makes
 * of it; null kept_ms: the edit's range was set by hand and stands.
 */
export type EditPause = StoredPause;

/**
 * An edit of a project's timeline (times are timeline ms): AI-detected ones (`silence`,
 * `false_start`, `filler`) belong to the run that found them; manual and asset edits are
 * the user's and belong to the project (run-less), whichever run is active. Lists show
 * the active run's and the run-less ones. The asset columns are null on other edits.
 */
export const Edit = defineEntity({
  name: 'Edit',
  tableName: 'edits',
  properties: {
    id: p.uuid().primary(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    runId: p.uuid().nullable().index(),
    type: p.string().length(32),
    startMs: p.integer(),
    endMs: p.integer(),
    active: p.boolean().default(true),
    reason: p.text().default(''),
    /** How sure an AI edit is, 0–1 (beyond the spec); null on manual and asset edits and on edits of older runs. */
    confidence: p.float().nullable(),
    /** A shortened pause: the pause and what of it stays (EditPause); null on every other edit and on pauses of older runs. */
    pause: p.json<EditPause>().nullable(),
    mediaItemId: p.uuid().nullable(),
    visualMode: p.string().length(16).nullable(),
    audioMode: p.string().length(16).nullable(),
    overlayPosition: p.string().length(16).nullable(),
    overlaySizePercent: p.smallint().nullable(),
    overlayOpacityPercent: p.smallint().nullable(),
    /** Fractions of the frame (0.5 = middle), used by a `custom` position. */
    overlayX: p.float().nullable(),
    overlayY: p.float().nullable(),
    overlayFlipH: p.boolean().nullable(),
    overlayFlipV: p.boolean().nullable(),
    overlayRotationDeg: p.smallint().nullable(),
    audioVolumePercent: p.smallint().nullable(),
    audioDuckMain: p.boolean().nullable(),
    /** Where in the asset playing starts. */
    assetOffsetMs: p.integer().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  indexes: [{ properties: ['project', 'runId', 'startMs'] }],
});

export type EditRow = InstanceType<typeof Edit.class>;
