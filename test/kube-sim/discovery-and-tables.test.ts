import { expect } from 'chai';
import { startKubeSim } from './index.ts';
import type { KubeSim } from './index.ts';
import { jobResourceBody, sampleSpec } from './samples.ts';

// What kubectl sends for `kubectl get`: a Table first, plain JSON as a fallback.
const kubectlAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

type Table = {
  kind: string;
  apiVersion: string;
  metadata: { resourceVersion: string };
  columnDefinitions: { name: string; type: string; format: string; priority: number }[];
  rows: { cells: unknown[]; object?: { kind: string; metadata: { name: string } } }[];
};

describe('kube-sim: discovery and server-side tables (what kubectl needs)', () => {
  let sim: KubeSim;
  const getJson = async (path: string, accept = 'application/json') => {
    const res = await fetch(sim.url + path, { headers: { accept } });
    expect(res.headers.get('content-type')).to.equal('application/json');
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  before(async () => {
    sim = await startKubeSim({ bookmarkIntervalMs: 0 });
  });
  after(() => sim.close());

  it('/api lists v1 and /apis lists batch, coordination.k8s.io and cutroom.dev', async () => {
    expect((await getJson('/api')).body).to.include({ kind: 'APIVersions' }).and.deep.include({ versions: ['v1'] });
    const { body } = await getJson('/apis');
    expect(body['kind']).to.equal('APIGroupList');
    const groups = body['groups'] as { name: string; preferredVersion: { groupVersion: string } }[];
    expect(groups.map((g) => g.name)).to.include.members(['batch', 'coordination.k8s.io', 'cutroom.dev']);
    expect(groups.find((g) => g.name === 'cutroom.dev')!.preferredVersion.groupVersion).to.equal('cutroom.dev/v1alpha1');
  });

  it('/apis/cutroom.dev/v1alpha1 lists the three kinds with short names, category and status subresource', async () => {
    const { body } = await getJson('/apis/cutroom.dev/v1alpha1');
    expect(body).to.include({ kind: 'APIResourceList', groupVersion: 'cutroom.dev/v1alpha1' });
    const resources = body['resources'] as { name: string; kind: string; namespaced: boolean; shortNames?: string[]; categories?: string[]; verbs: string[] }[];
    expect(resources.map((r) => r.name)).to.have.members([
      'analysisjobs', 'analysisjobs/status', 'renderjobs', 'renderjobs/status', 'artifactjobs', 'artifactjobs/status',
    ]);
    const renderjobs = resources.find((r) => r.name === 'renderjobs')!;
    expect(renderjobs).to.deep.include({ kind: 'RenderJob', namespaced: true, shortNames: ['rj'], categories: ['cutroom'] });
    expect(renderjobs.verbs).to.include.members(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']);
  });

  it('/api/v1 and /apis/batch/v1 list pods (with log) and jobs; unknown paths → 404 Status', async () => {
    const core = (await getJson('/api/v1')).body['resources'] as { name: string }[];
    expect(core.map((r) => r.name)).to.include.members(['pods', 'pods/status', 'pods/log', 'events']);
    const batch = (await getJson('/apis/batch/v1')).body['resources'] as { name: string }[];
    expect(batch.map((r) => r.name)).to.include.members(['jobs', 'jobs/status']);
    const missing = await getJson('/apis/cutroom.dev/v1alpha1/namespaces/x/nothings');
    expect(missing.status).to.equal(404);
    expect(missing.body).to.include({ kind: 'Status', code: 404, reason: 'NotFound' });
  });

  it('`kubectl get renderjobs` gets a Table: NAME, PHASE, PROGRESS, PROJECT, AGE, and JOB at priority 1', async () => {
    const spec = sampleSpec();
    sim.create('renderjobs', 'tables', jobResourceBody('RenderJob', 'first', spec));
    sim.mergePatch('renderjobs', 'tables', 'first', { status: { phase: 'Running', progress: 42.5, jobName: 'first-render' } }, 'status');
    sim.create('renderjobs', 'tables', jobResourceBody('RenderJob', 'second', sampleSpec({ projectId: undefined })));

    const { status, body } = await getJson('/apis/cutroom.dev/v1alpha1/namespaces/tables/renderjobs', kubectlAccept);
    expect(status).to.equal(200);
    const table = body as unknown as Table;
    expect(table).to.include({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
    expect(table.columnDefinitions.map((c) => `${c.name}:${c.type}:${c.priority}`)).to.deep.equal([
      'Name:string:0', 'Phase:string:0', 'Progress:number:0', 'Project:string:0', 'Age:date:0', 'Job:string:1',
    ]);
    expect(table.columnDefinitions[0]!.format).to.equal('name');
    expect(table.rows).to.have.length(2);
    const [first, second] = table.rows;
    expect(first!.cells.slice(0, 4)).to.deep.equal(['first', 'Running', 42.5, spec.projectId]);
    expect(first!.cells[4]).to.match(/^\d+s$/);
    expect(first!.cells[5]).to.equal('first-render');
    expect(second!.cells.slice(0, 4)).to.deep.equal(['second', null, null, null]);
    expect(first!.object).to.deep.include({ kind: 'PartialObjectMetadata' });
    expect(first!.object!.metadata.name).to.equal('first');
  });

  it('artifact jobs show MEDIA where the others show PROJECT; a single GET can be a Table too', async () => {
    const spec = sampleSpec({ program: 'artifact', projectId: undefined, mediaFileId: '9b2f1f6e-3c8a-4d52-9a41-2f1b7e0c5d11' });
    sim.create('artifactjobs', 'tables', jobResourceBody('ArtifactJob', 'thumbs', spec));
    const { body } = await getJson('/apis/cutroom.dev/v1alpha1/namespaces/tables/artifactjobs/thumbs', kubectlAccept);
    const table = body as unknown as Table;
    expect(table.columnDefinitions.map((c) => c.name)).to.deep.equal(['Name', 'Phase', 'Progress', 'Media', 'Age', 'Job']);
    expect(table.rows[0]!.cells[3]).to.equal(spec.mediaFileId);
  });

  it('without the Table media type a list is the plain RenderJobList', async () => {
    const { body } = await getJson('/apis/cutroom.dev/v1alpha1/namespaces/tables/renderjobs');
    expect(body).to.include({ kind: 'RenderJobList', apiVersion: 'cutroom.dev/v1alpha1' });
  });
});
