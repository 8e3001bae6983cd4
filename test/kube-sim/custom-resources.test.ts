import { expect } from 'chai';
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { cutroomGroup, cutroomVersion } from '../../crds/contract/resources.ts';
import { startKubeSim } from './index.ts';
import type { KubeObject, KubeSim } from './index.ts';
import { apiStatus, jobResourceBody, sampleSpec } from './samples.ts';

const group = cutroomGroup;
const version = cutroomVersion;
const plural = 'renderjobs';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

describe('kube-sim: custom resources through CustomObjectsApi', () => {
  let sim: KubeSim;
  let api: CustomObjectsApi;
  let n = 0;
  let namespace: string;

  before(async () => {
    sim = await startKubeSim();
    api = sim.kubeConfig().makeApiClient(CustomObjectsApi);
  });
  after(() => sim.close());
  beforeEach(() => {
    namespace = `ns${++n}`;
  });

  const create = (name: string, spec: object = sampleSpec(), labels: Record<string, string> = {}) =>
    api.createNamespacedCustomObject({ group, version, namespace, plural, body: jobResourceBody('RenderJob', name, spec, labels) }) as Promise<KubeObject>;
  const get = (name: string) => api.getNamespacedCustomObject({ group, version, namespace, plural, name }) as Promise<KubeObject>;

  it('create sets uid, creationTimestamp, generation 1 and a resourceVersion, and drops status', async () => {
    const body = { ...jobResourceBody('RenderJob', 'a'), status: { phase: 'Succeeded' } };
    const created = (await api.createNamespacedCustomObject({ group, version, namespace, plural, body })) as KubeObject;
    expect(created.metadata.uid).to.match(/^[0-9a-f-]{36}$/);
    expect(created.metadata.creationTimestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(created.metadata.generation).to.equal(1);
    expect(Number(created.metadata.resourceVersion)).to.be.greaterThan(0);
    expect(created.metadata.namespace).to.equal(namespace);
    expect(created.status).to.equal(undefined);
    expect(await get('a')).to.deep.equal(created);
  });

  it('resourceVersion is one counter across all kinds, increasing with every write', async () => {
    const a = await create('a');
    sim.create('leases', namespace, { metadata: { name: 'l' }, spec: {} });
    const b = await create('b');
    expect(Number(b.metadata.resourceVersion)).to.equal(Number(a.metadata.resourceVersion) + 2);
  });

  it('get of a missing object → 404 NotFound Status', async () => {
    const status = await apiStatus(get('nope'), 404);
    expect(status).to.include({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 });
    expect(status.message).to.equal('renderjobs.cutroom.dev "nope" not found');
    expect(status.details).to.deep.equal({ name: 'nope', group, kind: plural });
  });

  it('create of an existing name → 409 AlreadyExists', async () => {
    await create('a');
    const status = await apiStatus(create('a'), 409);
    expect(status.reason).to.equal('AlreadyExists');
  });

  it('generateName gets a five-character suffix', async () => {
    const body = { ...jobResourceBody('RenderJob', ''), metadata: { generateName: 'render-' } };
    const created = (await api.createNamespacedCustomObject({ group, version, namespace, plural, body })) as KubeObject;
    expect(created.metadata.name).to.match(/^render-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('an invalid spec → 422 Invalid naming each field', async () => {
    const { outputPrefix: _dropped, ...spec } = sampleSpec({ jobId: 'not-a-uuid', timeoutSeconds: 1.5 });
    const status = await apiStatus(create('bad', spec), 422);
    expect(status.reason).to.equal('Invalid');
    expect(status.message).to.match(/^RenderJob\.cutroom\.dev "bad" is invalid: \[/);
    const fields = status.details?.causes?.map((c) => c.field);
    expect(fields).to.include.members(['spec.jobId', 'spec.outputPrefix', 'spec.timeoutSeconds']);
    expect(status.message).to.contain('spec.outputPrefix: Required value');
    expect(sim.get(plural, namespace, 'bad')).to.equal(undefined);
  });

  it('a bad object name → 422 Invalid on metadata.name', async () => {
    const status = await apiStatus(create('Not_Valid'), 422);
    expect(status.details?.causes?.[0]?.field).to.equal('metadata.name');
  });

  it('unknown fields are pruned, input keeps everything', async () => {
    await create('a', { ...sampleSpec({ input: { anything: { deep: [1, 2] } } }), colour: 'red' });
    const stored = sim.get(plural, namespace, 'a')!;
    expect(stored.spec).to.not.have.property('colour');
    expect((stored.spec as { input: unknown }).input).to.deep.equal({ anything: { deep: [1, 2] } });
  });

  it('PUT with a stale resourceVersion → 409 Conflict', async () => {
    const created = await create('a');
    await api.patchNamespacedCustomObject({ group, version, namespace, plural, name: 'a', body: { metadata: { labels: { x: 'y' } } } }, merge);
    const stale = { ...created, spec: sampleSpec({ program: 'transcribe' }) };
    const status = await apiStatus(api.replaceNamespacedCustomObject({ group, version, namespace, plural, name: 'a', body: stale }), 409);
    expect(status.reason).to.equal('Conflict');
    expect(status.message).to.contain('the object has been modified');
  });

  it('PUT of a custom resource without resourceVersion → 422', async () => {
    const created = await create('a');
    const { resourceVersion: _rv, ...metadata } = created.metadata;
    const status = await apiStatus(
      api.replaceNamespacedCustomObject({ group, version, namespace, plural, name: 'a', body: { ...created, metadata } }),
      422,
    );
    expect(status.details?.causes?.[0]?.field).to.equal('metadata.resourceVersion');
  });

  it('PUT with the current resourceVersion replaces the spec and bumps generation', async () => {
    const created = await create('a');
    const replaced = (await api.replaceNamespacedCustomObject({
      group, version, namespace, plural, name: 'a',
      body: { ...created, spec: { ...(created.spec as object), program: 'transcribe' } },
    })) as KubeObject;
    expect((replaced.spec as { program: string }).program).to.equal('transcribe');
    expect(replaced.metadata.generation).to.equal(2);
    expect(replaced.metadata.uid).to.equal(created.metadata.uid);
  });

  it('merge patch with a stale metadata.resourceVersion → 409 Conflict', async () => {
    const created = await create('a');
    await create('b');
    await api.patchNamespacedCustomObject({ group, version, namespace, plural, name: 'a', body: { metadata: { labels: { a: 'b' } } } }, merge);
    const status = await apiStatus(
      api.patchNamespacedCustomObject(
        { group, version, namespace, plural, name: 'a', body: { metadata: { resourceVersion: created.metadata.resourceVersion }, spec: { program: 'x' } } },
        merge,
      ),
      409,
    );
    expect(status.reason).to.equal('Conflict');
  });

  it('JSON patch (the client default) applies operations in order; a failed test op → 422', async () => {
    await create('a');
    const patched = (await api.patchNamespacedCustomObject({
      group, version, namespace, plural, name: 'a',
      body: [
        { op: 'add', path: '/metadata/labels/stage', value: 'one' },
        { op: 'replace', path: '/spec/program', value: 'media-edit' },
        { op: 'remove', path: '/spec/projectId' },
      ],
    })) as KubeObject;
    expect(patched.metadata.labels).to.deep.equal({ stage: 'one' });
    expect(patched.spec).to.include({ program: 'media-edit' }).and.not.have.property('projectId');
    await apiStatus(
      api.patchNamespacedCustomObject({ group, version, namespace, plural, name: 'a', body: [{ op: 'test', path: '/spec/program', value: 'render' }] }),
      422,
    );
  });

  it('strategic merge patch of a custom resource → 415, as the API server answers', async () => {
    await create('a');
    const status = await apiStatus(
      api.patchNamespacedCustomObject({ group, version, namespace, plural, name: 'a', body: { metadata: { labels: { a: 'b' } } } }, strategic),
      415,
    );
    expect(status.reason).to.equal('UnsupportedMediaType');
  });

  it('status subresource writes change status only; the main resource ignores status', async () => {
    await create('a');
    const afterStatus = (await api.patchNamespacedCustomObjectStatus(
      { group, version, namespace, plural, name: 'a', body: { status: { phase: 'Running', progress: 40 }, spec: { program: 'ignored' } } },
      merge,
    )) as KubeObject;
    expect(afterStatus.status).to.deep.equal({ phase: 'Running', progress: 40 });
    expect((afterStatus.spec as { program: string }).program).to.equal('render');
    expect(afterStatus.metadata.generation).to.equal(1);

    const afterMain = (await api.patchNamespacedCustomObject(
      { group, version, namespace, plural, name: 'a', body: { status: { phase: 'Failed' }, spec: { program: 'transcribe' } } },
      merge,
    )) as KubeObject;
    expect(afterMain.status).to.deep.equal({ phase: 'Running', progress: 40 });
    expect(afterMain.metadata.generation).to.equal(2);
  });

  it('PUT to /status with the current resourceVersion replaces status', async () => {
    const created = await create('a');
    const updated = (await api.replaceNamespacedCustomObjectStatus({
      group, version, namespace, plural, name: 'a',
      body: { ...created, status: { phase: 'Pending', observedGeneration: 1 } },
    })) as KubeObject;
    expect(updated.status).to.deep.equal({ phase: 'Pending', observedGeneration: 1 });
    await apiStatus(
      api.replaceNamespacedCustomObjectStatus({ group, version, namespace, plural, name: 'a', body: { ...created, status: { phase: 'Running' } } }),
      409,
    );
  });

  it('an invalid status → 422 naming the status field', async () => {
    await create('a');
    const status = await apiStatus(
      api.patchNamespacedCustomObjectStatus({ group, version, namespace, plural, name: 'a', body: { status: { phase: 'Done', progress: 140 } } }, merge),
      422,
    );
    expect(status.details?.causes?.map((c) => c.field)).to.have.members(['status.phase', 'status.progress']);
    expect(status.message).to.contain('status.phase: Unsupported value: "Done"');
  });

  it('conditions are a map keyed by type: a repeated type → 422', async () => {
    await create('a');
    const condition = { type: 'Ready', status: 'True', reason: 'Done', message: '', lastTransitionTime: '2025-01-01T00:00:00Z' };
    const status = await apiStatus(
      api.patchNamespacedCustomObjectStatus({ group, version, namespace, plural, name: 'a', body: { status: { conditions: [condition, condition] } } }, merge),
      422,
    );
    expect(status.details?.causes?.[0]?.field).to.equal('status.conditions[1]');
  });

  it('metadata-only and no-op writes leave generation alone; no-ops keep the resourceVersion', async () => {
    const created = await create('a');
    const labelled = (await api.patchNamespacedCustomObject({ group, version, namespace, plural, name: 'a', body: { metadata: { labels: { a: 'b' } } } }, merge)) as KubeObject;
    expect(labelled.metadata.generation).to.equal(1);
    expect(labelled.metadata.resourceVersion).to.not.equal(created.metadata.resourceVersion);
    const again = (await api.patchNamespacedCustomObject({ group, version, namespace, plural, name: 'a', body: { metadata: { labels: { a: 'b' } } } }, merge)) as KubeObject;
    expect(again.metadata.resourceVersion).to.equal(labelled.metadata.resourceVersion);
  });

  it('list filters by labelSelector: equality, inequality, set-based and existence', async () => {
    await create('one', sampleSpec(), { tier: 'free', kind: 'export' });
    await create('two', sampleSpec(), { tier: 'pro', kind: 'export' });
    await create('three', sampleSpec(), { tier: 'viral' });
    const names = async (labelSelector: string) => {
      const list = (await api.listNamespacedCustomObject({ group, version, namespace, plural, labelSelector })) as { items: KubeObject[] };
      return list.items.map((i) => i.metadata.name);
    };
    expect(await names('tier=free')).to.deep.equal(['one']);
    expect(await names('kind=export,tier!=free')).to.deep.equal(['two']);
    expect(await names('tier in (pro, viral)')).to.deep.equal(['three', 'two']);
    expect(await names('tier notin (pro)')).to.deep.equal(['one', 'three']);
    expect(await names('!kind')).to.deep.equal(['three']);
    expect(await names('kind')).to.deep.equal(['one', 'two']);
  });

  it('list pages with limit and continue at one resourceVersion', async () => {
    for (const name of ['a', 'b', 'c']) await create(name);
    const first = (await api.listNamespacedCustomObject({ group, version, namespace, plural, limit: 2 })) as {
      items: KubeObject[];
      metadata: { continue: string; remainingItemCount: number; resourceVersion: string };
    };
    expect(first.items.map((i) => i.metadata.name)).to.deep.equal(['a', 'b']);
    expect(first.metadata.remainingItemCount).to.equal(1);
    await api.deleteNamespacedCustomObject({ group, version, namespace, plural, name: 'c' });
    const second = (await api.listNamespacedCustomObject({ group, version, namespace, plural, limit: 2, _continue: first.metadata.continue })) as {
      items: KubeObject[];
      metadata: { resourceVersion: string };
    };
    expect(second.items.map((i) => i.metadata.name)).to.deep.equal(['c']);
    expect(second.metadata.resourceVersion).to.equal(first.metadata.resourceVersion);
  });

  it('an exact list older than the compacted history → 410 Expired', async () => {
    const created = await create('a');
    sim.compact();
    const status = await apiStatus(
      api.listNamespacedCustomObject({ group, version, namespace, plural, resourceVersion: created.metadata.resourceVersion!, resourceVersionMatch: 'Exact' }),
      410,
    );
    expect(status.reason).to.equal('Expired');
  });

  it('delete returns the object and the next get → 404', async () => {
    await create('a');
    const deleted = (await api.deleteNamespacedCustomObject({ group, version, namespace, plural, name: 'a' })) as KubeObject;
    expect(deleted.metadata.name).to.equal('a');
    await apiStatus(get('a'), 404);
    await apiStatus(api.deleteNamespacedCustomObject({ group, version, namespace, plural, name: 'a' }), 404);
  });

  it('finalizers hold a deleted object, marked with deletionTimestamp, until removed', async () => {
    await create('a');
    await api.patchNamespacedCustomObject({ group, version, namespace, plural, name: 'a', body: { metadata: { finalizers: ['cutroom.dev/credits'] } } }, merge);
    await api.deleteNamespacedCustomObject({ group, version, namespace, plural, name: 'a' });
    const held = await get('a');
    expect(held.metadata.deletionTimestamp).to.be.a('string');
    await api.patchNamespacedCustomObject({ group, version, namespace, plural, name: 'a', body: { metadata: { finalizers: null } } }, merge);
    await apiStatus(get('a'), 404);
  });

  it('failNext answers the next matching request with the injected error, once', async () => {
    await create('a');
    sim.failNext({ method: 'GET', path: `/apis/${group}/${version}/namespaces/${namespace}/${plural}/a`, code: 503, reason: 'ServiceUnavailable' });
    const status = await apiStatus(get('a'), 503);
    expect(status.reason).to.equal('ServiceUnavailable');
    expect((await get('a')).metadata.name).to.equal('a');
  });
});
