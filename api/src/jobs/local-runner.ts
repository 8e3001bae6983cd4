import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { parseJobEvent } from '../../../job-images/lib/job-events.ts';
import type { S3Settings } from '../storage/s3-client.ts';
import type { JobMetrics } from '../ops/metrics.ts';
import { AppError } from '../http/errors.ts';
import type { JobCompletion, JobFailed } from './completion.ts';
import { jobPrograms, type CancelledJob, type DispatchedJob, type JobDispatcher } from './programs.ts';

const JOB_IMAGES = fileURLToPath(new URL('../../../job-images/', import.meta.url));

export interface LocalRunnerOptions {
  concurrency: number;
  queueLimit: number;
  timeoutSeconds: number;
  s3: S3Settings;
  completion: JobCompletion;
  logger: Logger;
  metrics: JobMetrics;
  /** Extra environment for the job programs (FFMPEG_PATH, WHISPER_BASE_URL, …). */
  env?: Record<string, string>;
}

interface Running {
  child: ChildProcess;
  cancelled: boolean;
}

/**
 * The `local` backend: the same job programs the cluster runs, as child processes of
 * the api, through one bounded queue per kind, with a timeout and cancellation.
 */
export class LocalJobRunner implements JobDispatcher {
  readonly #options: LocalRunnerOptions;
  readonly #waiting = new Map<string, DispatchedJob[]>();
  readonly #active = new Map<string, number>();
  readonly #running = new Map<string, Running>();
  readonly #settled = new Set<Promise<void>>();
  #closed = false;

  constructor(options: LocalRunnerOptions) {
    this.#options = options;
  }

  async dispatch(job: DispatchedJob): Promise<void> {
    if (this.#closed) throw new Error('the local job runner is closed');
    const queue = this.#waiting.get(job.kind) ?? [];
    if (queue.length >= this.#options.queueLimit) throw new AppError(503, 'http.503');
    queue.push(job);
    this.#waiting.set(job.kind, queue);
    this.#options.metrics.created.inc({ kind: job.kind });
    this.#pump(job.kind);
  }

  async cancel({ jobId }: CancelledJob): Promise<void> {
    for (const [kind, queue] of this.#waiting) {
      const index = queue.findIndex((job) => job.spec.jobId === jobId);
      if (index >= 0) {
        queue.splice(index, 1);
        this.#options.metrics.queueDepth.set({ kind }, queue.length);
        await this.#options.completion.complete(jobId, { ok: false, error: 'The job was cancelled.', code: 'job.cancelled' });
        return;
      }
    }
    const running = this.#running.get(jobId);
    if (running) {
      running.cancelled = true;
      running.child.kill('SIGTERM');
    }
  }

  /** Waits for every running job to be settled (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.#settled.size > 0 || [...this.#waiting.values()].some((queue) => queue.length > 0)) {
      await Promise.all([...this.#settled]);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    // Queued jobs stay unfinished in the jobs table: the next start dispatches them again (JobService.recover).
    for (const queue of this.#waiting.values()) queue.length = 0;
    for (const running of this.#running.values()) {
      running.cancelled = true;
      running.child.kill('SIGTERM');
    }
    await Promise.all([...this.#settled]);
  }

  #pump(kind: string): void {
    const queue = this.#waiting.get(kind) ?? [];
    while (queue.length > 0 && (this.#active.get(kind) ?? 0) < this.#options.concurrency) {
      const job = queue.shift()!;
      this.#active.set(kind, (this.#active.get(kind) ?? 0) + 1);
      const done = this.#run(job).finally(() => {
        this.#settled.delete(done);
        this.#active.set(kind, (this.#active.get(kind) ?? 1) - 1);
        if (!this.#closed) this.#pump(kind);
      });
      this.#settled.add(done);
    }
    this.#options.metrics.queueDepth.set({ kind }, queue.length);
  }

  async #run({ kind, spec }: DispatchedJob): Promise<void> {
    const { completion, logger, metrics, s3 } = this.#options;
    const image = jobPrograms[spec.program as keyof typeof jobPrograms]?.image ?? 'ffmpeg';
    const timeoutSeconds = spec.timeoutSeconds ?? this.#options.timeoutSeconds;
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [`${JOB_IMAGES}${image}/src/main.ts`], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TMPDIR: process.env.TMPDIR,
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
    const running: Running = { child, cancelled: false };
    this.#running.set(spec.jobId, running);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    }, timeoutSeconds * 1000);

    let result: Record<string, unknown> | undefined;
    let reportedError: string | undefined;
    let reportedCode: { code?: string; params?: Record<string, string | number> } = {};
    const stderrTail: string[] = [];
    const progressWrites: Promise<void>[] = [];
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const event = parseJobEvent(line);
      if (!event) return;
      if (event.event === 'result') result = event.result;
      else if (event.event === 'error') {
        reportedError = event.message;
        reportedCode = { code: event.code, params: event.params };
      }
      else progressWrites.push(completion.markProgress(spec.jobId, { progress: event.progress, step: event.step }).catch(() => {}));
    });
    createInterface({ input: child.stderr! }).on('line', (line) => {
      stderrTail.push(line);
      if (stderrTail.length > 20) stderrTail.shift();
    });


    // Listening before the first await: a quickly killed child may close at any moment.
    const exited: Promise<number | null> = new Promise((resolve) => {
      child.once('error', (error) => {
        reportedError ??= `could not start the job program: ${error.message}`;
        resolve(null);
      });
      child.once('close', (exitCode) => resolve(exitCode));
    });
    await completion.markProgress(spec.jobId, { status: 'running', startedAt: new Date() }).catch((error: unknown) => {
      logger.warn({ err: error, job_id: spec.jobId }, 'could not mark the job running');
    });
    const code = await exited;
    clearTimeout(timer);
    this.#running.delete(spec.jobId);
    await Promise.all(progressWrites);

    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const ok = code === 0 && result !== undefined && !running.cancelled;
    const exitDetail = `exit code ${code}: ${stderrTail.slice(-3).join(' | ') || 'no output'}`;
    const failure: JobFailed = running.cancelled
      ? { error: 'The job was cancelled.', code: 'job.cancelled' }
      : timedOut
        ? { error: `The job did not finish within ${timeoutSeconds} s.`, code: 'job.timed_out', params: { seconds: timeoutSeconds } }
        : reportedError !== undefined
          ? { error: reportedError, ...(reportedCode.code ? reportedCode : { code: 'job.failed', params: { detail: reportedError } }) }
          : { error: `The job program exited with code ${code}: ${stderrTail.slice(-3).join(' | ') || 'no output'}`, code: 'job.failed', params: { detail: exitDetail } };
    (ok ? metrics.succeeded : metrics.failed).inc({ kind });
    metrics.duration.observe({ kind, outcome: ok ? 'succeeded' : 'failed' }, seconds);
    try {
      await completion.complete(spec.jobId, ok ? { ok: true, result: result! } : { ok: false, ...failure });
    } catch (failure) {
      logger.error({ err: failure, job_id: spec.jobId }, 'completion handler failed');
    }
  }
}
