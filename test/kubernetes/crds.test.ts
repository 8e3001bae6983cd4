// The CRDs of crds/ on a real API server: applied with kubectl, described by kubectl explain,
// enforced by the server itself, listed with their printer columns.
import { expect } from 'chai';
import { ApiException, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { cutroomGroup, cutroomVersion, jobKindList, jobSpecSchema, jobStatusSchema } from '../../crds/contract/resources.ts';
import { invalidSpecs, statuses, validSpecs } from '../crds/specimens.ts';
import { applyCrds, kubeCluster, testNamespace } from '../support/kube-cluster.ts';
import type { KubeCluster } from '../support/kube-cluster.ts';

/** The server's verdict on an object: accepted, or the status code and message it refused it with. */
async function verdict(request: Promise<unknown>): Promise<{ accepted: true } | { accepted: false; code: number; message: string }> {
  try {
    await request;
    return { accepted: true };
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    return { accepted: false, code: error.code, message: String((JSON.parse(String(error.body)) as { message?: string }).message) };
  }
}

describe('the CRDs on a real API server (kubectl, kube-apiserver)', function () {
  this.timeout(120_000);
  let cluster: KubeCluster;
  let namespace: string;

  before(async () => {
    cluster = await kubeCluster();
    await applyCrds(cluster);
    namespace = await testNamespace(cluster, 'crds');
  });

  it('kubectl apply -f crds/ succeeds, and again with nothing to change', async () => {
    const again = await cluster.kubectl(['apply', '-f', 'crds/']);
    expect(again.code, again.stderr).to.equal(0);
    for (const kind of jobKindList) expect(again.stdout).to.include(`customresourcedefinition.apiextensions.k8s.io/${kind.plural}.${cutroomGroup} unchanged`);
  });

  it('kubectl explain describes every field of spec and status, with the schema\'s descriptions', async () => {
    for (const kind of jobKindList) {
      for (const [part, schema] of [['spec', jobSpecSchema], ['status', jobStatusSchema]] as const) {
        const explained = await cluster.kubectl(['explain', `${kind.plural}.${part}`]);
        expect(explained.code, explained.stderr).to.equal(0);
        expect(explained.stdout).to.match(new RegExp(`KIND:\\s+${kind.kind}`));
        for (const field of Object.keys(schema.shape)) expect(explained.stdout, `${kind.plural}.${part}.${field}`).to.match(new RegExp(`^\\s+${field}\\s+<`, 'm'));
      }
    }
  });

  it('the server refuses every spec the zod schema refuses, and accepts every spec it accepts', async () => {
    const api = cluster.kubeConfig(namespace).makeApiClient(CustomObjectsApi);
    for (const kind of jobKindList) {
      for (const [label, spec] of [...validSpecs, ...invalidSpecs]) {
        const body = { apiVersion: `${cutroomGroup}/${cutroomVersion}`, kind: kind.kind, metadata: { generateName: 'specimen-' }, spec: JSON.parse(JSON.stringify(spec)) as unknown };
        const result = await verdict(api.createNamespacedCustomObject({ group: cutroomGroup, version: cutroomVersion, namespace, plural: kind.plural, body, dryRun: 'All' }));
        expect([label, result.accepted], `${kind.kind}: ${label}: ${JSON.stringify(result)}`).to.deep.equal([label, jobSpecSchema.safeParse(spec).success]);
        if (!result.accepted) expect(result.code, label).to.equal(422);
      }
    }
  });

  it('the status subresource refuses every status the zod schema refuses', async () => {
    const api = cluster.kubeConfig(namespace).makeApiClient(CustomObjectsApi);
    const kind = jobKindList[0]!;
    const created = (await api.createNamespacedCustomObject({
      group: cutroomGroup, version: cutroomVersion, namespace, plural: kind.plural,
      body: { apiVersion: `${cutroomGroup}/${cutroomVersion}`, kind: kind.kind, metadata: { name: 'status-specimen' }, spec: validSpecs[1]![1] },
    })) as { metadata: { resourceVersion: string } };
    for (const [label, status] of statuses) {
      const body = { apiVersion: `${cutroomGroup}/${cutroomVersion}`, kind: kind.kind, metadata: { name: 'status-specimen', resourceVersion: created.metadata.resourceVersion }, spec: validSpecs[1]![1], status };
      const result = await verdict(api.replaceNamespacedCustomObjectStatus({ group: cutroomGroup, version: cutroomVersion, namespace, plural: kind.plural, name: 'status-specimen', body, dryRun: 'All' }));
      expect([label, result.accepted], `${label}: ${JSON.stringify(result)}`).to.deep.equal([label, jobStatusSchema.safeParse(status).success]);
    }
  });

  it('kubectl get shows the printer columns, and the Job column with -o wide', async () => {
    const kind = jobKindList.find((k) => k.kind === 'RenderJob')!;
    const spec = { ...(validSpecs[0]![1] as { projectId: string }), program: 'render' };
    const manifest = JSON.stringify({ apiVersion: `${cutroomGroup}/${cutroomVersion}`, kind: kind.kind, metadata: { name: 'columns', namespace }, spec });
    const applied = await cluster.kubectl(['apply', '-f', '-'], { input: manifest });
    expect(applied.code, applied.stderr).to.equal(0);
    const api = cluster.kubeConfig(namespace).makeApiClient(CustomObjectsApi);
    await api.patchNamespacedCustomObjectStatus(
      { group: cutroomGroup, version: cutroomVersion, namespace, plural: kind.plural, name: 'columns', body: { status: { phase: 'Running', progress: 42.5, jobName: 'cutroom-x-render' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const listed = await cluster.kubectl(['get', 'renderjobs', '-n', namespace]);
    expect(listed.code, listed.stderr).to.equal(0);
    const [header, row] = listed.stdout.trim().split('\n');
    expect(header!.split(/\s{2,}/)).to.deep.equal(['NAME', 'PHASE', 'PROGRESS', 'PROJECT', 'AGE']);
    expect(row!.split(/\s{2,}/).slice(0, 4)).to.deep.equal(['columns', 'Running', '42.5', spec.projectId]);
    const wide = await cluster.kubectl(['get', 'rj', '-n', namespace, '-o', 'wide']);
    expect(wide.stdout.split('\n')[0]!.split(/\s{2,}/)).to.deep.equal(['NAME', 'PHASE', 'PROGRESS', 'PROJECT', 'AGE', 'JOB']);
    expect(wide.stdout).to.include('cutroom-x-render');
    const category = await cluster.kubectl(['get', 'cutroom', '-n', namespace, '-o', 'name']);
    // The category spans the kinds: the status specimen (an AnalysisJob) is listed beside the RenderJob.
    expect(category.stdout.trim().split('\n').sort()).to.deep.equal([`analysisjob.${cutroomGroup}/status-specimen`, `renderjob.${cutroomGroup}/columns`]);
  });
});
