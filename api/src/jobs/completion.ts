import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { z } from 'zod';
import { isProgramName, jobPrograms, type ProgramName, type ResultOf } from '../../../crds/contract/programs.ts';
import { jobSystemFailures } from '../../../crds/contract/outcome.ts';
import type { BillingService } from '../billing/billing-service.ts';
import type { ProgressRelay } from '../events/progress-relay.ts';
import type { WebhookRecorder } from '../events/announcer.ts';
import type { OutcomeEvent } from '../events/bus.ts';
import { Job, type JobRow } from './entities.ts';
import { jobCreditReference, recordJob, type FollowUpRequest } from './requests.ts';
import { isDependencyOutage } from '../ops/dependency-outage.ts';

/** Backoff of after-commit work that met an outage: 0.5 s doubling to 30 s, while the process runs. */
const AFTER_COMMIT_RETRY_BASE_MS = 500;
const AFTER_COMMIT_RETRY_MAX_MS = 30_000;

/**
 * Why a job failed: the English text (jobs.error, logs, fallback) and, when known, the
 * stable code and params that the catalogs translate (`failure.<code>`).
 */
export interface JobFailed {
  error: string;
  code?: string | undefined;
  params?: Record<string, string | number> | undefined;
}

export type JobOutcome = { ok: true; result: Record<string, unknown> } | ({ ok: false } & JobFailed);

/** Work to do once the completion's transaction has committed (deleting objects); events go in `Settlement.events`. */
export type AfterCommit = () => Promise<void>;

/** A job a completion asks for next: the finished job's user unless it names another. */
type FollowUpJob = FollowUpRequest;

/** What a handler asks for besides its own writes: all of it happens with the settlement, or not at all. */
export interface Settlement {
  afterCommit?: AfterCommit;
  /**
   * Events the settlement owes (media_ready, analysis_complete, export_failed…): saved on the
   * job row in the settling transaction and published after the commit and the afterCommit
   * work, each exactly once even when the process dies in between (publishPendingOutcomes).
   */
  events?: OutcomeEvent[];
  /** Jobs to run next, written in the same transaction (the outbox dispatches them). */
  followUps?: FollowUpJob[];
  /** AI minutes the job really used, when less than reserved (default: what was reserved). */
  creditMinutesUsed?: number;
}

/** A handler's answer in one shape (a bare function is the after-commit work). */
export function settlementOf(returned: Settlement | AfterCommit | void): Settlement {
  return typeof returned === 'function' ? { afterCommit: returned } : (returned ?? {});
}

/**
 * What `load` throws when the objects a result names cannot be read as the contract says
 * (a truncated transcript): the job then ends failed (`job.invalid_result`), never charged.
 */
export class InvalidResult extends Error {}

/**
 * What a feature does when program `P` ends. The result arrives parsed by the program's
 * registry schema (a result that does not parse fails the job before any handler runs).
 * `load` runs first, outside any transaction (reading S3 objects the result names);
 * `succeeded` and `failed` run inside the transaction that marks the job completed.
 */
export interface CompletionHandler<P extends ProgramName, Loaded = undefined> {
  /** The backend started the job (once per job, inside the transaction that marks it running). */
  started?(em: EntityManager, job: JobRow): Promise<AfterCommit | void>;
  load?(job: JobRow, result: ResultOf<P>): Promise<Loaded>;
  succeeded(em: EntityManager, job: JobRow, result: ResultOf<P>, loaded: Loaded): Promise<Settlement | AfterCommit | void>;
  failed(em: EntityManager, job: JobRow, failure: JobFailed): Promise<Settlement | AfterCommit | void>;
}

/** Every program's handler, typed by the program's result: a program without one does not compile. */
export type CompletionHandlers = { [P in ProgramName]: CompletionHandler<P, unknown> };

/** What a backend reports of a running job: it started, and how far its program got. */
export interface ProgressUpdate {
  status?: 'running';
  progress?: number;
  step?: string;
  /** The program's own estimate of the seconds left (with `progress`). */
  etaSeconds?: number | null;
  startedAt?: Date;
}

export interface JobCompletionDeps {
  orm: MikroORM;
  logger: Logger;
  billing: BillingService;
  handlers: CompletionHandlers;
  defaultTimeoutSeconds: number;
  /** NOTIFY channel of the job outbox, announcing follow-up jobs at commit. */
  outboxChannel: string;
  /** Turns reported progress into its feature's event on the project stream. */
  progressRelay?: Pick<ProgressRelay, 'relay'>;
  /** Publishes a settled job's events, each once (`key` names it). */
  publisher: { publishOnce(key: string, event: OutcomeEvent): Promise<boolean> };
  /** Records a settled job's events for webhook delivery, in the settling transaction (as the catalog derives them). */
  webhooks?: WebhookRecorder;
}

/** A settled job's events not published this long after its completion are taken to be lost with their process. */
const PENDING_OUTCOME_AGE_MS = 5_000;

export interface CompleteOptions {
  /** Settle only a job no backend has received (a cancel before dispatch). */
  onlyUndispatched?: boolean;
}

/**
 * Settles finished jobs exactly once: the row is claimed with `completed_at is null` in
 * the same transaction as the feature's handler and the credit settlement, so a second
 * report (operator restart, retry, duplicate watch event) finds nothing to do.
 */
export class JobCompletion {
  readonly #d: JobCompletionDeps;

  constructor(deps: JobCompletionDeps) {
    this.#d = deps;
  }

  /** Returns true when this call settled the job, false when it had been settled before. */
  async complete(jobId: string, reported: JobOutcome, options: CompleteOptions = {}): Promise<boolean> {
    const { orm } = this.#d;
    const peek = await orm.em.fork().findOne(Job, jobId);
    if (!peek || peek.completedAt) return false;
    // A row of a program this version does not know (written by another version) settles failed, with no handler to run.
    const handler = isProgramName(peek.program) ? (this.#d.handlers[peek.program] as CompletionHandler<ProgramName, unknown>) : undefined;
    // The result is parsed once, here; S3 reads happen before any row or advisory lock is taken.
    const { outcome, loaded } = handler ? await readResult(peek, reported, handler) : { outcome: unknownProgram(peek.program), loaded: undefined };
    let after: AfterCommit | undefined;
    let events: OutcomeEvent[] = [];
    const settled = await orm.em.fork().transactional(async (em) => {
      const claimed = await em.getConnection().execute<{ id: string }[]>(
        `update jobs set completed_at = now(), finished_at = coalesce(finished_at, now()), status = ?, result = ?, error = ?, error_code = ?, error_params = ?,
           progress = case when ? then 100 else progress end
         where id = ? and completed_at is null ${options.onlyUndispatched ? 'and dispatched_at is null' : ''} returning id`,
        [
          outcome.ok ? 'succeeded' : 'failed',
          outcome.ok ? JSON.stringify(outcome.result) : null,
          outcome.ok ? null : outcome.error,
          outcome.ok ? null : (outcome.code ?? null),
          !outcome.ok && outcome.code && outcome.params ? JSON.stringify(outcome.params) : null,
          outcome.ok,
          jobId,
        ],
        'all',
        em.getTransactionContext(),
      );
      if (claimed.length === 0) return false;
      const job = await em.findOneOrFail(Job, jobId);
      const returned = !handler ? undefined : outcome.ok ? await handler.succeeded(em, job, outcome.result as ResultOf<ProgramName>, loaded) : await handler.failed(em, job, outcome);
      const settlement = settlementOf(returned);
      await this.#settleCredits(em, job, outcome.ok, settlement.creditMinutesUsed);
      for (const followUp of settlement.followUps ?? []) {
        recordJob(em, job.backend, this.#d.defaultTimeoutSeconds, { ...followUp, userId: followUp.userId ?? job.userId });
      }
      if (settlement.followUps?.length) {
        await em.flush();
        await em.execute('select pg_notify(?, ?)', [this.#d.outboxChannel, job.backend]);
      }
      events = settlement.events ?? [];
      if (events.length > 0) await em.nativeUpdate(Job, { id: jobId }, { outcomeEvents: events });
      if (events.length > 0) await this.#d.webhooks?.recordOutcomes(em, events);
      after = settlement.afterCommit;
      return true;
    });
    if (!settled) return false;
    if (after) await this.#afterCommit(jobId, after, 'after-commit work of a completed job');
    // a publish that fails leaves the events on the row: the outbox's next pass sends them (publishPendingOutcomes)
    if (events.length > 0) await this.#publish(jobId, events).catch((error: unknown) => this.#d.logger.warn({ err: error, job_id: jobId }, 'publishing the events of a completed job failed; the outbox sends them'));
    return true;
  }

  /** Jobs of a backend handed over, never settled, and started longer ago than their timeout plus `marginSeconds`. */
  async overdueJobs(backend: string, marginSeconds: number): Promise<{ id: string; timeoutSeconds: number }[]> {
    const rows = await this.#d.orm.em.fork().getConnection().execute<{ id: string; timeout_seconds: number }[]>(
      `select id, timeout_seconds from jobs
        where backend = ? and dispatched_at is not null and completed_at is null
          and coalesce(started_at, dispatched_at) + make_interval(secs => timeout_seconds + ?) < now()
        order by dispatched_at limit 100`,
      [backend, marginSeconds],
    );
    return rows.map((row) => ({ id: row.id, timeoutSeconds: Number(row.timeout_seconds) }));
  }

  /**
   * Publishes the events that settled jobs saved but no process published: their process
   * died between the commit and the publish, or gave up. The outboxes of the api and the
   * operator call it on every pass; the per-event marker keeps it exactly once.
   */
  async publishPendingOutcomes(limit = 100): Promise<number> {
    const rows = await this.#d.orm.em.fork().getConnection().execute<{ id: string; outcome_events: OutcomeEvent[] }[]>(
      `select id, outcome_events from jobs where outcome_events is not null and completed_at < now() - make_interval(secs => ?) order by completed_at limit ?`,
      [PENDING_OUTCOME_AGE_MS / 1000, limit],
    );
    for (const row of rows) await this.#publish(row.id, row.outcome_events);
    return rows.length;
  }

  async #publish(jobId: string, events: readonly OutcomeEvent[]): Promise<void> {
    for (const [index, event] of events.entries()) await this.#d.publisher.publishOnce(`${jobId}:${index}`, event);
    await this.#d.orm.em.fork().nativeUpdate(Job, { id: jobId }, { outcomeEvents: null });
  }

  /** Deducts on success, releases otherwise; the ledger's reference makes either happen once. */
  async #settleCredits(em: EntityManager, job: JobRow, ok: boolean, used: number | undefined): Promise<void> {
    if (job.creditMinutes === null || job.creditMinutes === undefined) return;
    // The account was deleted while the job ran: its ledger went with it, nothing is left to settle.
    const [owner] = await em.execute<{ id: string }[]>(`select id from users where id = ?`, [job.userId]);
    if (!owner) return;
    const reference = jobCreditReference(job.id);
    if (ok) await this.#d.billing.deductCredits(em, job.userId, { reference, minutes: Math.min(used ?? Number(job.creditMinutes), Number(job.creditMinutes)) });
    else await this.#d.billing.releaseCredits(em, job.userId, { reference });
  }

  /**
   * Mirrors progress into the row (never moving a completed job) and hands reported
   * progress to the relay. The row stays locked until the relay has published, so a
   * completion, which claims this row, publishes its final event after the last progress.
   */
  async markProgress(jobId: string, update: ProgressUpdate): Promise<void> {
    const set: Record<string, unknown> = {};
    if (update.status) set.status = update.status;
    if (update.progress !== undefined) {
      set.progress = Math.round(update.progress);
      // an estimate belongs to the report it came with: one without any clears the last
      set.etaSeconds = update.etaSeconds ?? null;
    }
    if (update.step !== undefined) set.step = update.step;
    if (update.startedAt) set.startedAt = update.startedAt;
    if (Object.keys(set).length === 0) return;
    if (update.status === 'running') await this.#markStarted(jobId, update.startedAt);
    const relay = this.#d.progressRelay;
    if (update.progress === undefined || !relay) {
      await this.#d.orm.em.fork().nativeUpdate(Job, { id: jobId, completedAt: null }, set);
      return;
    }
    await this.#d.orm.em.fork().transactional(async (em) => {
      if ((await em.nativeUpdate(Job, { id: jobId, completedAt: null }, set)) === 0) return;
      const job = await em.findOneOrFail(Job, jobId);
      try {
        await relay.relay(job, { progress: job.progress, step: job.step ?? '', etaSeconds: job.etaSeconds ?? null });
      } catch (error) {
        // The row's progress is the fallback (polling): an event lost to Redis must not lose it too.
        this.#d.logger.warn({ err: error, job_id: jobId }, 'relaying job progress failed');
      }
    });
  }

  /** The first report of a running job tells its feature (a repeated report finds the row running already). */
  async #markStarted(jobId: string, startedAt: Date | undefined): Promise<void> {
    let after: AfterCommit | undefined;
    await this.#d.orm.em.fork().transactional(async (em) => {
      const claimed = await em.getConnection().execute<{ id: string }[]>(
        `update jobs set status = 'running', started_at = coalesce(started_at, ?) where id = ? and completed_at is null and status <> 'running' returning id`,
        [startedAt ?? new Date(), jobId],
        'all',
        em.getTransactionContext(),
      );
      if (claimed.length === 0) return;
      const job = await em.findOneOrFail(Job, jobId);
      const handler = isProgramName(job.program) ? (this.#d.handlers[job.program] as CompletionHandler<ProgramName, unknown>) : undefined;
      after = (await handler?.started?.(em, job)) ?? undefined;
    });
    if (!after) return;
    await this.#afterCommit(jobId, after, 'after-start work of a job');
  }

  /**
   * Runs work that follows a commit (object deletion). The commit cannot be undone, so
   * work that meets an outage (Redis, S3) is not dropped: it is tried again in the background,
   * 0.5 s doubling to 30 s, for as long as this process runs. Other errors are logged once.
   */
  async #afterCommit(jobId: string, work: AfterCommit, what: string): Promise<void> {
    const { logger } = this.#d;
    try {
      await work();
      return;
    } catch (error) {
      if (!isDependencyOutage(error)) {
        logger.error({ err: error, job_id: jobId }, `${what} failed`);
        return;
      }
      logger.warn({ err: error, job_id: jobId }, `${what} met an outage; retrying`);
    }
    void (async () => {
      for (let attempt = 1; ; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(AFTER_COMMIT_RETRY_MAX_MS, AFTER_COMMIT_RETRY_BASE_MS * 2 ** Math.min(attempt - 1, 10))).unref());
        try {
          await work();
          logger.info({ job_id: jobId, attempts: attempt + 1 }, `${what} done after retries`);
          return;
        } catch (error) {
          if (!isDependencyOutage(error)) {
            logger.error({ err: error, job_id: jobId }, `${what} failed`);
            return;
          }
        }
      }
    })();
  }
}

/**
 * A reported success as the completion handles it: the result parsed by the program's
 * registry schema and its objects loaded. A result that does not parse, or whose objects
 * cannot be read, makes the outcome a failure; a store outage is thrown (the caller retries).
 */
async function readResult(job: JobRow, reported: JobOutcome, handler: CompletionHandler<ProgramName, unknown>): Promise<{ outcome: JobOutcome; loaded: unknown }> {
  if (!reported.ok) return { outcome: reported, loaded: undefined };
  const schema = jobPrograms[job.program as ProgramName].result as z.ZodType<object>;
  const parsed = schema.safeParse(reported.result);
  if (!parsed.success) return { outcome: invalidResult(`The job wrote a result its program's contract does not allow: ${z.prettifyError(parsed.error)}`), loaded: undefined };
  const outcome = { ok: true as const, result: parsed.data as Record<string, unknown> };
  try {
    return { outcome, loaded: handler.load ? await handler.load(job, parsed.data as ResultOf<ProgramName>) : undefined };
  } catch (error) {
    if (error instanceof InvalidResult) return { outcome: invalidResult(error.message), loaded: undefined };
    throw error;
  }
}

function unknownProgram(program: string): JobOutcome {
  return { ok: false, error: `No program is called "${program}".`, code: jobSystemFailures.invalidSpec, params: { detail: program } };
}

function invalidResult(error: string): JobOutcome {
  return { ok: false, error, code: jobSystemFailures.invalidResult };
}
