import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { pino } from 'pino';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { cutroomGroup, cutroomVersion } from '../../crds/contract/resources.ts';
import type { JobResource } from '../../crds/contract/resources.ts';
import { Cluster } from '../../operator/src/cluster.ts';
import { WatchedResources } from '../../operator/src/informer.ts';
import { startKubeSim } from '../kube-sim/index.ts';
import type { KubeSim } from '../kube-sim/index.ts';
import { jobOf, jobServiceIn, metricValue, resourceOf, startTestOperator } from './operator-support.ts';
import type { TestOperator } from './operator-support.ts';

/** The operator's watches: one per custom resource kind, one on its Jobs. */
const OPERATOR_WATCHES = 4;

describe('operator: watches recover', function () {
  this.timeout(30_000);
  let sim: KubeSim;
  let app: TestApp;
  let operator: TestOperator | undefined;
  let n = 0;
  let namespace: string;

  before(async () => {
    sim = await startKubeSim({ bookmarkIntervalMs: 0 });
    app = await startTestApp();
  });
  after(async () => {
    await app?.close();
    await sim?.close();
  });
  beforeEach(async () => {
    namespace = `watch-${++n}`;
  });
  afterEach(async () => {
    await operator?.stop();
    operator = undefined;
  });

  async function leadingOperator() {
    operator = await startTestOperator(sim, namespace);
    await sim.waitFor(() => operator!.isLeader, 3000);
    await sim.waitForWatches(OPERATOR_WATCHES, 3000);
    return operator;
  }

  /** Submits an artifact job and waits for the operator to have made its Job. */
  async function reconciledJob() {
    const job = await jobServiceIn(app.services, sim, namespace).submit(app.services.orm.em.fork(), {
      program: 'artifact',
      userId: randomUUID(),
      input: { sourceKey: 'media/x/source', contentType: 'video/mp4' },
    });
    const resource = await sim.waitFor(() => resourceOf(sim, 'ArtifactJob', namespace, `artifact-${job.id}`), 3000);
    return jobOf(sim, namespace, resource, 8000);
  }

  it('410 Gone (history compacted, watches dropped) → the informers list again, and what changed meanwhile is reconciled', async () => {
    const running = await leadingOperator();
    const before = sim.requests.length;
    sim.compact();
    sim.dropWatches();
    const job = await reconciledJob();
    expect(job.metadata!.name).to.match(/^cutroom-.*-artifact$/);
    await sim.waitForWatches(OPERATOR_WATCHES, 5000);
    const relists = sim.requests.slice(before).filter((r) => r.method === 'GET' && !r.query.has('watch') && r.path.endsWith('/artifactjobs'));
    expect(relists.length).to.be.at.least(1);
    // 410 is the informer's own business: no error, no restart.
    expect(await metricValue(running.metrics, 'cutroom_operator_watch_restarts_total')).to.equal(0);
  });

  it('an abruptly dropped connection stops the informers; they are restarted with backoff and later events are reconciled', async () => {
    const running = await leadingOperator();
    expect(sim.dropWatches({ abrupt: true })).to.equal(OPERATOR_WATCHES);
    await sim.waitForWatches(OPERATOR_WATCHES, 5000);
    expect(await metricValue(running.metrics, 'cutroom_operator_watch_restarts_total')).to.equal(OPERATOR_WATCHES);
    await reconciledJob();
  });

  it('a list that fails during recovery is retried until it succeeds', async () => {
    const running = await leadingOperator();
    const jobsPath = `/apis/batch/v1/namespaces/${namespace}/jobs`;
    sim.failNext({ method: 'GET', path: jobsPath, code: 500 }, 2);
    sim.compact();
    sim.dropWatches({ abrupt: true });
    await sim.waitForWatches(OPERATOR_WATCHES, 8000);
    expect(await metricValue(running.metrics, 'cutroom_operator_watch_restarts_total', { resource: 'jobs' })).to.be.at.least(2);
    await reconciledJob();
  });

  it('a stopped informer stays stopped: the abort of its own watch is not an error to restart on', async () => {
    const kubeConfig = sim.kubeConfig(namespace);
    const cluster = new Cluster(kubeConfig, namespace, 'test', pino({ level: 'silent' }));
    const retryMaxMs = 100;
    const restarts: number[] = [];
    const seen: string[] = [];
    const watched = new WatchedResources<JobResource>({
      resource: 'renderjobs',
      kubeConfig,
      path: `/apis/${cutroomGroup}/${cutroomVersion}/namespaces/${namespace}/renderjobs`,
      list: () => cluster.listResources('RenderJob'),
      onChange: (type, resource) => seen.push(`${type} ${resource.metadata.name}`),
      onRestart: () => restarts.push(Date.now()),
      retryBaseMs: 20,
      retryMaxMs,
      logger: pino({ level: 'silent' }),
    });
    const openBefore = sim.openWatches();
    await watched.start();
    await sim.waitForWatches(openBefore + 1);
    await watched.stop();
    await sim.waitFor(() => sim.openWatches() === openBefore, 2000);
    const requestsAfterStop = sim.requests.length;
    // The abort's error reached the informer before the server saw the watch close; a restart it
    // wrongly scheduled then (after at most retryMaxMs) would be due before this timer, and timers
    // run in the order they are due: this turn comes after it, whatever the load.
    await new Promise((resolve) => setTimeout(resolve, retryMaxMs + 1));
    expect(restarts).to.deep.equal([]);
    expect(sim.requests.slice(requestsAfterStop).filter((r) => r.path.includes(namespace))).to.deep.equal([]);
    expect(seen).to.deep.equal([]);
  });
});
