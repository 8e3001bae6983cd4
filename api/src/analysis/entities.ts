import { defineEntity, p } from '@mikro-orm/core';
import { Project } from '../projects/entities.ts';

export const analysisRunStatuses = ['queued', 'running', 'completed', 'failed'] as const;

/**
 * One analysis of a project: its settings, the job that ran it, what it cost and what it
 * found. It owns the transcript and (through `edits.run_id`) the AI edits; exactly one run
 * of a project is active (`projects.active_run_id`).
 */
export const AnalysisRun = defineEntity({
  name: 'AnalysisRun',
  tableName: 'analysis_runs',
  properties: {
    id: p.uuid().primary(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    userId: p.uuid().index(),
    status: p.enum([...analysisRunStatuses]).default('queued'),
    pacingLevel: p.smallint(),
    falseStartSensitivity: p.smallint(),
    language: p.string().length(8).nullable(),
    analysisMode: p.string().length(16),
    directorNotes: p.text().nullable(),
    jobId: p.uuid().nullable(),
    /** Minutes reserved at analyze and charged at completion. */
    creditsReserved: p.decimal('number').precision(10).scale(1),
    creditsCharged: p.decimal('number').precision(10).scale(1).nullable(),
    durationMs: p.integer().nullable(),
    editCount: p.integer().default(0),
    silenceCount: p.integer().default(0),
    falseStartCount: p.integer().default(0),
    fillerCount: p.integer().default(0),
    transcript: p.json<Record<string, unknown>>().nullable(),
    cost: p.json<Record<string, unknown>>().nullable(),
    /** Sources whose speech the analysis could not tell from their noise, and why (their pauses offered, not cut). */
    weakEvidence: p.json<{ source_index: number; reason: string }[]>().nullable(),
    error: p.text().nullable(),
    errorCode: p.string().length(64).nullable(),
    errorParams: p.json<Record<string, string | number>>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    completedAt: p.datetime().nullable(),
  },
  indexes: [{ properties: ['project', 'createdAt'] }],
});

export type AnalysisRunRow = InstanceType<typeof AnalysisRun.class>;
