import pg from 'pg';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { INPUT_FILE_NAME, JOB_INPUT_INLINE_MAX_BYTES, jobSystemFailures, outputKey } from '../../../crds/contract/outcome.ts';
import { isProgramName, jobPrograms } from '../../../crds/contract/programs.ts';
import type { JobSpec } from '../../../crds/contract/resources.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import type { JobCompletion } from './completion.ts';
import type { DispatchedJob, JobDispatcher } from './dispatcher.ts';
import type { JobRow } from './entities.ts';
import type { JobMetrics } from '../ops/metrics.ts';
import { jobKinds, type JobKind } from '../../../crds/contract/resources.ts';
import { CoalescedPass } from '../shared/coalesced-pass.ts';

export interface JobOutboxOptions {
  orm: MikroORM;
  dispatcher: JobDispatcher;
  completion: JobCompletion;
  storage: ObjectStorage;
  logger: Logger;
  databaseUrl: string;
  /** NOTIFY channel: one per Redis prefix, so test runs sharing a server stay apart. */
  channel: string;
  /** Safety net for a missed notification and the pace of retries. */
  pollMs: number;
  /** Local backend, api start: jobs a previous process was running are this process's to run again. */
  recoverOnStart: boolean;
  /** Queue depth by kind: jobs waiting in the table for their backend. */
  metrics?: JobMetrics;
}

/**
 * Kinds of which a user holds at most one running job: the long ones (renders, analyses),
 * which held every local slot for an hour. Artifact jobs (uploads, media edits) are short
 * and keep running side by side: a copy edit reads a source that a concurrent replace of the
 * same item releases when it settles, so running them one after another would fail the copy.
 */
const ONE_AT_A_TIME_KINDS: readonly JobKind[] = ['RenderJob', 'AnalysisJob'];

/** Rows claimed per transaction; each is handed to the backend while its row is locked. */
const BATCH = 10;
const MAX_BACKOFF_MS = 60_000;

/**
 * Dispatches job rows after their transaction committed. Woken by NOTIFY (sent inside the
 * requesting transaction, so delivered at its commit) and by a poll. Rows are claimed with
 * `FOR UPDATE SKIP LOCKED`, round-robin across users (each user's oldest first; among users
 * the one served least recently first), so replicas never hand one row over twice and one
 * user's burst cannot starve the others. A user holds at most one running render and one
 * running analysis, on either backend: the next one is handed over once the running one is
 * settled, so two renders of one user never hold both local slots while another user's waits;
 * and where the runner keeps its last render slot for short renders, only those take it.
 * A backend that refuses or is down leaves the row for a retry with backoff.
 */
export class JobOutbox {
  readonly #o: JobOutboxOptions;
  #listener: pg.Client | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #pass: CoalescedPass;
  #closed = false;
  /** Not started, it dispatches only when kicked (after a submit outside a transaction). */
  #started = false;
  #recovered: boolean;

  constructor(options: JobOutboxOptions) {
    this.#o = options;
    this.#recovered = !options.recoverOnStart;
    this.#pass = new CoalescedPass(() => this.#drain(), (error: unknown) => this.#o.logger.warn({ err: error }, 'job outbox pass failed; the next one retries'));
  }

  /** Inside the requesting transaction: wakes every replica's outbox once it commits. */
  async announce(em: EntityManager): Promise<void> {
    await em.execute('select pg_notify(?, ?)', [this.#o.channel, this.#o.dispatcher.backend]);
  }

  async start(): Promise<void> {
    this.#started = true;
    this.#timer = setInterval(() => this.kick(), this.#o.pollMs);
    this.#timer.unref();
    await this.#listen().catch((error: unknown) => this.#o.logger.warn({ err: error }, 'job outbox: LISTEN failed; polling only until it reconnects'));
    this.kick();
  }

  /** Runs a pass now (coalesced with one already running). */
  kick(): void {
    if (this.#closed) return;
    this.#pass.kick();
  }

  /** Resolves when no pass is running (tests). */
  idle(): Promise<void> {
    return this.#pass.idle();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.idle();
    const listener = this.#listener;
    this.#listener = undefined;
    await listener?.end().catch(() => {});
  }

  async #listen(): Promise<void> {
    if (this.#closed || this.#listener) return;
    // bounded: a connect that never settles (the server vanished mid-handshake) must not stall every later pass
    const client = new pg.Client({ connectionString: this.#o.databaseUrl, connectionTimeoutMillis: 5000 });
    client.on('error', (error) => {
      this.#o.logger.warn({ err: error }, 'job outbox: LISTEN connection lost');
      if (this.#listener === client) this.#listener = undefined;
    });
    client.on('notification', (message) => {
      if (message.payload === this.#o.dispatcher.backend) this.kick();
    });
    await client.connect();
    await client.query(`listen "${this.#o.channel.replaceAll('"', '')}"`);
    this.#listener = client;
  }

  async #drain(): Promise<void> {
    if (this.#started && !this.#listener) await this.#listen().catch(() => {});
    if (!this.#recovered) {
      await this.#recover();
      this.#recovered = true;
    }
    // events of settlements whose process died before publishing them
    await this.#o.completion.publishPendingOutcomes().catch((error: unknown) => this.#o.logger.warn({ err: error }, 'job outbox: publishing pending outcome events failed; the next pass retries'));
    for (;;) {
      if (this.#closed) return;
      const kinds = this.#o.dispatcher.kindsWithCapacity();
      if (kinds.length === 0) break;
      const rejected: { id: string; reason: string }[] = [];
      const handed = await this.#o.orm.em.fork().transactional(async (em) => {
        const rows = await this.#claim(em, kinds);
        for (const row of rows) {
          const reason = await this.#handOver(em, row);
          if (reason !== undefined) rejected.push({ id: row.id, reason });
        }
        return rows.length;
      });
      // Settled once the claim's row locks are gone (the completion takes its own).
      for (const { id, reason } of rejected) {
        // one row's settlement failing must not stop the pass for the others (its next pass retries it)
        await this.#o.completion
          .complete(id, { ok: false, error: `The job backend refused the job: ${reason}`, code: jobSystemFailures.rejected, params: { detail: reason } })
          .catch((error: unknown) => this.#o.logger.warn({ err: error, job_id: id }, 'job outbox: settling a refused job failed; the next pass retries'));
      }
      if (handed < BATCH) break;
    }
    await this.#reportDepth();
  }

  async #reportDepth(): Promise<void> {
    const { metrics } = this.#o;
    if (!metrics) return;
    const rows = await this.#o.orm.em.fork().execute<{ kind: string; n: string }[]>(
      `select kind, count(*) as n from jobs where backend = ? and dispatched_at is null and completed_at is null group by kind`,
      [this.#o.dispatcher.backend],
    );
    for (const kind of Object.keys(jobKinds)) metrics.queueDepth.set({ kind }, Number(rows.find((row) => row.kind === kind)?.n ?? 0));
  }

  async #claim(em: EntityManager, kinds: readonly string[]): Promise<JobRow[]> {
    const limit = this.#o.dispatcher.backend === 'local' ? 1 : BATCH;
    // a kind whose last slot is kept for short jobs hands over only those; '' matches no kind
    const shortOnly = this.#o.dispatcher.shortJobsOnly?.();
    const shortOnlyKinds = shortOnly?.kinds.length ? shortOnly.kinds : [''];
    return em.execute<JobRow[]>(
      `select id, kind, program, user_id, project_id, media_file_id, input, output_prefix, timeout_seconds, dispatch_attempts
         from jobs where id in (
           select waiting.id from (
             select id, kind, user_id, created_at, row_number() over (partition by user_id, kind order by created_at, id) as turn
               from jobs
              where backend = ? and dispatched_at is null and completed_at is null and waits_for_file_id is null
                and (next_dispatch_at is null or next_dispatch_at <= now()) and kind in (?)
                and (kind not in (?) or timeout_seconds <= ?)
                and (kind not in (?) or not exists (
                  select 1 from jobs busy
                   where busy.user_id = jobs.user_id and busy.kind = jobs.kind and busy.backend = jobs.backend
                     and busy.dispatched_at is not null and busy.completed_at is null))
           ) waiting
           left join lateral (
             select max(served.dispatched_at) as last_served from jobs served where served.user_id = waiting.user_id and served.backend = ?
           ) history on true
           where waiting.kind not in (?) or waiting.turn = 1
           order by waiting.turn, history.last_served nulls first, waiting.created_at, waiting.id limit ?)
       order by created_at, id for update skip locked`,
      [this.#o.dispatcher.backend, kinds, shortOnlyKinds, shortOnly?.maxTimeoutSeconds ?? 0, ONE_AT_A_TIME_KINDS, this.#o.dispatcher.backend, ONE_AT_A_TIME_KINDS, limit],
    ).then((rows) => rows.map((row) => toRow(row as unknown as Record<string, unknown>)));
  }

  /** Hands one row over; returns why the backend refused it for good, if it did (a retry cannot help). */
  async #handOver(em: EntityManager, row: JobRow): Promise<string | undefined> {
    if (!isProgramName(row.program)) return `no program is called "${row.program}"`;
    try {
      const spec = await this.#specOf(row);
      await this.#o.dispatcher.dispatch({ kind: jobPrograms[row.program].kind, spec });
      await em.execute(`update jobs set dispatched_at = now(), dispatch_error = null where id = ?`, [row.id]);
      return undefined;
    } catch (error) {
      const refusal = this.#o.dispatcher.refusal(error);
      if (refusal !== undefined) {
        this.#o.logger.error({ err: error, job_id: row.id }, 'job outbox: the backend refused the job');
        return refusal;
      }
      const attempts = row.dispatchAttempts + 1;
      const delayMs = Math.min(MAX_BACKOFF_MS, this.#o.pollMs * 2 ** Math.min(attempts, 16));
      this.#o.logger.warn({ err: error, job_id: row.id, attempts, retry_in_ms: delayMs }, 'job outbox: the backend did not take the job; retrying');
      await em.execute(
        `update jobs set dispatch_attempts = ?, next_dispatch_at = now() + (? || ' milliseconds')::interval, dispatch_error = ? where id = ?`,
        [attempts, String(delayMs), error instanceof Error ? error.message : String(error), row.id],
      );
      return undefined;
    }
  }

  /** The spec handed to the backend; a large input goes to S3 first and the spec names it. */
  async #specOf(row: JobRow): Promise<JobSpec> {
    const text = JSON.stringify(row.input);
    const byReference = Buffer.byteLength(text) > JOB_INPUT_INLINE_MAX_BYTES;
    if (byReference) await this.#o.storage.putJson(outputKey(row.outputPrefix, INPUT_FILE_NAME), row.input);
    return {
      jobId: row.id,
      program: row.program,
      userId: row.userId,
      ...(row.projectId ? { projectId: row.projectId } : {}),
      ...(row.mediaFileId ? { mediaFileId: row.mediaFileId } : {}),
      input: byReference ? {} : row.input,
      ...(byReference ? { inputRef: true } : {}),
      outputPrefix: row.outputPrefix,
      timeoutSeconds: row.timeoutSeconds,
    };
  }

  /**
   * Local backend at start-up: a job a previous process dispatched but never settled died
   * with it; it runs again from scratch (outputs overwrite). A program no longer known ends
   * failed when the outbox hands it over. Assumes one api process runs local jobs.
   */
  async #recover(): Promise<void> {
    const em = this.#o.orm.em.fork();
    const orphans = await em.execute<{ id: string }[]>(
      `update jobs set dispatched_at = null, status = 'queued', progress = 0, step = null, started_at = null, next_dispatch_at = null
        where backend = 'local' and completed_at is null and dispatched_at is not null returning id`,
    );
    if (orphans.length > 0) this.#o.logger.info({ jobs: orphans.length }, 'unfinished jobs of a previous process will run again');
  }
}

function toRow(raw: Record<string, unknown>): JobRow {
  return {
    id: raw.id,
    kind: raw.kind,
    program: raw.program,
    userId: raw.user_id,
    projectId: raw.project_id,
    mediaFileId: raw.media_file_id,
    input: raw.input,
    outputPrefix: raw.output_prefix,
    timeoutSeconds: Number(raw.timeout_seconds),
    dispatchAttempts: Number(raw.dispatch_attempts),
  } as JobRow;
}
