import { defineEntity, p } from '@mikro-orm/core';

export const projectStatuses = ['created', 'analyzing', 'analyzed', 'failed'] as const;
export type ProjectStatus = (typeof projectStatuses)[number];

/** A user's editing project: its media spine (canvases), analysis runs, drafts and exports. */
export const Project = defineEntity({
  name: 'Project',
  tableName: 'projects',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().index(),
    name: p.string().length(200),
    status: p.enum([...projectStatuses]).default('created'),
    settings: p.json<Record<string, unknown>>().onCreate(() => ({})),
    transcript: p.json<Record<string, unknown>>().nullable(),
    activeRunId: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  indexes: [{ properties: ['userId', 'createdAt'] }],
});

export type ProjectRow = InstanceType<typeof Project.class>;
