import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { JobCompletion } from './completion.ts';
import { Job, type JobRow } from './entities.ts';
import type { JobKind } from '../../../crds/schema.ts';
import { isJobProgram, jobPrograms, type DispatchedJob, type JobDispatcher, type JobProgram } from './programs.ts';

const NOT_STARTED = 'The job could not be started; try again later.';

export interface JobRequest {
  program: JobProgram;
  userId: string;
  projectId?: string;
  mediaFileId?: string;
  input: Record<string, unknown>;
  timeoutSeconds?: number;
}

/** Records a job and hands it to the configured backend. */
export class JobService {
  readonly #dispatcher: JobDispatcher;
  readonly #completion: JobCompletion;
  readonly #logger: Logger;

  constructor(dispatcher: JobDispatcher, completion: JobCompletion, logger: Logger) {
    this.#dispatcher = dispatcher;
    this.#completion = completion;
    this.#logger = logger;
  }

  /**
   * Call after the caller's own transaction committed: the program may finish (and its
   * completion handler read the caller's rows) before this returns. A job the backend
   * refuses is completed as failed, so its handler leaves nothing half-done.
   */
  async submit(em: EntityManager, request: JobRequest): Promise<JobRow> {
    const id = randomUUID();
    const job = em.create(Job, {
      id,
      kind: jobPrograms[request.program].kind,
      program: request.program,
      userId: request.userId,
      projectId: request.projectId ?? null,
      mediaFileId: request.mediaFileId ?? null,
      input: request.input,
      outputPrefix: `jobs/${request.program}/${id}`,
      status: 'queued',
    });
    await em.flush();
    await this.#dispatchOrFail(dispatchedFrom(job, request.timeoutSeconds));
    return job;
  }

  /**
   * Local backend only, once at start-up before any request: dispatches again, oldest
   * first, every job a previous process left unfinished (queued jobs dropped by a
   * shutdown, jobs of a crashed process). Outputs overwrite, so a rerun is safe; those
   * beyond the queue limit are completed as failed like any refused job. Assumes this
   * process is the only one running local jobs (one api replica with the local backend).
   */
  async recover(em: EntityManager): Promise<number> {
    const unfinished = await em.find(Job, { completedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    for (const job of unfinished) {
      if (!isJobProgram(job.program)) {
        await this.#completion.complete(job.id, { ok: false, error: NOT_STARTED, code: 'job.not_started' });
        continue;
      }
      // The rerun starts from scratch; the row should not show the dead run's progress.
      await em.nativeUpdate(Job, { id: job.id, completedAt: null }, { status: 'queued', progress: 0, step: null, startedAt: null });
      await this.#dispatchOrFail(dispatchedFrom(job));
    }
    if (unfinished.length > 0) this.#logger.info({ jobs: unfinished.length }, 'unfinished jobs dispatched again');
    return unfinished.length;
  }

  /** A job the backend refuses is completed as failed, so its handler leaves nothing half-done. */
  async #dispatchOrFail(job: DispatchedJob): Promise<void> {
    try {
      await this.#dispatcher.dispatch(job);
    } catch (error) {
      this.#logger.error({ err: error, job_id: job.spec.jobId }, 'the job backend refused the job');
      await this.#completion.complete(job.spec.jobId, { ok: false, error: NOT_STARTED, code: 'job.not_started' });
    }
  }

  /** Cancels a job that has not ended; its completion handler then settles it as failed. */
  async cancel(em: EntityManager, jobId: string): Promise<void> {
    const job = await em.findOne(Job, jobId);
    if (!job || job.completedAt) return;
    await this.#dispatcher.cancel({ jobId, kind: job.kind as JobKind, program: job.program });
  }
}

/** The backend's view of a job, rebuilt from its row (the timeout is not stored: a rerun gets the backend's default). */
function dispatchedFrom(job: JobRow, timeoutSeconds?: number): DispatchedJob {
  const program = job.program as JobProgram;
  return {
    kind: jobPrograms[program].kind,
    spec: {
      jobId: job.id,
      program,
      userId: job.userId,
      ...(job.projectId ? { projectId: job.projectId } : {}),
      ...(job.mediaFileId ? { mediaFileId: job.mediaFileId } : {}),
      input: job.input,
      outputPrefix: job.outputPrefix,
      ...(timeoutSeconds ? { timeoutSeconds } : {}),
    },
  };
}
