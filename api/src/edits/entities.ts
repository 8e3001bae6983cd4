import { defineEntity, p } from '@mikro-orm/core';
import { Project } from '../projects/entities.ts';

/**
 * An edit of a project's timeline (times are timeline ms): AI-detected ones (`silence`,
 * `false_start`, `filler`) belong to the run that found them; manual and asset edits are
 * the user's. Lists show the active run's.
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
    mediaItemId: p.uuid().nullable(),
    visualMode: p.string().length(16).nullable(),
    audioMode: p.string().length(16).nullable(),
    overlay: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  indexes: [{ properties: ['project', 'runId', 'startMs'] }],
});

export type EditRow = InstanceType<typeof Edit.class>;
