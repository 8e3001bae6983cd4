import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { JobMetrics } from '../../api/src/ops/metrics.ts';

/**
 * The operator's metrics: the job counters and duration histogram the local runner
 * also reports (JobMetrics; queue depth there is jobs waiting to start), plus the
 * operator's own work queue, reconcile errors, watch restarts and leadership.
 */
export class OperatorMetrics {
  readonly jobs: JobMetrics;
  readonly reconciles: Counter<'kind'>;
  readonly reconcileErrors: Counter<'kind'>;
  readonly workQueueDepth: Gauge<'kind'>;
  readonly watchRestarts: Counter<'resource'>;
  readonly leader: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.jobs = new JobMetrics(registry);
    this.reconciles = new Counter({ name: 'cutroom_operator_reconciles_total', help: 'Reconciles run, by kind.', labelNames: ['kind'], registers });
    this.reconcileErrors = new Counter({
      name: 'cutroom_operator_reconcile_errors_total',
      help: 'Reconciles that failed and were queued for a retry, by kind.',
      labelNames: ['kind'],
      registers,
    });
    this.workQueueDepth = new Gauge({
      name: 'cutroom_operator_work_queue_depth',
      help: 'Resources waiting in the operator work queue, by kind.',
      labelNames: ['kind'],
      registers,
    });
    this.watchRestarts = new Counter({
      name: 'cutroom_operator_watch_restarts_total',
      help: 'Watches restarted after an error, by resource.',
      labelNames: ['resource'],
      registers,
    });
    this.leader = new Gauge({ name: 'cutroom_operator_leader', help: '1 while this replica holds the Lease and reconciles, else 0.', registers });
    this.leader.set(0);
  }
}
