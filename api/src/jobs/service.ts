import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { z } from 'zod';
import type { analyzeInputSchema } from '../../../crds/contract/programs/analyze.ts';
import type { artifactInputSchema } from '../../../crds/contract/programs/artifact.ts';
import type { mediaEditInputSchema } from '../../../crds/contract/programs/media-edit.ts';
import type { mediaImportInputSchema } from '../../../crds/contract/programs/media-import.ts';
import type { proxyInputSchema } from '../../../crds/contract/programs/proxy.ts';
import type { renderInputSchema } from '../../../crds/contract/programs/render.ts';
import { jobPrograms, type RequestableProgram } from '../../../crds/contract/programs.ts';
import type { BillingService } from '../billing/billing-service.ts';
import type { JobCompletion } from './completion.ts';
import type { JobDispatcher } from './dispatcher.ts';
import { Job, type JobRow } from './entities.ts';
import type { JobOutbox } from './outbox.ts';
import type { JobKind } from '../../../crds/contract/resources.ts';
import { jobSystemFailures } from '../../../crds/contract/outcome.ts';

/**
 * What the api writes as each requestable program's input: the program parses it with
 * the same contract schema (crds/), so an input it would refuse does not compile here.
 */
interface ProgramInputs {
  artifact: z.input<typeof artifactInputSchema>;
  proxy: z.input<typeof proxyInputSchema>;
  'media-edit': z.input<typeof mediaEditInputSchema>;
  'media-import': z.input<typeof mediaImportInputSchema>;
  analyze: z.input<typeof analyzeInputSchema>;
  render: z.input<typeof renderInputSchema>;
}

/** The input of program `P` (a program missing from ProgramInputs fails to compile here). */
export type InputOf<P extends RequestableProgram> = ProgramInputs[P];

/** A program and its input, for each requestable program: the pair the api may request. */
export type ProgramRequest = { [P in RequestableProgram]: { program: P; input: InputOf<P> } }[RequestableProgram];

interface JobRequestFields {
  userId: string;
  projectId?: string;
  mediaFileId?: string;
  /** Overrides JOB_TIMEOUT_SECONDS for this job. */
  timeoutSeconds?: number;
  /** AI minutes to hold for the job: reserved with the row, deducted on success, released otherwise. */
  creditMinutes?: number;
  /** Not handed to a backend before this media file is settled (`releaseWaitingJobs`): its bytes are not where the job reads yet. */
  waitsForFileId?: string;
}

export type JobRequest = JobRequestFields & ProgramRequest;

/**
 * A job a completion asks for next (Settlement.followUps): the finished job's user unless
 * it names another, no credits. Program and input stay paired (`Omit` over the union would
 * not keep them so).
 */
export type FollowUpRequest = Omit<JobRequestFields, 'userId' | 'creditMinutes'> & { userId?: string } & ProgramRequest;

export interface JobServiceDeps {
  dispatcher: JobDispatcher;
  completion: JobCompletion;
  outbox: JobOutbox;
  billing: BillingService;
  defaultTimeoutSeconds: number;
}

/** The ledger reference of a job's reservation. */
export const jobCreditReference = (jobId: string) => `job:${jobId}`;

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

/** The row of a new job, in `em`'s unit of work (also used for the follow-ups a completion asks for). */
export function recordJob(em: EntityManager, backend: string, defaultTimeoutSeconds: number, request: JobRequest): JobRow {
  const id = randomUUID();
  return em.create(Job, {
    id,
    kind: jobPrograms[request.program].kind,
    program: request.program,
    userId: request.userId,
    projectId: request.projectId ?? null,
    mediaFileId: request.mediaFileId ?? null,
    input: request.input,
    outputPrefix: `jobs/${request.program}/${id}`,
    status: 'queued',
    backend,
    timeoutSeconds: request.timeoutSeconds ?? defaultTimeoutSeconds,
    creditMinutes: request.creditMinutes ?? null,
    waitsForFileId: request.waitsForFileId ?? null,
  });
}

/**
 * Lets the jobs waiting for a media file go, in the settling transaction, with what their
 * input could not know before (where the file's bytes are now, its duration). A file that
 * failed or went releases them too: they fail on their own, with the program's message.
 */
export async function releaseWaitingJobs(em: EntityManager, fileId: string, inputPatch: Record<string, unknown> = {}): Promise<void> {
  await em.execute(`update jobs set waits_for_file_id = null, input = input || ?::jsonb where waits_for_file_id = ? and completed_at is null`, [JSON.stringify(inputPatch), fileId]);
}
