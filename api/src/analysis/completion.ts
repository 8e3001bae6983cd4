import { randomUUID } from 'node:crypto';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { aiEditsSchema, transcriptSchema, type AiEdit, type Transcript } from '../../../crds/contract/programs/analyze.ts';
import { Edit } from '../edits/entities.ts';
import { failureText } from '../i18n/job-texts.ts';
import { negotiateLocale } from '../i18n/locales.ts';
import { InvalidResult, type CompletionHandler, type JobFailed } from '../jobs/completion.ts';
import { requiredSubject } from '../jobs/subjects.ts';
import type { JobRow } from '../jobs/entities.ts';
import { Project } from '../projects/entities.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import { isNotFound } from '../../../crds/contract/s3-client.ts';
import type { ProgressPolicy } from '../events/progress-relay.ts';
import type { StreamEvent } from '../events/catalog.ts';
import { AnalysisRun } from './entities.ts';

/** The project-stream events of an analysis (declared in events/catalog.ts); each names its run (analysis_run_id). */
type AnalysisEvent = StreamEvent<'analysis_progress' | 'analysis_complete' | 'analysis_failed'>;

/**
 * `analyze` progress on the project stream: every step change, and within a step at most
 * one event per 250 ms (the program already reports whole percents, never backwards).
 */
export const analysisProgress: ProgressPolicy = {
  kind: 'throttled',
  minIntervalMs: 250,
  event: (job, { step, progress }): AnalysisEvent => ({
    type: 'analysis_progress',
    data: { project_uuid: job.projectId, analysis_run_id: job.subjectId ?? null, step, progress },
  }),
};

export interface AnalysisCompletionDeps {
  storage: ObjectStorage;
  logger: Logger;
}

interface Loaded {
  transcript: Transcript;
  edits: AiEdit[];
}

/**
 * Settles `analyze` jobs. Started: the run is `running`. Success: the run completes with its transcript, counts and AI
 * edits, becomes the project's active run, and the project is `analyzed` (the credits are
 * deducted by the job's own settlement, in the same transaction). Failure: the run and the
 * project are `failed` with a stable code, the credits released; `analysis_failed` is
 * written in the owner's language. The result's objects are read before the transaction.
 */
export function analysisCompletion(deps: AnalysisCompletionDeps): CompletionHandler<'analyze', Loaded> {
  return {
    // the run reads `running` while its job runs (queued until the backend starts it)
    async started(em, job) {
      await em.nativeUpdate(AnalysisRun, { id: requiredSubject(job), status: 'queued' }, { status: 'running' });
    },

    async load(_job, result) {
      const [transcript, edits] = await Promise.all([readObject(deps.storage, result.transcript_key), readObject(deps.storage, result.edits_key)]);
      const t = transcriptSchema.safeParse(transcript);
      const e = aiEditsSchema.safeParse(edits);
      if (!t.success || !e.success) throw new InvalidResult('The analysis wrote a transcript or edits that could not be read.');
      return { transcript: t.data, edits: e.data };
    },

    async succeeded(em, job, result, loaded) {
      const { runId, projectId } = identify(job);
      const project = await em.findOne(Project, projectId, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const run = await em.findOne(AnalysisRun, runId);
      if (!project || !run) return; // the project was deleted meanwhile: nothing to record
      const { transcript, edits } = loaded;
      for (const edit of edits) {
        em.create(Edit, { id: randomUUID(), project, runId, type: edit.type, startMs: edit.start_ms, endMs: edit.end_ms, active: edit.active, reason: edit.reason, confidence: edit.confidence ?? null, pause: edit.pause ? { ...edit.pause, keep_breath: false } : null });
      }
      em.assign(run, {
        status: 'completed',
        transcript: transcript as unknown as Record<string, unknown>,
        durationMs: result.audio_ms,
        editCount: edits.length,
        silenceCount: result.counts.silence,
        falseStartCount: result.counts.false_start,
        fillerCount: result.counts.filler,
        creditsCharged: run.creditsReserved,
        cost: { ai_minutes: run.creditsReserved, audio_ms: result.audio_ms, words: result.word_count },
        weakEvidence: result.weak_evidence,
        completedAt: new Date(),
      });
      em.assign(project, { status: 'analyzed', activeRunId: runId, transcript: transcript as unknown as Record<string, unknown> });
      await em.flush();
      return { events: [{ to: 'project', projectId, event: { type: 'analysis_complete', data: { project_uuid: projectId, analysis_run_id: runId, edit_count: edits.length } } satisfies AnalysisEvent }] };
    },

    failed: (em, job, failure) => fail(em, job, failure, deps),
  };
}

function identify(job: JobRow): { runId: string; projectId: string } {
  return { runId: requiredSubject(job), projectId: job.projectId! };
}

/** A named object of the result; a missing or unparseable one is an invalid result, a store outage is thrown (retried). */
async function readObject(storage: ObjectStorage, key: string): Promise<unknown> {
  try {
    return await storage.readJson<unknown>(key);
  } catch (error) {
    if (isNotFound(error) || error instanceof SyntaxError) throw new InvalidResult(`The analysis result names ${key}, which could not be read.`);
    throw error;
  }
}

async function fail(em: EntityManager, job: JobRow, failure: JobFailed, deps: AnalysisCompletionDeps) {
  const { runId, projectId } = identify(job);
  const project = await em.findOne(Project, projectId, { lockMode: LockMode.PESSIMISTIC_WRITE });
  const run = await em.findOne(AnalysisRun, runId);
  if (!project || !run) return;
  em.assign(run, {
    status: 'failed',
    error: failure.error,
    errorCode: failure.code ?? null,
    errorParams: failure.code ? (failure.params ?? null) : null,
    completedAt: new Date(),
  });
  project.status = 'failed';
  await em.flush();
  const [owner] = await em.getConnection().execute<{ locale: string }[]>(`select locale from users where id = ?`, [job.userId], 'all', em.getTransactionContext());
  const error = failureText(negotiateLocale(owner?.locale), failure.code, failure.params, failure.error);
  deps.logger.info({ job_id: job.id, run_id: runId, code: failure.code }, 'analysis failed');
  return { events: [{ to: 'project' as const, projectId, event: { type: 'analysis_failed', data: { project_uuid: projectId, analysis_run_id: runId, error } } satisfies AnalysisEvent }] };
}
