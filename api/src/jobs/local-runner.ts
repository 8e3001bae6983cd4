import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { parseProgressLine } from '../../../crds/contract/progress-lines.ts';
import { isProgramName, jobPrograms } from '../../../crds/contract/programs.ts';
import { jobKinds, type JobKind } from '../../../crds/contract/resources.ts';
import type { S3Settings } from '../../../crds/contract/s3-client.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import type { JobMetrics } from '../ops/metrics.ts';
import type { JobCompletion, JobFailed, JobOutcome } from './completion.ts';
import type { CancelledJob, DispatchedJob, JobDispatcher } from './dispatcher.ts';
import { imposedFailures, readJobOutcome, type RunEnd } from './outcome.ts';
import { isDependencyOutage } from '../ops/dependency-outage.ts';

const JOB_IMAGES = fileURLToPath(new URL('../../../job-images/', import.meta.url));
const allKinds = Object.keys(jobKinds) as JobKind[];
/** Backoff of a settlement that failed: 0.5 s doubling to 30 s, as long as the process runs while the database is unreachable. */
const SETTLE_RETRY_BASE_MS = 500;
const SETTLE_RETRY_MAX_MS = 30_000;
const SETTLE_ATTEMPTS_ON_ERROR = 3;
/** Between the SIGTERM that stops a program (timeout, cancel, shutdown) and the SIGKILL that ends one ignoring it. */
const STOP_GRACE_MS = 5000;
/** Backoff of an outcome read that met a store outage: 0.5 s doubling to 30 s, until the job's deadline plus the margin. */
const OUTCOME_RETRY_BASE_MS = 500;
const OUTCOME_RETRY_MAX_MS = 30_000;
/** How long past its deadline a job may stay unsettled (its outcome unreadable, its row unclaimed) before it is failed. */
const OVERDUE_MARGIN_MS = 120_000;
/** How often rows of this backend running past their deadline and the margin are looked for. */
const OVERDUE_SWEEP_MS = 60_000;

/**
 * Where local job programs keep their work: each run gets `<api pid>-<job id>` here as its
 * TMPDIR, removed when the program ends whatever way it ends. A directory whose api process is
 * gone (a crash: neither the runner nor an orphaned program cleaned up) is removed when the
 * next runner starts.
 */
export const LOCAL_JOB_WORK_ROOT = join(tmpdir(), 'cutroom-local-jobs');

/** Removes the work directories left by api processes that are no longer running; returns their names. */
export async function removeOrphanedWorkDirs(root = LOCAL_JOB_WORK_ROOT): Promise<string[]> {
  const entries = await readdir(root).catch(() => [] as string[]);
  const orphaned = entries.filter((name) => {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    return Number.isSafeInteger(pid) && pid > 0 && !processRuns(pid);
  });
  await Promise.all(orphaned.map((name) => rm(join(root, name), { recursive: true, force: true })));
  return orphaned;
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What the runner starts for a job: an executable and its arguments. */
interface ProgramCommand {
  file: string;
  args: string[];
}

/** The program of `image` as the cluster runs it: Node on the image's entry point. */
function imageCommand(image: string): ProgramCommand {
  return { file: process.execPath, args: [`${JOB_IMAGES}${image}/src/main.ts`] };
}

export interface LocalRunnerOptions {
  /** Jobs of one kind running at once; the jobs table is the queue (the outbox hands over one per free slot). */
  concurrency: number;
  /**
   * A render whose timeout (which follows its output's length) is longer than this is long:
   * with two render slots or more, long renders hold all but one (JOB_LOCAL_SHORT_RENDER_SECONDS).
   */
  shortRenderSeconds?: number;
  s3: S3Settings;
  storage: ObjectStorage;
  completion: JobCompletion;
  logger: Logger;
  metrics: JobMetrics;
  /** Called when a slot frees up, so the outbox hands over the next job. */
  onSlotFree?: () => void;
  /** Extra environment for the job programs (FFMPEG_PATH, WHISPER_BASE_URL, …). */
  env?: Record<string, string>;
  /** Tests only: what to start instead of the image's program (a misbehaving stand-in, a missing executable). */
  command?: (job: DispatchedJob, image: string) => ProgramCommand;
  /** Where the programs' work directories go (LOCAL_JOB_WORK_ROOT; tests give their own). */
  workRoot?: string;
  /** Tests only: OVERDUE_MARGIN_MS and OVERDUE_SWEEP_MS (0 turns the periodic sweep off). */
  overdueMarginMs?: number;
  overdueSweepMs?: number;
}

interface Running {
  child: ChildProcess | undefined;
  cancelled: boolean;
}

/**
 * The `local` backend: the same job programs the cluster runs, as child processes of
 * the api, at most `concurrency` per kind, with the spec's timeout and cancellation.
 * The outcome is read from result.json / error.json, as under Kubernetes.
 */
export class LocalJobRunner implements JobDispatcher {
  readonly backend = 'local' as const;
  readonly #options: LocalRunnerOptions;
  readonly #active = new Map<string, number>();
  readonly #running = new Map<string, Running>();
  /** Renders running that are longer than shortRenderSeconds. */
  #longRenders = 0;
  readonly #settled = new Set<Promise<void>>();
  /** Aborted by close(): every backoff wait (outcome reads, settlements) ends at once. */
  readonly #stopping = new AbortController();
  readonly #sweep: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: LocalRunnerOptions) {
    this.#options = options;
    removeOrphanedWorkDirs(this.#workRoot).catch((error: unknown) => options.logger.warn({ err: error }, 'work directories of a stopped api could not be removed'));
    const every = options.overdueSweepMs ?? OVERDUE_SWEEP_MS;
    if (every > 0) {
      this.#sweep = setInterval(() => {
        this.sweepOverdue().catch((error: unknown) => options.logger.warn({ err: error }, 'the sweep of overdue local jobs failed; the next one retries'));
      }, every);
      this.#sweep.unref();
    }
  }

  get #workRoot(): string {
    return this.#options.workRoot ?? LOCAL_JOB_WORK_ROOT;
  }

  get #marginMs(): number {
    return this.#options.overdueMarginMs ?? OVERDUE_MARGIN_MS;
  }

  /**
   * Settles, as timed out, the rows of this backend handed over, never settled and past their
   * deadline plus the margin that no run of this process holds (a settlement that gave up, a
   * run lost some other way): without it they would stay running until the next start.
   * Assumes one api process runs local jobs (as the outbox's recovery does). Returns how many.
   */
  async sweepOverdue(): Promise<number> {
    if (this.#closed) return 0;
    const overdue = await this.#options.completion.overdueJobs('local', this.#marginMs / 1000);
    let settled = 0;
    for (const { id, timeoutSeconds } of overdue) {
      if (this.#running.has(id)) continue;
      this.#options.logger.warn({ job_id: id }, 'a local job ran past its deadline unsettled; it is failed as timed out');
      if (await this.#options.completion.complete(id, { ok: false, ...imposedFailures.timedOut(timeoutSeconds) })) settled++;
    }
    return settled;
  }

  kindsWithCapacity(): readonly JobKind[] {
    if (this.#closed) return [];
    return allKinds.filter((kind) => (this.#active.get(kind) ?? 0) < this.#options.concurrency);
  }

  /**
   * Two accounts' hour-long renders must not hold every render slot while a 3-second export
   * waits the hour: once long renders hold all slots but one, the last takes short ones only.
   */
  shortJobsOnly(): { kinds: readonly JobKind[]; maxTimeoutSeconds: number } | undefined {
    const { concurrency, shortRenderSeconds } = this.#options;
    if (shortRenderSeconds === undefined || concurrency < 2 || this.#longRenders < concurrency - 1) return undefined;
    return { kinds: ['RenderJob'], maxTimeoutSeconds: shortRenderSeconds };
  }

  #isLongRender(job: DispatchedJob): boolean {
    return job.kind === 'RenderJob' && this.#options.shortRenderSeconds !== undefined && (job.spec.timeoutSeconds ?? Infinity) > this.#options.shortRenderSeconds;
  }

  async dispatch(job: DispatchedJob): Promise<void> {
    if (this.#closed) throw new Error('the local job runner is closed');
    if ((this.#active.get(job.kind) ?? 0) >= this.#options.concurrency) throw new Error(`no free ${job.kind} slot`);
    if (this.#running.has(job.spec.jobId)) return; // idempotent: it runs already
    this.#active.set(job.kind, (this.#active.get(job.kind) ?? 0) + 1);
    const long = this.#isLongRender(job);
    if (long) this.#longRenders++;
    this.#options.metrics.created.inc({ kind: job.kind });
    const running: Running = { child: undefined, cancelled: false };
    this.#running.set(job.spec.jobId, running);
    const done = this.#run(job, running).finally(() => {
      this.#settled.delete(done);
      this.#running.delete(job.spec.jobId);
      this.#active.set(job.kind, (this.#active.get(job.kind) ?? 1) - 1);
      if (long) this.#longRenders--;
      if (!this.#closed) this.#options.onSlotFree?.();
    });
    this.#settled.add(done);
  }

  /** A full or closed runner is a passing state: the job waits in the table. */
  refusal(): string | undefined {
    return undefined;
  }

  async cancel({ jobId }: CancelledJob): Promise<void> {
    const running = this.#running.get(jobId);
    if (!running) return;
    running.cancelled = true;
    stop(running.child);
  }

  /** Waits for every running job to be settled (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.#settled.size > 0) await Promise.all([...this.#settled]);
  }

  /** Running jobs are stopped and stay unfinished: the next start runs them again (JobOutbox recovery). */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweep);
    this.#stopping.abort();
    for (const running of this.#running.values()) stop(running.child);
    await Promise.all([...this.#settled]);
  }

  async #run(job: DispatchedJob, running: Running): Promise<void> {
    const { spec } = job;
    const { logger } = this.#options;
    const image = isProgramName(spec.program) ? jobPrograms[spec.program].image : 'ffmpeg';
    const { file, args } = this.#options.command?.(job, image) ?? imageCommand(image);
    const workDir = join(this.#workRoot, `${process.pid}-${spec.jobId}`);
    try {
      await this.#runIn(job, running, workDir, file, args);
    } finally {
      // the program removes its own work, unless it was killed or crashed first
      await rm(workDir, { recursive: true, force: true }).catch((error: unknown) => logger.warn({ err: error, job_id: spec.jobId }, 'a local job\'s work directory could not be removed'));
    }
  }

  async #runIn(job: DispatchedJob, running: Running, workDir: string, file: string, args: string[]): Promise<void> {
    const { kind, spec } = job;
    const { completion, logger, s3 } = this.#options;
    const timeoutSeconds = spec.timeoutSeconds ?? 3600;
    const started = process.hrtime.bigint();
    let child: ChildProcess;
    try {
      await mkdir(workDir, { recursive: true, mode: 0o700 });
      if (this.#closed) return; // shutdown: left unfinished for the next start
      child = spawn(file, args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TMPDIR: workDir,
          ...this.#options.env,
          CUTROOM_JOB_SPEC: JSON.stringify(spec),
          CUTROOM_PROGRESS: 'stdout',
          S3_ENDPOINT: s3.endpoint ?? '',
          S3_REGION: s3.region,
          S3_BUCKET: s3.bucket,
          S3_ACCESS_KEY_ID: s3.accessKeyId,
          S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
          S3_FORCE_PATH_STYLE: String(s3.forcePathStyle),
        },
      });
    } catch (refused) {
      // Refused before any process existed (an argument Node rejects, an environment over the kernel's limit): no retry can start it.
      const detail = refused instanceof Error ? refused.message : String(refused);
      logger.error({ err: refused, job_id: spec.jobId }, 'a local job program could not be started');
      return this.#finish(kind, spec.jobId, started, { ok: false, ...imposedFailures.spawnFailed(detail) });
    }
    running.child = child;
    if (running.cancelled) stop(child);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stop(child);
    }, timeoutSeconds * 1000);

    const stderrTail: string[] = [];
    // One report at a time, in the program's order: the row and the project stream see the sequence it wrote.
    let progressWrites: Promise<void> = Promise.resolve();
    // stdout carries progress only; the outcome is in result.json / error.json.
    // No pipes when the process table or descriptors ran out (EMFILE): the 'error' event says so.
    if (child.stdout) createInterface({ input: child.stdout }).on('line', (line) => {
      const event = parseProgressLine(line);
      if (!event) return;
      progressWrites = progressWrites.then(() =>
        completion.markProgress(spec.jobId, { progress: event.progress, step: event.step, etaSeconds: event.eta_seconds ?? null }).catch((error: unknown) => {
          logger.warn({ err: error, job_id: spec.jobId }, 'could not record job progress');
        }),
      );
    });
    if (child.stderr) createInterface({ input: child.stderr }).on('line', (line) => {
      stderrTail.push(line);
      if (stderrTail.length > 20) stderrTail.shift();
    });

    let spawnError: string | undefined;
    // Listening before the first await: a quickly killed child may close at any moment.
    const exited: Promise<number | null> = new Promise((resolve) => {
      child.once('error', (error) => {
        spawnError = error.message;
        resolve(null);
      });
      child.once('close', (exitCode) => resolve(exitCode));
    });
    await completion.markProgress(spec.jobId, { status: 'running', startedAt: new Date() }).catch((error: unknown) => {
      logger.warn({ err: error, job_id: spec.jobId }, 'could not mark the job running');
    });
    const code = await exited;
    clearTimeout(timer);
    await progressWrites;
    if (this.#closed && !running.cancelled) return; // shutdown: left unfinished for the next start

    const crashDetail = `exit code ${code}: ${stderrTail.slice(-3).join(' | ') || 'no output'}`;
    const imposed: JobFailed | undefined = running.cancelled
      ? imposedFailures.cancelled()
      : timedOut
        ? imposedFailures.timedOut(timeoutSeconds)
        : spawnError !== undefined
          ? imposedFailures.spawnFailed(spawnError)
          : undefined;
    const deadline = Date.now() - Number(process.hrtime.bigint() - started) / 1e6 + timeoutSeconds * 1000 + this.#marginMs;
    const outcome = await this.#readOutcome(spec.jobId, spec.outputPrefix, { exitedCleanly: code === 0, crashDetail, ...(imposed ? { imposed } : {}) }, deadline, timeoutSeconds);
    if (!outcome) return; // shutdown: left unfinished for the next start
    await this.#finish(kind, spec.jobId, started, outcome);
  }

  /**
   * The outcome, read again with backoff while the store does not answer (a blip as the job
   * ends must not leave it running): past the job's deadline plus the margin it is failed as
   * timed out instead. Undefined when the runner closes meanwhile.
   */
  async #readOutcome(jobId: string, outputPrefix: string, end: RunEnd, deadline: number, timeoutSeconds: number): Promise<JobOutcome | undefined> {
    const { logger, storage } = this.#options;
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = await readJobOutcome(storage, outputPrefix, end);
        if (attempt > 1) logger.info({ job_id: jobId, attempts: attempt }, 'the outcome of a local job was read after retries');
        return outcome;
      } catch (failure) {
        if (this.#closed) {
          logger.warn({ err: failure, job_id: jobId }, 'the outcome of a local job could not be read before shutdown; the next start runs it again');
          return undefined;
        }
        if (Date.now() >= deadline) {
          logger.error({ err: failure, job_id: jobId, attempts: attempt }, 'the outcome of a local job stayed unreadable past its deadline; it is failed as timed out');
          return { ok: false, ...imposedFailures.timedOut(timeoutSeconds) };
        }
        const delayMs = Math.min(OUTCOME_RETRY_MAX_MS, OUTCOME_RETRY_BASE_MS * 2 ** Math.min(attempt - 1, 10), Math.max(0, deadline - Date.now()));
        logger.warn({ err: failure, job_id: jobId, attempt, retry_in_ms: delayMs }, 'the outcome of a local job could not be read; retrying');
        if (!(await this.#pause(delayMs))) {
          logger.warn({ job_id: jobId }, 'the outcome of a local job could not be read before shutdown; the next start runs it again');
          return undefined;
        }
      }
    }
  }

  /** Waits `ms` unless the runner closes first (then false at once): no timer outlives close(). */
  async #pause(ms: number): Promise<boolean> {
    try {
      await sleep(ms, undefined, { signal: this.#stopping.signal });
      return true;
    } catch {
      return false;
    }
  }

  /** Counts the run's end and settles it. */
  async #finish(kind: JobKind, jobId: string, started: bigint, outcome: JobOutcome): Promise<void> {
    const { metrics } = this.#options;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    (outcome.ok ? metrics.succeeded : metrics.failed).inc({ kind });
    metrics.duration.observe({ kind, outcome: outcome.ok ? 'succeeded' : 'failed' }, seconds);
    await this.#settle(jobId, outcome);
  }

  /**
   * Settles with backoff while this process runs: a database blip at the end of a job must not
   * leave its media PROCESSING until the next start (which would run the whole job again).
   */
  async #settle(jobId: string, outcome: JobOutcome): Promise<void> {
    const { completion, logger } = this.#options;
    for (let attempt = 1; ; attempt++) {
      try {
        await completion.complete(jobId, outcome);
        if (attempt > 1) logger.info({ job_id: jobId, attempts: attempt }, 'local job settled after retries');
        return;
      } catch (failure) {
        // an outage is waited out; any other error is the handler's and is tried a few times only
        if (this.#closed || (!isDependencyOutage(failure) && attempt >= SETTLE_ATTEMPTS_ON_ERROR)) {
          logger.error({ err: failure, job_id: jobId }, 'the outcome of a local job could not be settled; the next start runs it again');
          return;
        }
        const delayMs = Math.min(SETTLE_RETRY_MAX_MS, SETTLE_RETRY_BASE_MS * 2 ** Math.min(attempt - 1, 10));
        logger.warn({ err: failure, job_id: jobId, attempt, retry_in_ms: delayMs }, 'the outcome of a local job could not be settled; retrying');
        if (!(await this.#pause(delayMs))) {
          logger.warn({ job_id: jobId }, 'the runner closed before a local job was settled; the next start runs it again');
          return;
        }
      }
    }
  }
}

/** SIGTERM, then SIGKILL after a grace period (as the kubelet does): a program that ignores the first still ends. */
function stop(child: ChildProcess | undefined): void {
  if (!child) return;
  child.kill('SIGTERM');
  setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }, STOP_GRACE_MS).unref();
}
