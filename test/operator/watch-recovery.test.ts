import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { pino } from 'pino';
import { BatchV1Api } from '@kubernetes/client-node';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { eventually } from '../support/wait.ts';
import { cutroomGroup, cutroomVersion } from '../../crds/contract/resources.ts';
import type { JobResource } from '../../crds/contract/resources.ts';
import { Cluster } from '../../operator/src/cluster.ts';
import { WatchedResources } from '../../operator/src/informer.ts';
import { applyCrds, kubeCluster, testNamespace } from '../support/kube-cluster.ts';
import type { KubeCluster } from '../support/kube-cluster.ts';
import { startFaultProxy } from '../support/kube-faults.ts';
import type { FaultProxy } from '../support/kube-faults.ts';
import { jobServiceWith, metricValue, operatorEnv, startTestOperatorWith } from './operator-support.ts';
import type { TestOperator } from './operator-support.ts';

/** The operator's watches: one per custom resource kind, one on its Jobs. */
const OPERATOR_WATCHES = 4;

/**
 * The operator's informers against the real API server, through a proxy that drops their
 * watches, cuts their connections, answers a compacted history's 410 and fails requests.
 */
describe('operator: watches recover (real API server, faults injected by a proxy)', function () {
  this.timeout(60_000);
  let cluster: KubeCluster;
  let proxy: FaultProxy;
  let app: TestApp;
  let operator: TestOperator | undefined;
  let namespace: string;

  before(async () => {
    cluster = await kubeCluster();
    await applyCrds(cluster);
    app = await startTestApp();
  });
  after(async () => {
    await app?.close();
  });
  beforeEach(async () => {
    namespace = await testNamespace(cluster, 'watch');
    proxy = await startFaultProxy(cluster);
  });
  afterEach(async () => {
    await operator?.stop();
    operator = undefined;
    await proxy.close();
  });

  async function leadingOperator() {
    operator = await startTestOperatorWith(proxy.kubeConfig(namespace), operatorEnv(namespace));
    await eventually(async () => (operator!.isLeader ? true : undefined), 'the operator to lead', 5000, 20);
    await proxy.waitForWatches(OPERATOR_WATCHES, 5000);
    return operator;
  }

  /** Submits an artifact job (straight to the server) and waits for the operator to have made its Job. */
  async function reconciledJob() {
    const job = await jobServiceWith(app.services, cluster.kubeConfig(namespace), namespace).submit(app.services.orm.em.fork(), {
      program: 'artifact',
      userId: randomUUID(),
      input: { sourceKey: 'media/x/source', contentType: 'video/mp4' },
    });
    const batch = cluster.kubeConfig(namespace).makeApiClient(BatchV1Api);
    return eventually(async () => (await batch.listNamespacedJob({ namespace, labelSelector: `cutroom.dev/job-id=${job.id}` })).items[0], `the Job of ${job.id}`, 10_000, 50);
  }

  it('410 Gone (history compacted, watches dropped) → the informers list again, and what changed meanwhile is reconciled', async () => {
    const running = await leadingOperator();
    const before = proxy.requests.length;
    await proxy.compact();
    proxy.dropWatches();
    const job = await reconciledJob();
    expect(job.metadata!.name).to.match(/^cutroom-.*-artifact$/);
    await proxy.waitForWatches(OPERATOR_WATCHES, 5000);
    const relists = proxy.requests.slice(before).filter((r) => r.method === 'GET' && !r.query.has('watch') && r.path.endsWith('/artifactjobs'));
    expect(relists.length).to.be.at.least(1);
    // 410 is the informer's own business: no error, no restart.
    expect(await metricValue(running.metrics, 'cutroom_operator_watch_restarts_total')).to.equal(0);
  });

  it('connections cut under every watch: the informers watch again and later events are reconciled', async () => {
    await leadingOperator();
    expect(proxy.dropWatches({ abrupt: true })).to.equal(OPERATOR_WATCHES);
    await proxy.waitForWatches(OPERATOR_WATCHES, 5000);
    await reconciledJob();
  });

  it('a list that fails during recovery (history compacted, connections cut) is retried until it succeeds', async () => {
    await leadingOperator();
    const jobsPath = `/apis/batch/v1/namespaces/${namespace}/jobs`;
    const failures = proxy.failNext({ method: 'GET', path: jobsPath, code: 500 }, 2);
    await proxy.compact();
    proxy.dropWatches({ abrupt: true });
    await proxy.waitForWatches(OPERATOR_WATCHES, 8000);
    expect(failures.hits(), 'both failing lists were asked for before the watches came back').to.equal(2);
    await reconciledJob();
  });

  it('a stopped informer stays stopped: the abort of its own watch is not an error to restart on', async () => {
    const kubeConfig = proxy.kubeConfig(namespace);
    const client = new Cluster(kubeConfig, namespace, 'test', pino({ level: 'silent' }));
    const retryMaxMs = 100;
    const restarts: number[] = [];
    const seen: string[] = [];
    const watched = new WatchedResources<JobResource>({
      resource: 'renderjobs',
      kubeConfig,
      path: `/apis/${cutroomGroup}/${cutroomVersion}/namespaces/${namespace}/renderjobs`,
      list: () => client.listResources('RenderJob'),
      onChange: (type, resource) => seen.push(`${type} ${resource.metadata.name}`),
      onRestart: () => restarts.push(Date.now()),
      retryBaseMs: 20,
      retryMaxMs,
      logger: pino({ level: 'silent' }),
    });
    await watched.start();
    await proxy.waitForWatches(1);
    await watched.stop();
    await eventually(async () => (proxy.openWatches() === 0 ? true : undefined), 'the watch to close', 2000, 10);
    const requestsAfterStop = proxy.requests.length;
    // The abort's error reached the informer before the proxy saw the watch close; a restart it
    // wrongly scheduled then (after at most retryMaxMs) would be due before this timer, and timers
    // run in the order they are due: this turn comes after it, whatever the load.
    await new Promise((resolve) => setTimeout(resolve, retryMaxMs + 1));
    expect(restarts).to.deep.equal([]);
    expect(proxy.requests.slice(requestsAfterStop).filter((r) => r.path.includes(namespace))).to.deep.equal([]);
    expect(seen).to.deep.equal([]);
  });
});
