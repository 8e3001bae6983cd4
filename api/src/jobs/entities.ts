import { defineEntity, p } from '@mikro-orm/core';
import type { OutcomeEvent } from '../events/bus.ts';

const jobStatuses = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

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
    /**
     * What the job is for, by program (jobs/subjects.ts): the export a `render` makes, the
     * run an `analyze` fills, the item a `media-edit` with save_mode replace repoints.
     */
    subjectId: p.uuid().nullable().index(),
    input: p.json<Record<string, unknown>>(),
    outputPrefix: p.string().length(1024),
    /** Who runs it: each backend's outbox dispatches only its own rows. */
    backend: p.string().length(16).default('local'),
    timeoutSeconds: p.integer().default(3600),
    /** AI minutes reserved with the job (ledger reference `job:<id>`), settled by its completion. */
    creditMinutes: p.decimal('number').precision(10).scale(1).nullable(),
    /** Set when the backend accepted the job; null rows are the outbox's work. */
    dispatchedAt: p.datetime().nullable(),
    dispatchAttempts: p.integer().default(0),
    nextDispatchAt: p.datetime().nullable(),
    dispatchError: p.text().nullable(),
    /** Held back until this media file is settled (the outbox skips the row while it is set). */
    waitsForFileId: p.uuid().nullable().index(),
    status: p.enum([...jobStatuses]).default('queued'),
    progress: p.smallint().default(0),
    step: p.string().length(256).nullable(),
    /** The program's own estimate of the seconds left, from its last progress report. */
    etaSeconds: p.integer().nullable(),
    error: p.text().nullable(),
    /** The failure's stable code and params (`failure.<code>` in the catalogs), whatever the job was for. */
    errorCode: p.string().length(128).nullable(),
    errorParams: p.json<Record<string, string | number>>().nullable(),
    result: p.json<Record<string, unknown>>().nullable(),
    /** The settlement's events until they are published (JobCompletion.publishPendingOutcomes). */
    outcomeEvents: p.json<OutcomeEvent[]>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
  },
  indexes: [
    // the outbox's work: rows no backend has received yet
    { name: 'jobs_undispatched_index', expression: `create index "jobs_undispatched_index" on "jobs" ("backend", "created_at") where "dispatched_at" is null and "completed_at" is null` },
    // the outbox's per-user rule: a user's jobs handed over and not settled yet
    { name: 'jobs_running_by_user_index', expression: `create index "jobs_running_by_user_index" on "jobs" ("user_id", "kind") where "dispatched_at" is not null and "completed_at" is null` },
    // settled jobs whose events are not published yet
    { name: 'jobs_outcome_events_pending_index', expression: `create index "jobs_outcome_events_pending_index" on "jobs" ("completed_at") where "outcome_events" is not null` },
  ],
});

export type JobRow = InstanceType<typeof Job.class>;
