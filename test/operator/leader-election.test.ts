import { expect } from 'chai';
import { pino } from 'pino';
import { CoordinationV1Api, PatchStrategy, setHeaderOptions, V1MicroTime } from '@kubernetes/client-node';
import type { V1Lease } from '@kubernetes/client-node';
import { LeaderElector } from '../../operator/src/leader-election.ts';
import { eventually } from '../support/wait.ts';
import { kubeCluster, testNamespace } from '../support/kube-cluster.ts';
import type { KubeCluster } from '../support/kube-cluster.ts';
import { startFaultProxy } from '../support/kube-faults.ts';
import type { FaultProxy } from '../support/kube-faults.ts';

const leaseName = 'cutroom-operator';
const leaseDurationSeconds = 1;
const renewDeadlineMs = 600;

/** One Lease request of a replica, as it came back. */
interface LeaseCall {
  op: 'read' | 'create' | 'replace';
  ok: boolean;
  /** Date.now() when the answer (or the error) reached the replica. */
  settledAt: number;
  /** The Lease the server answered with. */
  lease?: V1Lease;
  /** The Lease the replica sent (create, replace). */
  sent?: V1Lease;
}

/** The replica's Lease API, recording every call in `calls` in the order they came back. */
function recordingLeaseApi(api: CoordinationV1Api, calls: LeaseCall[]): CoordinationV1Api {
  const record = (op: LeaseCall['op'], answer: Promise<V1Lease>, sent?: V1Lease) =>
    answer.then(
      (lease) => {
        calls.push({ op, ok: true, settledAt: Date.now(), lease, ...(sent ? { sent } : {}) });
        return lease;
      },
      (error: unknown) => {
        calls.push({ op, ok: false, settledAt: Date.now(), ...(sent ? { sent } : {}) });
        throw error;
      },
    );
  const recording = Object.create(api) as CoordinationV1Api;
  recording.readNamespacedLease = (param) => record('read', api.readNamespacedLease(param));
  recording.createNamespacedLease = (param) => record('create', api.createNamespacedLease(param), param.body);
  recording.replaceNamespacedLease = (param) => record('replace', api.replaceNamespacedLease(param), param.body);
  return recording;
}

/** A Lease time (a V1MicroTime, or its text) in epoch ms. */
const ms = (time: unknown) => new Date(time as string | Date).getTime();

/** Resolves once `check` holds, polling every few milliseconds; fails naming what it waited for. */
const until = (check: () => boolean, timeoutMs: number, what = 'the condition') => eventually(async () => (check() ? true : undefined), what, timeoutMs, 5);

describe('operator leader election through a real coordination.k8s.io/v1 Lease', function () {
  this.timeout(30_000);
  let cluster: KubeCluster;
  let proxy: FaultProxy;
  let namespace: string;
  const electors: LeaderElector[] = [];

  before(async () => {
    cluster = await kubeCluster();
  });
  beforeEach(async () => {
    namespace = await testNamespace(cluster, 'lease');
    proxy = await startFaultProxy(cluster);
  });
  afterEach(async () => {
    for (const elector of electors.splice(0)) await elector.stop({ release: false });
    await proxy.close();
  });

  /**
   * A replica whose leadership is logged in `terms` (start and end in ms, with how many Lease
   * calls had come back when it ended), whose Lease calls are recorded in `calls`, and whose
   * start() notes when it was started.
   */
  function replica(identity: string, leaseSeconds = leaseDurationSeconds) {
    const terms: { start: number; end?: number; callsAtEnd?: number }[] = [];
    const calls: LeaseCall[] = [];
    let startedAt = 0;
    const elector = new LeaderElector({
      api: recordingLeaseApi(proxy.kubeConfig(namespace).makeApiClient(CoordinationV1Api), calls),
      namespace,
      leaseName,
      identity,
      leaseDurationSeconds: leaseSeconds,
      renewDeadlineMs,
      retryPeriodMs: 100,
      logger: pino({ level: 'silent' }),
      onStartedLeading: async () => {
        terms.push({ start: Date.now() });
      },
      onStoppedLeading: async () => {
        Object.assign(terms.at(-1)!, { end: Date.now(), callsAtEnd: calls.length });
      },
    });
    electors.push(elector);
    return {
      identity,
      elector,
      terms,
      calls,
      get startedAt() {
        return startedAt;
      },
      start() {
        startedAt = Date.now();
        elector.start();
      },
    };
  }
  type Replica = ReturnType<typeof replica>;

  /** The Leases a replica read successfully, in order. */
  const reads = (r: Replica) => r.calls.filter((call) => call.op === 'read' && call.ok).map((call) => call.lease!);

  /** operator-a leading, operator-b started and seen following: it has read the Lease operator-a holds. */
  async function leaderAndFollower(leaseSeconds = leaseDurationSeconds) {
    const a = replica('operator-a', leaseSeconds);
    a.start();
    await until(() => a.elector.isLeader, 2000, 'operator-a to lead');
    const b = replica('operator-b', leaseSeconds);
    b.start();
    await until(() => reads(b).some((held) => held.spec?.holderIdentity === 'operator-a'), 2000, 'operator-b to read the Lease operator-a holds');
    return { a, b };
  }

  /** The Lease as the server has it now. */
  const lease = () => cluster.kubeConfig(namespace).makeApiClient(CoordinationV1Api).readNamespacedLease({ name: leaseName, namespace });

  it('the first replica creates the Lease with its identity, the lease duration and a renewTime, and leads', async () => {
    const a = replica('operator-a');
    a.start();
    await until(() => a.elector.isLeader, 2000, 'operator-a to lead');
    const spec = (await lease()).spec!;
    expect(spec).to.include({ holderIdentity: 'operator-a', leaseDurationSeconds, leaseTransitions: 0 });
    expect(String(spec.renewTime)).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const renewed = String(spec.renewTime);
    await eventually(async () => (String((await lease()).spec!.renewTime) !== renewed ? true : undefined), 'a renewal', 1000, 20);
  });

  it('of two replicas starting together exactly one leads; the other keeps waiting while the Lease is renewed', async () => {
    const a = replica('operator-a');
    const b = replica('operator-b');
    a.start();
    b.start();
    await until(() => a.elector.isLeader || b.elector.isLeader, 2000, 'a leader');
    const [leader, follower] = a.elector.isLeader ? [a, b] : [b, a];
    // Not a pause: wait until the follower has itself read the Lease renewed over more than its
    // duration, the span after which it would take over a Lease whose renewals had stopped.
    const renewalsSeen = () => reads(follower).map((read) => ms(read.spec?.renewTime));
    await until(() => Math.max(...renewalsSeen()) - Math.min(...renewalsSeen()) > leaseDurationSeconds * 1000, 5000, 'renewals over more than the lease duration');
    expect([a.elector.isLeader, b.elector.isLeader].filter(Boolean)).to.have.length(1);
    expect((await lease()).spec).to.include({ holderIdentity: leader.identity, leaseTransitions: 0 });
    expect(follower.terms).to.deep.equal([]);
    expect(follower.calls.some((call) => call.op === 'replace' && call.ok), 'the follower never wrote the Lease').to.equal(false);
  });

  it('a released Lease is taken over at once, with leaseTransitions counted', async () => {
    // An hour-long Lease: operator-b can only lead within this test through the release.
    const { a, b } = await leaderAndFollower(3600);
    await a.elector.stop({ release: true });
    await until(() => b.elector.isLeader, 5000, 'operator-b to lead');
    expect((await lease()).spec).to.include({ holderIdentity: 'operator-b', leaseTransitions: 1 });
    const takeover = b.calls.findIndex((call) => call.op === 'replace' && call.ok);
    expect(b.calls[takeover - 1]!.lease!.spec!.holderIdentity, 'the Lease operator-b read right before taking it').to.equal('');
  });

  it('when the leader stops renewing, another takes over only after the Lease expired, and never both lead at once', async () => {
    const { a, b } = await leaderAndFollower();
    await a.elector.stop({ release: false });
    // What operator-a left: still naming it (no release), so only its expiry lets operator-b in.
    const left = await lease();
    expect(left.spec!.holderIdentity).to.equal('operator-a');
    await until(() => b.elector.isLeader, 5000, 'operator-b to lead');

    const takeover = b.calls.find((call) => call.op === 'replace' && call.ok)!;
    expect(takeover.sent!.metadata!.resourceVersion, 'operator-b replaced the Lease operator-a left').to.equal(left.metadata!.resourceVersion);
    // operator-b counts the lease duration from the attempt that first read that Lease, an attempt
    // begun after its previous call came back (or after it was started); its takeover is stamped
    // with its own clock.
    const firstSeen = b.calls.findIndex((call) => call.op === 'read' && call.ok && call.lease!.metadata!.resourceVersion === left.metadata!.resourceVersion);
    expect(firstSeen).to.be.at.least(0);
    const waitingFrom = firstSeen > 0 ? b.calls[firstSeen - 1]!.settledAt : b.startedAt;
    expect(ms(takeover.sent!.spec!.acquireTime) - waitingFrom).to.be.at.least(leaseDurationSeconds * 1000);
    expect(a.terms[0]!.end).to.be.at.most(b.terms[0]!.start);
  });

  it('a leader that cannot renew (API errors) steps down at its first failed renewal past the renew deadline, which is shorter than the Lease', async () => {
    const a = replica('operator-a');
    a.start();
    await until(() => a.elector.isLeader, 2000, 'operator-a to lead');
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${leaseName}`;
    proxy.failNext({ method: 'PUT', path: leasePath, code: 500 }, 1000);
    const failingFrom = a.calls.length;
    await until(() => !a.elector.isLeader, 5000, 'operator-a to step down');
    await until(() => a.terms[0]!.end !== undefined, 1000, 'its term to end');
    // The last write of the Lease the server took (its creation, or a renewal; one in flight when
    // the failures began may still have been taken).
    const renewedAt = Math.max(...a.calls.filter((call) => call.op !== 'read' && call.ok).map((call) => ms(call.sent!.spec!.renewTime)));

    const deadline = renewedAt + renewDeadlineMs;
    const term = a.terms[0]!;
    // (A renewal the server took before the injection may still come back ok after it.)
    const failed = a.calls.slice(failingFrom, term.callsAtEnd).filter((call) => call.op === 'replace' && !call.ok);
    expect(failed.length).to.be.greaterThan(0);
    // Not before the deadline…
    expect(term.end).to.be.at.least(deadline);
    // …and at the first failed renewal that came back after it: every earlier one came back before it.
    expect(failed.slice(0, -1).filter((call) => call.settledAt >= deadline)).to.deep.equal([]);
    expect(renewDeadlineMs).to.be.below(leaseDurationSeconds * 1000);
  });

  it('a Lease another replica holds (written behind our back) makes the leader step down at its next renewal', async () => {
    const a = replica('operator-a');
    a.start();
    await until(() => a.elector.isLeader, 2000, 'operator-a to lead');
    await cluster.kubeConfig(namespace).makeApiClient(CoordinationV1Api).patchNamespacedLease(
      { name: leaseName, namespace, body: { spec: { holderIdentity: 'intruder', renewTime: new V1MicroTime() } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await until(() => !a.elector.isLeader, 1000, 'operator-a to step down');
  });
});
