import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { Job, type JobRow } from './entities.ts';

/**
 * Why a job failed: the English text (jobs.error, logs, fallback) and, when known, the
 * stable code and params that the catalogs translate (`failure.<code>`, media/failure-messages.ts).
 */
export interface JobFailed {
  error: string;
  code?: string | undefined;
  params?: Record<string, string | number> | undefined;
}

export type JobOutcome = { ok: true; result: Record<string, unknown> } | ({ ok: false } & JobFailed);

/** Work to do once the completion's transaction has committed (publishing events). */
export type AfterCommit = () => Promise<void>;

/**
 * What a feature does when one of its programs ends. Runs inside the transaction that
 * marks the job completed; it may return work to run after the commit.
 */
export interface CompletionHandler {
  succeeded(em: EntityManager, job: JobRow, result: Record<string, unknown>): Promise<AfterCommit | void>;
  failed(em: EntityManager, job: JobRow, failure: JobFailed): Promise<AfterCommit | void>;
}

/**
 * Settles finished jobs exactly once: the row is claimed with
 * `completed_at is null` in the same transaction as the feature's handler, so a
 * second report (operator restart, retry, duplicate watch event) finds nothing to do.
 */
export class JobCompletion {
  readonly #orm: MikroORM;
  readonly #logger: Logger;
  readonly #handlers = new Map<string, CompletionHandler>();

  constructor(orm: MikroORM, logger: Logger) {
    this.#orm = orm;
    this.#logger = logger;
  }

  register(program: string, handler: CompletionHandler): void {
    if (this.#handlers.has(program)) throw new Error(`completion handler for ${program} registered twice`);
    this.#handlers.set(program, handler);
  }

  /** Returns true when this call settled the job, false when it had been settled before. */
  async complete(jobId: string, outcome: JobOutcome): Promise<boolean> {
    let after: AfterCommit | void = undefined;
    const settled = await this.#orm.em.fork().transactional(async (em) => {
      const claimed = await em.getConnection().execute<{ id: string }[]>(
        `update jobs set completed_at = now(), finished_at = coalesce(finished_at, now()), status = ?, result = ?, error = ?,
           progress = case when ? then 100 else progress end
         where id = ? and completed_at is null returning id`,
        [outcome.ok ? 'succeeded' : 'failed', outcome.ok ? JSON.stringify(outcome.result) : null, outcome.ok ? null : outcome.error, outcome.ok, jobId],
        'all',
        em.getTransactionContext(),
      );
      if (claimed.length === 0) return false;
      const job = await em.findOneOrFail(Job, jobId);
      const handler = this.#handlers.get(job.program);
      if (!handler) {
        this.#logger.warn({ job_id: jobId, program: job.program }, 'no completion handler for program');
        return true;
      }
      after = outcome.ok ? await handler.succeeded(em, job, outcome.result) : await handler.failed(em, job, { error: outcome.error, code: outcome.code, params: outcome.params });
      return true;
    });
    if (settled && after) {
      try {
        await (after as AfterCommit)();
      } catch (error) {
        this.#logger.error({ err: error, job_id: jobId }, 'after-commit work of a completed job failed');
      }
    }
    return settled;
  }

  /** Mirrors progress into the row; never moves a completed job. */
  async markProgress(jobId: string, update: { status?: 'running'; progress?: number; step?: string; startedAt?: Date }): Promise<void> {
    const em = this.#orm.em.fork();
    const set: Record<string, unknown> = {};
    if (update.status) set.status = update.status;
    if (update.progress !== undefined) set.progress = Math.round(update.progress);
    if (update.step !== undefined) set.step = update.step;
    if (update.startedAt) set.startedAt = update.startedAt;
    if (Object.keys(set).length === 0) return;
    await em.nativeUpdate(Job, { id: jobId, completedAt: null }, set);
  }
}
