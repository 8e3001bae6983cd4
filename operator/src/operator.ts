import { CoordinationV1Api, KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { DomainConfig } from '../../api/src/config.ts';
import { createJobHost } from '../../api/src/job-host.ts';
import { KubernetesJobDispatcher } from '../../api/src/jobs/kubernetes-dispatcher.ts';
import { createMetricsRegistry } from '../../api/src/ops/metrics.ts';
import { Cluster } from './cluster.ts';
import type { OperatorConfig } from './config.ts';
import { JobControllers } from './controllers.ts';
import { LeaderElector } from './leader-election.ts';
import { OperatorMetrics } from './metrics.ts';
import { startOpsServer } from './ops-server.ts';

export interface OperatorOptions {
  /** The domain's slice of the api's variables: database, Redis, S3, jobs and log level (the operator runs the completion handlers). */
  config: DomainConfig;
  operatorConfig: OperatorConfig;
  /** The cluster (tests: the control plane of test/support/kube-cluster.ts); in-cluster or ~/.kube/config by default. */
  kubeConfig?: KubeConfig;
  logDestination?: DestinationStream;
}

export interface RunningOperator {
  /** Address of /healthz and /metrics. */
  url: string;
  identity: string;
  readonly isLeader: boolean;
  /** The leader's controllers, undefined on a follower. */
  readonly controllers: JobControllers | undefined;
  metrics: Registry;
  logger: Logger;
  /** A clean shutdown releases the Lease; `release: false` leaves it to expire, as a crash would. */
  stop(options?: { release?: boolean }): Promise<void>;
}

function defaultKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig;
}

/**
 * The operator's composition root: services from config, leader election through the
 * Lease, the controllers while leading, and the metrics and health server throughout.
 */
export async function startOperator(options: OperatorOptions): Promise<RunningOperator> {
  const { config, operatorConfig } = options;
  const identity = operatorConfig.POD_NAME;
  const logger = pino({ level: config.LOG_LEVEL, base: { service: 'cutroom-operator', pod: identity } }, options.logDestination);
  const registry = createMetricsRegistry();
  const metrics = new OperatorMetrics(registry);
  const kubeConfig = options.kubeConfig ?? defaultKubeConfig();
  // The same job host the api builds: completions settle jobs exactly as under the local backend.
  // Kubernetes jobs not yet turned into resources (follow-ups a completion asked for, rows an api
  // replica could not hand over) are dispatched by the operator too: creation is idempotent by name.
  // uncounted here: cutroom_jobs_created_total of the operator counts the batch Jobs its reconcilers make
  const host = await createJobHost(config, {
    logger,
    dispatcher: () => new KubernetesJobDispatcher(kubeConfig, operatorConfig.KUBE_NAMESPACE),
  });
  const { completion, storage } = host;
  await host.start();
  const cluster = new Cluster(kubeConfig, operatorConfig.KUBE_NAMESPACE, identity, logger);

  let controllers: JobControllers | undefined;
  const elector: LeaderElector = new LeaderElector({
    api: kubeConfig.makeApiClient(CoordinationV1Api),
    namespace: operatorConfig.KUBE_NAMESPACE,
    leaseName: operatorConfig.OPERATOR_LEASE_NAME,
    identity,
    leaseDurationSeconds: operatorConfig.OPERATOR_LEASE_DURATION_SECONDS,
    renewDeadlineMs: operatorConfig.OPERATOR_LEASE_RENEW_DEADLINE_SECONDS * 1000,
    retryPeriodMs: operatorConfig.OPERATOR_LEASE_RETRY_PERIOD_SECONDS * 1000,
    logger,
    onStartedLeading: async () => {
      metrics.leader.set(1);
      controllers = new JobControllers({
        kubeConfig,
        cluster,
        completion,
        storage,
        config: operatorConfig,
        metrics,
        logger,
        isLeader: () => elector.isLeader,
      });
      await controllers.start();
    },
    onStoppedLeading: async () => {
      metrics.leader.set(0);
      const leaving = controllers;
      controllers = undefined;
      await leaving?.stop();
    },
  });

  const server = await startOpsServer({
    host: operatorConfig.OPERATOR_METRICS_HOST,
    port: operatorConfig.OPERATOR_METRICS_PORT,
    registry,
    isLeader: () => elector.isLeader,
  });
  elector.start();
  logger.info({ namespace: operatorConfig.KUBE_NAMESPACE, lease: operatorConfig.OPERATOR_LEASE_NAME, metrics: server.url }, 'operator started');

  return {
    url: server.url,
    identity,
    get isLeader() {
      return elector.isLeader;
    },
    get controllers() {
      return controllers;
    },
    metrics: registry,
    logger,
    async stop(stopOptions = {}) {
      await elector.stop(stopOptions);
      await server.close();
      await host.close();
      logger.info('operator stopped');
    },
  };
}
