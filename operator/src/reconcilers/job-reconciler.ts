import type { KubeConfig, V1Job } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { cutroomGroup, cutroomVersion, jobKinds } from '../../../crds/contract/resources.ts';
import type { JobKind, JobResource } from '../../../crds/contract/resources.ts';
import { imposedFailures, readJobOutcome, type JobCompletion, type JobFailed, type JobOutcome, type ObjectStorage } from '../../../api/src/job-host.ts';
import { jobSystemFailures } from '../../../crds/contract/outcome.ts';
import { buildJob, InvalidJobResource } from '../builders/job.ts';
import type { JobKindProfile } from '../builders/job.ts';
import { failureMessage, isTerminal, outOfMemory, kubeTime, mirroredStatus, observeJob, statusPatch } from '../builders/status.ts';
import type { JobObservation, MirroredState } from '../builders/status.ts';
import { apiStatusMessage, isApiStatus } from '../cluster.ts';
import type { Cluster } from '../cluster.ts';
import type { OperatorConfig } from '../config.ts';
import { WatchedResources } from '../informer.ts';
import type { OperatorMetrics } from '../metrics.ts';
import { WorkQueue } from '../queue.ts';

export interface ReconcilerDeps {
  kubeConfig: KubeConfig;
  cluster: Cluster;
  completion: JobCompletion;
  storage: ObjectStorage;
  config: OperatorConfig;
  metrics: OperatorMetrics;
  logger: Logger;
  /** The operator's Jobs as the Job informer last saw them. */
  jobs: { get(name: string, namespace: string): V1Job | undefined };
  /** Checked before every write: a replica that lost the Lease stops acting at once. */
  isLeader(): boolean;
}

/** How a run ended, with the status the resource gets for it. */
type Conclusion = { outcome: JobOutcome; state: MirroredState; observation?: JobObservation };

const nowTimestamp = () => kubeTime(new Date())!;

/** A run that ends failed before any Job outcome could be read (refused, lost). */
function failedRun(error: string, reason: string, code: string, generation: number, state: Partial<MirroredState> = {}): Conclusion {
  return { outcome: { ok: false, error, code, params: { detail: error } }, state: { ...state, phase: 'Failed', error, reason, finishedAt: nowTimestamp(), generation } };
}

/**
 * Held on every resource whose job is not settled yet: deleting the resource (the api's
 * cancel) then waits until the operator has settled the job as cancelled, even if the
 * operator was down when the deletion was asked for.
 */
export const completionFinalizer = 'cutroom.dev/job-completion';

/**
 * One kind's reconciler: an informer on its custom resources feeding a per-key work
 * queue, and the reconcile that turns a resource into its batch Job, mirrors the Job's
 * state into the resource's status and, once the Job has ended, runs the completion
 * handler before writing the final phase (so a restart that finds a final phase knows
 * the completion ran). The kinds differ only by their JobKindProfile.
 */
export class JobReconciler {
  readonly kind: JobKind;
  readonly #profile: JobKindProfile;
  readonly #deps: ReconcilerDeps;
  readonly #resources: WatchedResources<JobResource>;
  readonly #queue: WorkQueue;
  readonly #log: Logger;
  /** Progress and step last written to each running job's row. */
  readonly #mirrored = new Map<string, string>();
  #resync: NodeJS.Timeout | undefined;

  constructor(profile: JobKindProfile, deps: ReconcilerDeps) {
    this.kind = profile.kind;
    this.#profile = profile;
    this.#deps = deps;
    this.#log = deps.logger.child({ kind: profile.kind });
    const { config, metrics, cluster } = deps;
    const kind = profile.kind;
    this.#queue = new WorkQueue({
      process: (key) => this.#reconcileKey(key),
      concurrency: config.OPERATOR_WORKERS,
      retryBaseMs: config.OPERATOR_RETRY_BASE_MS,
      retryMaxMs: config.OPERATOR_RETRY_MAX_MS,
      onError: (key, error, attempt, retryInMs) => {
        metrics.reconcileErrors.inc({ kind });
        this.#log.warn({ err: error, key, attempt, retry_in_ms: retryInMs }, 'reconcile failed; retrying');
      },
      onDepth: (depth) => metrics.workQueueDepth.set({ kind }, depth),
    });
    const { plural } = jobKinds[kind];
    this.#resources = new WatchedResources<JobResource>({
      resource: plural,
      kubeConfig: deps.kubeConfig,
      path: `/apis/${cutroomGroup}/${cutroomVersion}/namespaces/${cluster.namespace}/${plural}`,
      list: () => cluster.listResources(kind),
      onChange: (_type, resource) => this.enqueue(resource.metadata.namespace ?? cluster.namespace, resource.metadata.name!),
      onRestart: () => metrics.watchRestarts.inc({ resource: plural }),
      retryBaseMs: config.OPERATOR_RETRY_BASE_MS,
      retryMaxMs: config.OPERATOR_RETRY_MAX_MS,
      logger: this.#log,
    });
  }

  /** Lists the kind's resources (each lands in the queue) and follows changes. */
  async start(): Promise<void> {
    await this.#resources.start();
    const every = this.#deps.config.OPERATOR_RESYNC_SECONDS;
    if (every > 0) {
      // A missed event is repaired by the next pass.
      this.#resync = setInterval(() => {
        for (const resource of this.#resources.list()) this.enqueue(resource.metadata.namespace!, resource.metadata.name!);
      }, every * 1000);
      this.#resync.unref();
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#resync);
    await this.#resources.stop();
    await this.#queue.stop();
  }

  enqueue(namespace: string, name: string): void {
    this.#queue.add(`${namespace}/${name}`);
  }

  async #reconcileKey(key: string): Promise<void> {
    const [namespace = '', name = ''] = key.split('/');
    if (!this.#deps.isLeader()) return;
    this.#deps.metrics.reconciles.inc({ kind: this.kind });
    try {
      const resource = this.#resources.get(name, namespace);
      if (resource) await this.reconcile(resource);
    } finally {
      this.#countWaiting();
    }
  }

  /**
   * Brings one resource a step closer to its Job's state; safe to run any number of times.
   * A resource is skipped once its final phase is written at its current generation; a
   * running one is not skipped at observedGeneration == generation, because its Job moves
   * while its spec stays the same.
   */
  async reconcile(resource: JobResource): Promise<void> {
    const { cluster, config } = this.#deps;
    const status = resource.status;
    const generation = resource.metadata.generation ?? 1;
    if (resource.metadata.deletionTimestamp) return this.#cancel(resource);
    // A final phase is written only after the completion ran: nothing is left to do.
    if (status && isTerminal(status.phase)) {
      if (status.observedGeneration !== generation) await cluster.patchResourceStatus(this.kind, resource.metadata.name!, { observedGeneration: generation });
      if (resource.metadata.finalizers?.includes(completionFinalizer)) await this.#releaseFinalizer(resource);
      return;
    }
    if (!resource.metadata.finalizers?.includes(completionFinalizer)) {
      if (!this.#deps.isLeader()) return;
      // Its change event brings the resource back with the finalizer, before any Job exists.
      await cluster.setFinalizers(resource, [...(resource.metadata.finalizers ?? []), completionFinalizer]);
      return;
    }

    let manifest: V1Job;
    try {
      manifest = buildJob(resource, this.#profile, config);
    } catch (error) {
      if (!(error instanceof InvalidJobResource)) throw error;
      return this.#conclude(resource, failedRun(error.message, 'InvalidJob', jobSystemFailures.invalidSpec, generation));
    }
    const jobName = manifest.metadata!.name!;
    let job = this.#deps.jobs.get(jobName, cluster.namespace) ?? (await cluster.readJob(jobName));
    if (!job) {
      if (status?.jobName) {
        // Deleted by hand, or its TTL ran out while no operator was watching: the outcome is lost.
        const error = `The Job ${status.jobName} was deleted before its outcome was recorded.`;
        return this.#conclude(resource, failedRun(error, 'JobLost', jobSystemFailures.lost, generation, { jobName, startedAt: status.startedAt }));
      }
      if (!this.#deps.isLeader()) return;
      let created;
      try {
        created = await cluster.createJob(manifest);
      } catch (error) {
        // The API server refuses the Job itself (invalid, not a passing outage): retrying cannot help.
        if (!isApiStatus(error, 422) && !isApiStatus(error, 400)) throw error;
        return this.#conclude(resource, failedRun(`The cluster refused the Job: ${apiStatusMessage(error)}`, 'JobRejected', jobSystemFailures.rejected, generation));
      }
      job = created.job;
      if (created.created) {
        this.#deps.metrics.jobs.created.inc({ kind: this.kind });
        this.#log.info({ resource: resource.metadata.name, job: jobName, job_id: resource.spec.jobId }, 'job created');
        await cluster.recordEvent(resource, 'Normal', 'JobCreated', `Created Job ${jobName}`);
      }
    }

    const observation = observeJob(job);
    if (observation.phase !== 'Pending') await this.#mirrorProgress(resource, observation);
    if (isTerminal(observation.phase)) return this.#conclude(resource, await this.#conclusion(resource, job, observation));
    await this.#writeStatus(resource, { phase: observation.phase, jobName, startedAt: observation.startedAt, generation });
  }

  /**
   * The outcome of a finished Job through the api's one outcome reader (result.json or
   * error.json), with what only the cluster knows — the deadline, an OOM kill — taking
   * precedence over what the stopped program wrote.
   */
  async #conclusion(resource: JobResource, job: V1Job, observation: JobObservation): Promise<Conclusion> {
    const base = {
      jobName: job.metadata!.name!,
      startedAt: observation.startedAt,
      finishedAt: observation.finishedAt ?? nowTimestamp(),
      generation: resource.metadata.generation ?? 1,
    };
    const succeeded = observation.phase === 'Succeeded';
    const pods = succeeded ? [] : await this.#deps.cluster.listJobPods(base.jobName);
    // The Job's own deadline is the spec's timeout (buildJob); the spec is the fallback for a Job edited by hand.
    const deadline = job.spec?.activeDeadlineSeconds ?? resource.spec.timeoutSeconds ?? this.#deps.config.JOB_TIMEOUT_SECONDS;
    const imposed: JobFailed | undefined =
      !succeeded && observation.failure?.reason === 'DeadlineExceeded'
        ? imposedFailures.timedOut(deadline)
        : !succeeded && outOfMemory(pods)
          ? imposedFailures.outOfMemory()
          : undefined;
    const crashDetail = succeeded ? 'no result' : failureMessage(job, observation.failure, pods);
    const outcome = await readJobOutcome(this.#deps.storage, resource.spec.outputPrefix, { exitedCleanly: succeeded, crashDetail, ...(imposed ? { imposed } : {}) });
    if (outcome.ok) return { outcome, observation, state: { ...base, phase: 'Succeeded' } };
    const reason = succeeded ? 'NoResult' : imposed?.code === jobSystemFailures.outOfMemory ? 'OOMKilled' : observation.failure?.reason;
    return { outcome, observation, state: { ...base, phase: 'Failed', error: outcome.error, reason } };
  }

  /**
   * Settles the job in PostgreSQL (exactly once: a second call finds it settled), then
   * writes the final phase. The resource is read afresh first, because the informer's
   * copy may not show a final phase this operator already wrote.
   */
  async #conclude(cached: JobResource, { outcome, state, observation }: Conclusion): Promise<void> {
    const { cluster, completion, metrics } = this.#deps;
    const resource = await cluster.readResource(this.kind, cached.metadata.name!);
    if (!resource || resource.metadata.uid !== cached.metadata.uid || isTerminal(resource.status?.phase)) return;
    if (!this.#deps.isLeader()) return;
    const settled = await completion.complete(resource.spec.jobId, outcome);
    if (settled) {
      (outcome.ok ? metrics.jobs.succeeded : metrics.jobs.failed).inc({ kind: this.kind });
      const started = observation?.startedAt ? Date.parse(observation.startedAt) : Number.NaN;
      const finished = state.finishedAt ? Date.parse(state.finishedAt) : Number.NaN;
      if (Number.isFinite(started) && Number.isFinite(finished)) {
        metrics.jobs.duration.observe({ kind: this.kind, outcome: outcome.ok ? 'succeeded' : 'failed' }, Math.max(0, (finished - started) / 1000));
      }
    }
    this.#log.info({ resource: resource.metadata.name, job_id: resource.spec.jobId, phase: state.phase, settled }, 'job finished');
    await this.#writeStatus(resource, state);
    await cluster.recordEvent(
      resource,
      state.phase === 'Succeeded' ? 'Normal' : 'Warning',
      state.phase === 'Succeeded' ? 'JobSucceeded' : 'JobFailed',
      state.phase === 'Succeeded' ? `Job ${state.jobName} succeeded` : `Job ${state.jobName ?? '(none)'} failed: ${state.error ?? ''}`,
    );
  }

  /** A resource being deleted before its job settled: the job ends cancelled (the Job goes with the resource). */
  async #cancel(resource: JobResource): Promise<void> {
    if (!resource.metadata.finalizers?.includes(completionFinalizer) || !this.#deps.isLeader()) return;
    this.#mirrored.delete(resource.spec.jobId);
    if (!isTerminal(resource.status?.phase)) {
      const settled = await this.#deps.completion.complete(resource.spec.jobId, { ok: false, ...imposedFailures.cancelled() });
      if (settled) this.#deps.metrics.jobs.failed.inc({ kind: this.kind });
      this.#log.info({ resource: resource.metadata.name, job_id: resource.spec.jobId, settled }, 'job cancelled');
    }
    await this.#releaseFinalizer(resource);
  }

  async #releaseFinalizer(resource: JobResource): Promise<void> {
    if (!this.#deps.isLeader()) return;
    await this.#deps.cluster.setFinalizers(resource, (resource.metadata.finalizers ?? []).filter((name) => name !== completionFinalizer));
  }

  /**
   * The jobs row follows the run as under the local backend: running from when the Job
   * started, then the progress, step and time left the program patches into the resource's status.
   */
  async #mirrorProgress(resource: JobResource, observation: JobObservation): Promise<void> {
    const { jobId } = resource.spec;
    const status = resource.status;
    const started = status?.phase !== 'Running' && observation.startedAt ? { status: 'running' as const, startedAt: new Date(observation.startedAt) } : {};
    const reported = {
      ...(status?.progress !== undefined ? { progress: status.progress, etaSeconds: status.etaSeconds ?? null } : {}),
      ...(status?.step !== undefined ? { step: status.step } : {}),
    };
    // Most events of a running resource are not progress: write only what moved.
    const seen = JSON.stringify(reported);
    const moved = this.#mirrored.get(jobId) !== seen;
    if (!('status' in started) && !moved) return;
    await this.#deps.completion.markProgress(jobId, { ...started, ...(moved ? reported : {}) });
    if (isTerminal(observation.phase)) this.#mirrored.delete(jobId);
    else this.#mirrored.set(jobId, seen);
  }

  async #writeStatus(resource: JobResource, state: MirroredState): Promise<void> {
    const patch = statusPatch(resource.status, mirroredStatus(resource.status, state, nowTimestamp()));
    if (!patch || !this.#deps.isLeader()) return;
    await this.#deps.cluster.patchResourceStatus(this.kind, resource.metadata.name!, patch);
  }

  /** Jobs of this kind not started yet: JobMetrics' queue depth, as the local runner reports it. */
  #countWaiting(): void {
    const waiting = this.#resources.list().filter((resource) => (resource.status?.phase ?? 'Pending') === 'Pending').length;
    this.#deps.metrics.jobs.queueDepth.set({ kind: this.kind }, waiting);
  }
}
