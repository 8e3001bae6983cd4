import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { JobCompletion } from './completion.ts';
import { Job, type JobRow } from './entities.ts';
import type { JobKind } from '../../../crds/schema.ts';
import { jobPrograms, type JobDispatcher, type JobProgram } from './programs.ts';

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
    try {
      await this.#dispatcher.dispatch({
        kind: jobPrograms[request.program].kind,
        spec: {
          jobId: id,
          program: request.program,
          userId: request.userId,
          ...(request.projectId ? { projectId: request.projectId } : {}),
          ...(request.mediaFileId ? { mediaFileId: request.mediaFileId } : {}),
          input: request.input,
          outputPrefix: job.outputPrefix,
          ...(request.timeoutSeconds ? { timeoutSeconds: request.timeoutSeconds } : {}),
        },
      });
    } catch (error) {
      this.#logger.error({ err: error, job_id: id }, 'the job backend refused the job');
      await this.#completion.complete(id, { ok: false, error: 'The job could not be started; try again later.' });
    }
    return job;
  }

  /** Cancels a job that has not ended; its completion handler then settles it as failed. */
  async cancel(em: EntityManager, jobId: string): Promise<void> {
    const job = await em.findOne(Job, jobId);
    if (!job || job.completedAt) return;
    await this.#dispatcher.cancel({ jobId, kind: job.kind as JobKind, program: job.program });
  }
}
