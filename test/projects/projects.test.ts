import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { json, startTestApp, type TestApp, failCloseOnContractViolations } from '../support/harness.ts';
import { signUpAndLogin } from '../support/users.ts';

describe('projects', function () {
  let app: TestApp;

  before(async () => {
    app = await startTestApp();
    // Every answer of this file is checked against the served document; a violation fails the close (after).
    await failCloseOnContractViolations(app);
  });
  after(() => app.close());

  it('POST /projects/ → 201 with status created; GET one returns the full read with settings, transcript, active_run_id', async () => {
    const { client } = await signUpAndLogin(app);
    const created = await client.post('/api/v1/projects/', { name: '  Demo reel ' });
    expect(created.status).to.equal(201);
    const project = await json(created);
    expect(project).to.include({ name: 'Demo reel', status: 'created', active_run_id: null, transcript: null });
    expect(project.settings).to.deep.equal({});
    const read = await client.get(`/api/v1/projects/${project.uuid}`);
    expect(read.status).to.equal(200);
    expect(await json(read)).to.deep.equal(project);
  });

  it('GET /projects/ is paginated, newest first, with a bounded items_per_page', async () => {
    const { client } = await signUpAndLogin(app, { tier: 'Hobby' });
    const names = ['one', 'two', 'three', 'four', 'five'];
    for (const name of names) expect((await client.post('/api/v1/projects/', { name })).status).to.equal(201);
    const first = await json(await client.get('/api/v1/projects/?page=1&items_per_page=2'));
    expect(first).to.include({ total_count: 5, has_more: true, page: 1, items_per_page: 2 });
    expect(first.data.map((p: { name: string }) => p.name)).to.deep.equal(['five', 'four']);
    const last = await json(await client.get('/api/v1/projects/?page=3&items_per_page=2'));
    expect(last).to.include({ has_more: false });
    expect(last.data.map((p: { name: string }) => p.name)).to.deep.equal(['one']);
    expect((await client.get('/api/v1/projects/?items_per_page=1000')).status).to.equal(422);
    expect((await client.get('/api/v1/projects/?page=0')).status).to.equal(422);
  });

  it("the tier's max_projects is enforced: the Free tier's fourth project → 403 ProjectLimitReached, localized; billing counts them", async () => {
    const { client } = await signUpAndLogin(app);
    for (let i = 0; i < 3; i++) expect((await client.post('/api/v1/projects/', { name: `p${i}` })).status).to.equal(201);
    const refused = await client.post('/api/v1/projects/', { name: 'p4' });
    expect(refused.status).to.equal(403);
    expect(await json(refused)).to.include({ code: 'ProjectLimitReached', detail: 'Your Free plan allows 3 projects. Delete a project or upgrade your plan to create another.' });
    const pt = await client.post('/api/v1/projects/', { name: 'p4' }, { headers: { 'Accept-Language': 'pt' } });
    expect((await json(pt)).detail).to.match(/^O seu plano Free permite 3 projetos/);
    const billing = await json(await client.get('/api/v1/users/me/billing'));
    expect(billing).to.include({ project_count: 3, max_projects: 3 });
  });

  it('max_projects holds under concurrent creations', async () => {
    const { client } = await signUpAndLogin(app);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => client.post('/api/v1/projects/', { name: `race ${i}` })));
    expect(answers.filter((a) => a.status === 201)).to.have.length(3);
    expect(answers.filter((a) => a.status === 403)).to.have.length(3);
  });

  it("another user's project → 404 like a missing one; a bad name → 422", async () => {
    const owner = await signUpAndLogin(app);
    const other = await signUpAndLogin(app);
    const project = await json(await owner.client.post('/api/v1/projects/', { name: 'Mine' }));
    expect((await other.client.get(`/api/v1/projects/${project.uuid}`)).status).to.equal(404);
    expect((await other.client.get(`/api/v1/projects/${randomUUID()}`)).status).to.equal(404);
    expect((await other.client.get(`/api/v1/projects/${project.uuid}/spine`)).status).to.equal(404);
    expect((await other.client.get(`/api/v1/projects/${project.uuid}/canvases`)).status).to.equal(404);
    expect((await owner.client.post('/api/v1/projects/', { name: '   ' })).status).to.equal(422);
    expect((await owner.client.post('/api/v1/projects/', { name: 'x'.repeat(201) })).status).to.equal(422);
  });
});
