import { expect } from 'chai';
import { pino } from 'pino';
import { CoordinationV1Api } from '@kubernetes/client-node';
import type { V1Lease } from '@kubernetes/client-node';
import { LeaderElector } from '../../operator/src/leader-election.ts';
import { startKubeSim } from '../kube-sim/index.ts';
import type { KubeSim } from '../kube-sim/index.ts';
import { sleep } from './operator-support.ts';

const leaseName = 'cutroom-operator';
const leaseDurationSeconds = 1;

describe('operator leader election through a coordination.k8s.io/v1 Lease', () => {
  let sim: KubeSim;
  let n = 0;
  let namespace: string;
  const electors: LeaderElector[] = [];

  before(async () => {
    sim = await startKubeSim({ bookmarkIntervalMs: 0 });
  });
  after(() => sim.close());
  beforeEach(() => {
    namespace = `lease-${++n}`;
  });
  afterEach(async () => {
    for (const elector of electors.splice(0)) await elector.stop({ release: false });
  });

  /** A replica whose leadership is logged in `terms` as [start ms, end ms]. */
  function replica(identity: string) {
    const terms: { start: number; end?: number }[] = [];
    const elector = new LeaderElector({
      api: sim.kubeConfig(namespace).makeApiClient(CoordinationV1Api),
      namespace,
      leaseName,
      identity,
      leaseDurationSeconds,
      renewDeadlineMs: 600,
      retryPeriodMs: 100,
      logger: pino({ level: 'silent' }),
      onStartedLeading: async () => {
        terms.push({ start: Date.now() });
      },
      onStoppedLeading: async () => {
        terms.at(-1)!.end = Date.now();
      },
    });
    electors.push(elector);
    return { identity, elector, terms };
  }

  /** operator-a leading, operator-b started and waiting on the Lease. */
  async function leaderAndFollower() {
    const a = replica('operator-a');
    a.elector.start();
    await sim.waitFor(() => a.elector.isLeader, 2000);
    const b = replica('operator-b');
    b.elector.start();
    await sleep(300);
    return { a, b };
  }

  const lease = () => sim.get('leases', namespace, leaseName) as V1Lease | undefined;

  it('the first replica creates the Lease with its identity, the lease duration and a renewTime, and leads', async () => {
    const a = replica('operator-a');
    a.elector.start();
    await sim.waitFor(() => a.elector.isLeader, 2000);
    const spec = lease()!.spec!;
    expect(spec).to.include({ holderIdentity: 'operator-a', leaseDurationSeconds, leaseTransitions: 0 });
    expect(String(spec.renewTime)).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const renewed = String(spec.renewTime);
    await sim.waitFor(() => String(lease()!.spec!.renewTime) !== renewed, 1000);
  });

  it('of two replicas starting together exactly one leads; the other keeps waiting while the Lease is renewed', async () => {
    const a = replica('operator-a');
    const b = replica('operator-b');
    a.elector.start();
    b.elector.start();
    await sim.waitFor(() => a.elector.isLeader || b.elector.isLeader, 2000);
    await sleep(leaseDurationSeconds * 1000 + 300);
    expect([a.elector.isLeader, b.elector.isLeader].filter(Boolean)).to.have.length(1);
    const leader = a.elector.isLeader ? a : b;
    expect(lease()!.spec!.holderIdentity).to.equal(leader.identity);
    expect((a.elector.isLeader ? b : a).terms).to.deep.equal([]);
  });

  it('a released Lease is taken over at once, with leaseTransitions counted', async () => {
    const { a, b } = await leaderAndFollower();
    const stoppedAt = Date.now();
    await a.elector.stop({ release: true });
    await sim.waitFor(() => b.elector.isLeader, 2000);
    expect(Date.now() - stoppedAt).to.be.below(leaseDurationSeconds * 1000);
    expect(lease()!.spec).to.include({ holderIdentity: 'operator-b', leaseTransitions: 1 });
  });

  it('when the leader stops renewing, another takes over only after the Lease expired, and never both lead at once', async () => {
    const { a, b } = await leaderAndFollower();
    const crashedAt = Date.now();
    await a.elector.stop({ release: false });
    await sim.waitFor(() => b.elector.isLeader, 4000);
    const waited = Date.now() - crashedAt;
    expect(waited).to.be.within(leaseDurationSeconds * 1000 - 150, leaseDurationSeconds * 1000 + 1000);
    expect(a.terms[0]!.end).to.be.at.most(b.terms[0]!.start);
  });

  it('a leader that cannot renew (API errors) steps down within the renew deadline, before the Lease expires', async () => {
    const a = replica('operator-a');
    a.elector.start();
    await sim.waitFor(() => a.elector.isLeader, 2000);
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${leaseName}`;
    const renewedAt = Date.parse(String(lease()!.spec!.renewTime));
    sim.failNext({ method: 'PUT', path: leasePath, code: 500 }, 1000);
    await sim.waitFor(() => !a.elector.isLeader, 2000);
    expect(a.terms[0]!.end! - renewedAt).to.be.below(leaseDurationSeconds * 1000);
  });

  it('a Lease another replica holds (written behind our back) makes the leader step down at its next renewal', async () => {
    const a = replica('operator-a');
    a.elector.start();
    await sim.waitFor(() => a.elector.isLeader, 2000);
    sim.mergePatch('leases', namespace, leaseName, { spec: { holderIdentity: 'intruder', renewTime: new Date().toISOString() } });
    await sim.waitFor(() => !a.elector.isLeader, 1000);
  });
});
