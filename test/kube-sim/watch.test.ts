import { expect } from 'chai';
import { CustomObjectsApi, makeInformer, Watch } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { cutroomGroup, cutroomVersion } from '../../crds/contract/resources.ts';
import { startKubeSim } from './index.ts';
import type { KubeObject, KubeSim } from './index.ts';
import { jobResourceBody, sampleSpec } from './samples.ts';

const group = cutroomGroup;
const version = cutroomVersion;
const plural = 'renderjobs';

type Seen = { type: string; object: KubeObject & { code?: number; reason?: string } };

// A raw watch through client-node's Watch, recording events and how it ended.
async function openWatch(kc: KubeConfig, path: string, params: Record<string, string>) {
  const events: Seen[] = [];
  let ended: { error: unknown } | undefined;
  const controller = await new Watch(kc).watch(
    path,
    params,
    (type, object) => events.push({ type, object: object as Seen['object'] }),
    (error) => {
      ended = { error };
    },
  );
  return { events, controller, ended: () => ended };
}

describe('kube-sim: watch and informers', () => {
  let sim: KubeSim;
  let kc: KubeConfig;
  let api: CustomObjectsApi;
  let n = 0;
  let namespace: string;
  let path: string;
  const stoppers: (() => unknown)[] = [];

  before(async () => {
    sim = await startKubeSim({ bookmarkIntervalMs: 0 });
    kc = sim.kubeConfig();
    api = kc.makeApiClient(CustomObjectsApi);
  });
  after(() => sim.close());
  beforeEach(() => {
    namespace = `w${++n}`;
    path = `/apis/${group}/${version}/namespaces/${namespace}/${plural}`;
  });
  afterEach(async () => {
    for (const stop of stoppers.splice(0)) await stop();
  });

  const create = (name: string, labels: Record<string, string> = {}) =>
    sim.create(plural, namespace, jobResourceBody('RenderJob', name, sampleSpec(), labels));

  it('a watch from a list resourceVersion gets ADDED, MODIFIED, DELETED in order with rising resourceVersions', async () => {
    create('before');
    const rv = String(sim.resourceVersion());
    const watch = await openWatch(kc, path, { resourceVersion: rv });
    stoppers.push(() => watch.controller.abort());
    create('a');
    sim.mergePatch(plural, namespace, 'a', { status: { phase: 'Running' } }, 'status');
    sim.delete(plural, namespace, 'a');
    await sim.waitFor(() => watch.events.length >= 3, 2000);
    expect(watch.events.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(['ADDED a', 'MODIFIED a', 'DELETED a']);
    const rvs = watch.events.map((e) => Number(e.object.metadata.resourceVersion));
    expect(rvs[0]).to.be.greaterThan(Number(rv));
    expect(rvs).to.deep.equal([...rvs].sort((x, y) => x - y));
    expect((watch.events[1]!.object.status as { phase: string }).phase).to.equal('Running');
  });

  it('a watch without resourceVersion starts with the current objects as ADDED', async () => {
    create('a');
    create('b');
    const watch = await openWatch(kc, path, {});
    stoppers.push(() => watch.controller.abort());
    await sim.waitFor(() => watch.events.length >= 2, 2000);
    expect(watch.events.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(['ADDED a', 'ADDED b']);
  });

  it('a watch from an older resourceVersion replays what it missed', async () => {
    const rv = String(sim.resourceVersion());
    create('a');
    sim.mergePatch(plural, namespace, 'a', { metadata: { labels: { x: 'y' } } });
    const watch = await openWatch(kc, path, { resourceVersion: rv });
    stoppers.push(() => watch.controller.abort());
    await sim.waitFor(() => watch.events.length >= 2, 2000);
    expect(watch.events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED']);
  });

  it('allowWatchBookmarks=true → BOOKMARK events carrying the current resourceVersion', async () => {
    const rv = String(sim.resourceVersion());
    const plain = await openWatch(kc, path, { resourceVersion: rv });
    const watch = await openWatch(kc, path, { resourceVersion: rv, allowWatchBookmarks: 'true' });
    stoppers.push(() => watch.controller.abort(), () => plain.controller.abort());
    sim.create('leases', namespace, { metadata: { name: 'elsewhere' }, spec: {} });
    sim.sendBookmarks();
    await sim.waitFor(() => watch.events.length >= 1, 2000);
    expect(watch.events[0]).to.deep.equal({
      type: 'BOOKMARK',
      object: { kind: 'RenderJob', apiVersion: 'cutroom.dev/v1alpha1', metadata: { resourceVersion: String(sim.resourceVersion()) } },
    });
    expect(plain.events).to.deep.equal([]);
  });

  it('bookmarks also arrive on their own every bookmarkIntervalMs', async () => {
    const ticking = await startKubeSim({ bookmarkIntervalMs: 30 });
    stoppers.push(() => ticking.close());
    const watch = await openWatch(ticking.kubeConfig(), path, { resourceVersion: '0', allowWatchBookmarks: 'true' });
    stoppers.push(() => watch.controller.abort());
    await ticking.waitFor(() => watch.events.length >= 2, 2000);
    expect(watch.events.every((e) => e.type === 'BOOKMARK')).to.equal(true);
  });

  it('a labelSelector watch sees objects entering the selector as ADDED and leaving it as DELETED', async () => {
    const watch = await openWatch(kc, path, { resourceVersion: String(sim.resourceVersion()), labelSelector: 'stage in (render),owner!=nobody' });
    stoppers.push(() => watch.controller.abort());
    create('a', { stage: 'render' });
    create('other', { stage: 'analyse' });
    sim.mergePatch(plural, namespace, 'a', { metadata: { labels: { stage: 'done' } } });
    sim.mergePatch(plural, namespace, 'a', { metadata: { labels: { stage: 'render' } } });
    sim.mergePatch(plural, namespace, 'a', { status: { progress: 10 } }, 'status');
    sim.delete(plural, namespace, 'a');
    await sim.waitFor(() => watch.events.length >= 5, 2000);
    expect(watch.events.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal([
      'ADDED a',
      'DELETED a',
      'ADDED a',
      'MODIFIED a',
      'DELETED a',
    ]);
  });

  it('a fieldSelector on metadata.name watches one object', async () => {
    const watch = await openWatch(kc, path, { resourceVersion: String(sim.resourceVersion()), fieldSelector: 'metadata.name=b' });
    stoppers.push(() => watch.controller.abort());
    create('a');
    create('b');
    await sim.waitFor(() => watch.events.length >= 1, 2000);
    expect(watch.events.map((e) => e.object.metadata.name)).to.deep.equal(['b']);
  });

  it('a watch from a compacted resourceVersion → ERROR event with a 410 Status, then the stream ends', async () => {
    const rv = String(sim.resourceVersion());
    create('a');
    sim.compact();
    const watch = await openWatch(kc, path, { resourceVersion: rv });
    await sim.waitFor(() => watch.ended(), 2000);
    expect(watch.events).to.have.length(1);
    expect(watch.events[0]!.type).to.equal('ERROR');
    expect(watch.events[0]!.object).to.include({ kind: 'Status', code: 410, reason: 'Expired' });
    expect(watch.ended()!.error).to.equal(null);
  });

  it('timeoutSeconds ends the watch from the server side', async () => {
    const watch = await openWatch(kc, path, { resourceVersion: String(sim.resourceVersion()), timeoutSeconds: '1' });
    await sim.waitFor(() => watch.ended(), 3000);
    expect(watch.ended()!.error).to.equal(null);
  });

  describe('informer (makeInformer)', () => {
    const informerFor = () => {
      const informer = makeInformer<KubernetesObject>(
        kc,
        path,
        () => api.listNamespacedCustomObject({ group, version, namespace, plural }),
      );
      stoppers.push(() => informer.stop());
      return informer;
    };
    const names = (objects: readonly KubernetesObject[]) => objects.map((o) => o.metadata?.name).sort();

    it('lists, then follows adds, updates and deletes', async () => {
      create('a');
      const informer = informerFor();
      const seen: string[] = [];
      informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
      informer.on('update', (o) => seen.push(`update ${o.metadata?.name}`));
      informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
      await informer.start();
      await sim.waitForWatches(1);
      create('b');
      sim.mergePatch(plural, namespace, 'a', { status: { phase: 'Running' } }, 'status');
      sim.delete(plural, namespace, 'b');
      await sim.waitFor(() => seen.length >= 4, 2000);
      expect(seen).to.deep.equal(['add a', 'add b', 'update a', 'delete b']);
    });

    it('recovers from 410 Gone by listing again, and catches up on what changed meanwhile', async () => {
      create('a');
      create('gone-soon');
      const informer = informerFor();
      const errors: unknown[] = [];
      const deleted: string[] = [];
      informer.on('error', (e) => errors.push(e));
      informer.on('delete', (o) => deleted.push(o.metadata!.name!));
      await informer.start();
      await sim.waitForWatches(1);
      const before = sim.requests.length;

      sim.compact();
      sim.dropWatches();
      create('b');
      sim.delete(plural, namespace, 'gone-soon');

      await sim.waitFor(() => names(informer.list(namespace)).join() === 'a,b', 5000);
      expect(deleted).to.deep.equal(['gone-soon']);
      expect(errors).to.deep.equal([]);
      const relists = sim.requests.slice(before).filter((r) => r.method === 'GET' && r.path === path && !r.query.has('watch'));
      expect(relists).to.have.length(1);
      await sim.waitForWatches(1);
    });

    it('an abruptly dropped connection stops the informer with an error (the operator must restart it)', async () => {
      const informer = informerFor();
      const errors: unknown[] = [];
      informer.on('error', (e) => errors.push(e));
      await informer.start();
      await sim.waitForWatches(1);
      expect(sim.dropWatches({ abrupt: true })).to.equal(1);
      await sim.waitFor(() => errors.length > 0, 2000);
      await informer.start();
      await sim.waitForWatches(1);
      create('after-restart');
      await sim.waitFor(() => informer.get('after-restart', namespace), 2000);
    });
  });
});
