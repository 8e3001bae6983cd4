import { defineEntity, p } from '@mikro-orm/core';

export const jobStatuses = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatusValue = (typeof jobStatuses)[number];

/**
 * One row per job, whichever backend runs it. `completedAt` marks that the completion
 * handler ran: it is set in the handler's own transaction, so a job completes once
 * across retries, api restarts and operator failovers.
 */
export const Job = defineEntity({
  name: 'Job',
  tableName: 'jobs',
  properties: {
    id: p.uuid().primary(),
    kind: p.string().length(32),
    program: p.string().length(63),
    userId: p.uuid().index(),
    projectId: p.uuid().nullable(),
    mediaFileId: p.uuid().nullable().index(),
    input: p.json<Record<string, unknown>>(),
    outputPrefix: p.string().length(1024),
    status: p.enum([...jobStatuses]).default('queued'),
    progress: p.smallint().default(0),
    step: p.string().length(256).nullable(),
    error: p.text().nullable(),
    result: p.json<Record<string, unknown>>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
  },
});

export type JobRow = InstanceType<typeof Job.class>;
