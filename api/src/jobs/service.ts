import type { EntityManager } from '@mikro-orm/postgresql';
import type { BillingService } from '../billing/billing-service.ts';
import type { JobCompletion } from './completion.ts';
import type { JobDispatcher } from './dispatcher.ts';
import { Job, type JobRow } from './entities.ts';
import type { JobOutbox } from './outbox.ts';
import type { JobKind } from '../../../crds/contract/resources.ts';
import { jobSystemFailures } from '../../../crds/contract/outcome.ts';
import { jobCreditReference, recordJob, type JobRequest } from './requests.ts';

export type { JobRequest } from './requests.ts';

export interface JobServiceDeps {
  dispatcher: JobDispatcher;
  completion: JobCompletion;
  outbox: JobOutbox;
  billing: BillingService;
  defaultTimeoutSeconds: number;
}

/**
 * Jobs as an outbox: `submit` writes the row (and its credit reservation) with the
 * caller's own change, in the caller's transaction when there is one; the outbox hands
 * it to the backend after the commit, and again after a crash or an outage.
 */
export class JobService {
  readonly #d: JobServiceDeps;

  constructor(deps: JobServiceDeps) {
    this.#d = deps;
  }

  get outbox(): JobOutbox {
    return this.#d.outbox;
  }

  /**
   * Records a job. Inside a transaction nothing runs until it commits; outside one the row
   * is committed here. A reservation the balance cannot cover throws (402) and records nothing.
   */
  async submit(em: EntityManager, request: JobRequest): Promise<JobRow> {
    const write = async (tx: EntityManager) => {
      const job = recordJob(tx, this.#d.dispatcher.backend, this.#d.defaultTimeoutSeconds, request);
      await tx.flush();
      if (request.creditMinutes !== undefined) {
        await this.#d.billing.reserveCredits(tx, request.userId, { minutes: request.creditMinutes, reference: jobCreditReference(job.id) });
      }
      await this.#d.outbox.announce(tx);
      return job;
    };
    const job = em.isInTransaction() ? await write(em) : await em.transactional(write);
    if (!em.isInTransaction()) this.#d.outbox.kick();
    return job;
  }

  /**
   * Account deletion, inside its transaction: the user's unsettled jobs are stopped after
   * the commit (the local runner ends their processes, the cluster's resources
   * are deleted), so no render or analysis of a deleted account keeps a slot. The job rows go
   * with the account (the media step); a stopped job's completion finds nothing to settle.
   */
  async cancelAccountJobs(tx: EntityManager, userId: string): Promise<() => Promise<void>> {
    const running = await tx.execute<{ id: string; kind: string; program: string }[]>(
      // every unsettled one, locked: a row the outbox is handing over right now is waited for, then stopped too
      `select id, kind, program from jobs where user_id = ? and completed_at is null for update`,
      [userId],
    );
    return async () => {
      for (const job of running) await this.#d.dispatcher.cancel({ jobId: job.id, kind: job.kind as JobKind, program: job.program });
    };
  }

  /**
   * Cancels a job that has not ended; it settles as failed (`job.cancelled`). A job the
   * backend never received is settled here; one it has is stopped there.
   */
  async cancel(em: EntityManager, jobId: string): Promise<void> {
    const job = await em.fork().findOne(Job, jobId, { refresh: true });
    if (!job || job.completedAt) return;
    if (!job.dispatchedAt) {
      const settled = await this.#d.completion.complete(jobId, { ok: false, error: 'The job was cancelled.', code: jobSystemFailures.cancelled }, { onlyUndispatched: true });
      if (settled) return;
    }
    await this.#d.dispatcher.cancel({ jobId, kind: job.kind as JobKind, program: job.program });
  }
}
