import type { Redis } from 'ioredis';
import type { ProgramName } from '../../../crds/contract/programs.ts';
import { exec, type EventBus, type ProjectEvent } from './bus.ts';

/** A job's progress as the backends report it (JobCompletion.markProgress, after the row is written). */
export interface ProgressReport {
  /** The job's percentage. */
  progress: number;
  /** One of the program's steps (crds/contract/programs.ts). */
  step: string;
  /** The program's own estimate of the seconds left, when it has one. */
  etaSeconds: number | null;
}

/** What the relay reads of a job row. */
export interface ProgressJob {
  id: string;
  program: string;
  projectId?: string | null | undefined;
  subjectId?: string | null | undefined;
}

/** A job of a project, as a policy's event builder sees it. */
export type ProjectJob = ProgressJob & { projectId: string };

/**
 * When one program's progress becomes an event on its project's stream:
 * - `throttled`: on every step change, otherwise only when the percentage moved and at
 *   least `minIntervalMs` passed since the last event of the job;
 * - `marks`: once per mark, when a report first reaches it (`reached` names the marks a
 *   report has reached; marks jumped over go out in order).
 */
export type ProgressPolicy =
  | { kind: 'throttled'; minIntervalMs: number; event: (job: ProjectJob, report: ProgressReport) => ProjectEvent }
  | {
      kind: 'marks';
      reached: (report: ProgressReport) => readonly number[];
      event: (job: ProjectJob, mark: number, report: ProgressReport) => ProjectEvent | Promise<ProjectEvent>;
    };

/** The programs whose progress their project's stream shows; the others' is only mirrored into the row. */
type ProgressPolicies = Partial<Record<ProgramName, ProgressPolicy>>;

/** Throttle state and crossed marks outlive any job run (timeouts are hours at most), then expire. */
const STATE_TTL_MS = 24 * 3600 * 1000;

/** Passes a report when the step changed, or when the percentage moved and the interval passed; records it if so. */
const THROTTLE = `
local last = redis.call('HMGET', KEYS[1], 'step', 'progress', 'at')
if last[1] == ARGV[1] then
  if tonumber(last[2]) == tonumber(ARGV[2]) then return 0 end
  if tonumber(ARGV[3]) - tonumber(last[3]) < tonumber(ARGV[4]) then return 0 end
end
redis.call('HSET', KEYS[1], 'step', ARGV[1], 'progress', ARGV[2], 'at', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

type ThrottleCommand = (key: string, step: string, progress: number, now: number, minIntervalMs: number, ttlMs: number) => Promise<number>;

export interface ProgressRelayDeps {
  redis: Redis;
  bus: EventBus;
  policies: ProgressPolicies;
  /** Real time by default (the throttle spaces real events); tests pass their own. */
  now?: () => number;
}

/**
 * The one path from job progress (either backend, through JobCompletion.markProgress) to
 * the project stream. Its state is in Redis, so the api that ran a job before a restart,
 * or the operator replica that took over, continues where the other left off.
 */
export class ProgressRelay {
  readonly #d: ProgressRelayDeps;
  readonly #now: () => number;

  constructor(deps: ProgressRelayDeps) {
    this.#d = deps;
    this.#now = deps.now ?? Date.now;
    if (!('relayThrottle' in deps.redis)) deps.redis.defineCommand('relayThrottle', { numberOfKeys: 1, lua: THROTTLE });
  }

  async relay(job: ProgressJob, report: ProgressReport): Promise<void> {
    const policy = this.#d.policies[job.program as ProgramName];
    if (!policy || !job.projectId) return;
    const projectJob = { ...job, projectId: job.projectId };
    const events =
      policy.kind === 'throttled'
        ? (await this.#passes(job.id, report, policy.minIntervalMs)) ? [policy.event(projectJob, report)] : []
        : await Promise.all((await this.#crossedMarks(job.id, policy.reached(report))).map((mark) => policy.event(projectJob, mark, report)));
    for (const event of events) await this.#d.bus.publishToProject(job.projectId, event);
  }

  async #passes(jobId: string, report: ProgressReport, minIntervalMs: number): Promise<boolean> {
    const throttle = (this.#d.redis as unknown as { relayThrottle: ThrottleCommand }).relayThrottle.bind(this.#d.redis);
    return (await throttle(`progress-relay:${jobId}`, report.step, report.progress, this.#now(), minIntervalMs, STATE_TTL_MS)) === 1;
  }

  /** Marks reached for the first time: SADD answers 1 only to the first report that adds one. */
  async #crossedMarks(jobId: string, reached: readonly number[]): Promise<number[]> {
    if (reached.length === 0) return [];
    const key = `progress-marks:${jobId}`;
    const multi = this.#d.redis.multi();
    for (const mark of reached) multi.sadd(key, String(mark));
    const replies = await exec(multi.pexpire(key, STATE_TTL_MS));
    return reached.filter((_mark, index) => replies[index] === 1);
  }
}
