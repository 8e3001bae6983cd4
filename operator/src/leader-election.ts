import { V1MicroTime } from '@kubernetes/client-node';
import type { CoordinationV1Api, V1Lease } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { isApiStatus } from './cluster.ts';

export interface LeaderElectionOptions {
  api: CoordinationV1Api;
  namespace: string;
  leaseName: string;
  /** This replica's name in the Lease (POD_NAME). */
  identity: string;
  leaseDurationSeconds: number;
  /** The leader steps down when it has not renewed for this long (shorter than the lease). */
  renewDeadlineMs: number;
  /** How often the Lease is renewed, or tried by those waiting. */
  retryPeriodMs: number;
  logger: Logger;
  onStartedLeading(): Promise<void>;
  onStoppedLeading(): Promise<void>;
}

type Attempt = 'leading' | 'following';

/**
 * Leader election through a coordination.k8s.io/v1 Lease, as client-go does it: the
 * holder renews `renewTime` every retry period; the others take the Lease over once
 * they have seen it unchanged for `leaseDurationSeconds` by their own clock (no clock
 * skew matters); every write carries the resourceVersion it read, so of two replicas
 * writing at once one gets 409 and keeps waiting. A leader that cannot renew within
 * the renew deadline stops acting before anyone else may start.
 */
export class LeaderElector {
  readonly #options: LeaderElectionOptions;
  #leading = false;
  #stopped = true;
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> = Promise.resolve();
  /** Callbacks run one after another, so a quick loss never overtakes the start it ends. */
  #transitions: Promise<void> = Promise.resolve();
  /** The last Lease state seen and when (local clock), to tell an expired Lease from a live one. */
  #observed = { record: '', at: 0 };
  #lastRenewedAt = 0;

  constructor(options: LeaderElectionOptions) {
    this.#options = options;
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#schedule(0);
  }

  /**
   * Stops trying; a leader stops acting and, with `release` (a clean shutdown), hands the
   * Lease back so that another replica takes over at once instead of after it expires.
   */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#tick;
    if (this.#leading) this.#stepDown('stopping');
    await this.#transitions;
    // Also when an attempt in flight at stop() had just taken the Lease: #release checks the holder.
    if (options.release ?? true) await this.#release();
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#tick = this.#attempt().finally(() => this.#schedule(this.#options.retryPeriodMs));
    }, delayMs);
  }

  async #attempt(): Promise<void> {
    const startedAt = Date.now();
    let result: Attempt | 'failed';
    try {
      result = await this.#tryAcquireOrRenew(startedAt);
    } catch (error) {
      this.#options.logger.warn({ err: error, lease: this.#options.leaseName }, 'lease request failed');
      result = 'failed';
    }
    if (this.#stopped) return;
    if (result === 'leading') {
      // Measured from before the request: the server may have written it any time after.
      this.#lastRenewedAt = startedAt;
      if (!this.#leading) {
        this.#leading = true;
        this.#options.logger.info({ lease: this.#options.leaseName, identity: this.#options.identity }, 'started leading');
        this.#transitions = this.#transitions.then(() => this.#options.onStartedLeading()).catch((error: unknown) => {
          this.#options.logger.error({ err: error }, 'starting as leader failed');
        });
      }
    } else if (this.#leading && (result === 'following' || Date.now() - this.#lastRenewedAt >= this.#options.renewDeadlineMs)) {
      this.#stepDown(result === 'following' ? 'another replica holds the lease' : 'could not renew the lease in time');
    }
  }

  #stepDown(why: string): void {
    this.#leading = false;
    this.#options.logger.warn({ lease: this.#options.leaseName, identity: this.#options.identity, why }, 'stopped leading');
    this.#transitions = this.#transitions.then(() => this.#options.onStoppedLeading()).catch((error: unknown) => {
      this.#options.logger.error({ err: error }, 'stopping as leader failed');
    });
  }

  #observe(lease: V1Lease, now: number): void {
    const spec = lease.spec ?? {};
    const record = `${spec.holderIdentity ?? ''}|${String(spec.renewTime ?? '')}|${lease.metadata?.resourceVersion ?? ''}`;
    if (record !== this.#observed.record) this.#observed = { record, at: now };
  }

  async #tryAcquireOrRenew(now: number): Promise<Attempt> {
    const { api, namespace, leaseName: name, identity, leaseDurationSeconds } = this.#options;
    let lease: V1Lease;
    try {
      lease = await api.readNamespacedLease({ name, namespace });
    } catch (error) {
      if (!isApiStatus(error, 404)) throw error;
      const at = new V1MicroTime(now);
      try {
        const created = await api.createNamespacedLease({
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace },
            spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: at, renewTime: at, leaseTransitions: 0 },
          },
        });
        this.#observe(created, now);
        return 'leading';
      } catch (createError) {
        // Another replica created it first: it leads.
        if (isApiStatus(createError, 409)) return 'following';
        throw createError;
      }
    }

    this.#observe(lease, now);
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const mine = holder === identity;
    if (holder && !mine) {
      const durationMs = (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
      if (this.#observed.at + durationMs > now) return 'following';
    }
    const at = new V1MicroTime(now);
    try {
      const written = await api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          ...lease,
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds,
            acquireTime: mine && spec.acquireTime ? spec.acquireTime : at,
            renewTime: at,
            leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
          },
        },
      });
      this.#observe(written, now);
      return 'leading';
    } catch (error) {
      // Someone wrote the Lease since we read it (a renewal or a takeover): it is theirs.
      if (isApiStatus(error, 409)) return 'following';
      throw error;
    }
  }

  /** Empties the holder so that the next replica to try takes over without waiting. */
  async #release(): Promise<void> {
    const { api, namespace, leaseName: name, identity } = this.#options;
    try {
      const lease = await api.readNamespacedLease({ name, namespace });
      if (lease.spec?.holderIdentity !== identity) return;
      const at = new V1MicroTime();
      await api.replaceNamespacedLease({
        name,
        namespace,
        body: { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: at, renewTime: at } },
      });
      this.#options.logger.info({ lease: name, identity }, 'lease released');
    } catch (error) {
      // The Lease then expires on its own; the others just wait longer.
      this.#options.logger.warn({ err: error, lease: name }, 'could not release the lease');
    }
  }
}
