import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { eventually } from '../support/wait.ts';
import { projectWithSources } from '../support/projects.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import { resourceNamespace } from '../support/kube-cluster.ts';
import { createItem } from '../media/library-fixtures.ts';
import { Canvas, CanvasMedia } from '../../api/src/canvases/entities.ts';
import { PROJECT_MAX_CANVASES } from '../../api/src/canvases/spine.ts';
import { INSERT_MAX_DURATION_MS } from '../../api/src/canvases/source-range.ts';
import { Edit } from '../../api/src/edits/entities.ts';
import { PROJECT_MAX_MANUAL_EDITS } from '../../api/src/edits/service.ts';
import { Export } from '../../api/src/exports/entities.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { Project } from '../../api/src/projects/entities.ts';

/**
 * Issue 25 item 3: renders were unbounded. An INSERT could last 24.8 days, canvases and
 * edits had no count limit, and an export checked neither its length nor how many pieces
 * it joins (400 one-second stills gave ffmpeg 401 inputs and 2.7 GB). The jobs go to a
 * namespace of the test control plane where no operator runs: only what the api accepts and asks
 * for is tested.
 */
describe('attack: unbounded renders (an export of any length or piece count, a 24.8-day INSERT, canvases and edits without end)', function () {
  this.timeout(120_000);
  let namespace: string;
  let kubeConfig: KubeConfig;
  let app: TestApp;
  let user: SignedIn;

  before(async () => {
    ({ namespace, kubeConfig } = await resourceNamespace('render-limits'));
    app = await startTestApp(
      { JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: namespace, EXPORT_MAX_OUTPUT_SECONDS: '60', EXPORT_MAX_SEGMENTS: '5', EXPORT_MAX_ACTIVE_PER_USER: '50' },
      { kubeConfig },
    );
    user = await signUpAndLogin(app, { tier: 'Creator', locale: 'en' });
  });
  after(async () => {
    await app?.close();
  });

  const post = (projectId: string, body: Record<string, unknown> = { name: 'Final' }) => user.client.post(`/api/v1/projects/${projectId}/exports/`, body);
  const cut = async (projectId: string, start_ms: number, end_ms: number) => {
    const response = await user.client.post(`/api/v1/projects/${projectId}/edits/`, { type: 'manual', start_ms, end_ms, active: true, reason: 'cut' });
    expect(response.status, await response.clone().text()).to.equal(201);
  };
  const jobOf = async (exportId: string) => app.services.orm.em.fork().findOneOrFail(Job, (await app.services.orm.em.fork().findOneOrFail(Export, exportId)).jobId!);

  it('an export longer than EXPORT_MAX_OUTPUT_SECONDS is 409 naming the limit, and writes nothing; one within it is accepted', async () => {
    const long = await projectWithSources(app, user, [61_000]);
    const refused = await post(long);
    const body = await json(refused);
    expect(refused.status, JSON.stringify(body)).to.equal(409);
    expect(body.detail).to.match(/61 s/).and.match(/at most 60 s/);
    expect(await app.services.orm.em.fork().count(Export, { project: long })).to.equal(0);
    // cutting 2 s brings it within the limit
    await cut(long, 10_000, 12_000);
    expect((await post(long)).status).to.equal(202);
  });

  it('an INSERT still of 24.8 days no longer makes a 24.8-day export: the INSERT is capped (422) and an export past the limit is 409', async () => {
    const projectId = await projectWithSources(app, user, [5000]);
    const { item } = await createItem(app, user.user.id, { file: { kind: 'image', durationMs: null, hasAudio: false } });
    const huge = await user.client.post(`/api/v1/projects/${projectId}/canvases`, { type: 'INSERT', media_item_id: item.id, params: { duration_ms: 2_147_483_647 } });
    expect(huge.status, await huge.clone().text()).to.equal(422);
    const longest = await user.client.post(`/api/v1/projects/${projectId}/canvases`, { type: 'INSERT', media_item_id: item.id, params: { duration_ms: INSERT_MAX_DURATION_MS } });
    expect(longest.status, await longest.clone().text()).to.equal(201);
    const canvasId = (await json(longest)).uuid as string;
    const longer = await user.client.patch(`/api/v1/projects/${projectId}/canvases/${canvasId}`, { params: { duration_ms: INSERT_MAX_DURATION_MS + 1 } });
    expect(longer.status).to.equal(422);
    // a row written before the cap plays no longer than the cap either
    await app.services.orm.em.fork().nativeUpdate(Canvas, { id: canvasId }, { params: { duration_ms: 2_147_483_647 } });
    const refused = await post(projectId);
    expect(refused.status).to.equal(409);
    expect((await json(refused)).detail).to.match(/605 s/);
  });

  it('an export joining more than EXPORT_MAX_SEGMENTS pieces is 409 naming the limit', async () => {
    const projectId = await projectWithSources(app, user, [30_000]);
    for (const start of [2000, 6000, 10_000, 14_000]) await cut(projectId, start, start + 1000);
    // four cuts leave five pieces: accepted
    expect((await post(projectId)).status).to.equal(202);
    await cut(projectId, 18_000, 19_000);
    const refused = await post(projectId);
    const body = await json(refused);
    expect(refused.status, JSON.stringify(body)).to.equal(409);
    expect(body.detail).to.match(/6 pieces/).and.match(/at most 5 pieces/);
  });

  it("a render's timeout follows its output's length (RENDER_TIMEOUT_BASE_SECONDS + RENDER_TIMEOUT_PER_OUTPUT_SECOND × seconds, at most JOB_TIMEOUT_SECONDS)", async () => {
    const short = await projectWithSources(app, user, [10_000]);
    const long = await projectWithSources(app, user, [59_000]);
    const shortJob = await jobOf((await json(await post(short))).uuid);
    const longJob = await jobOf((await json(await post(long))).uuid);
    expect(shortJob.timeoutSeconds).to.equal(120 + 3 * 10);
    expect(longJob.timeoutSeconds).to.equal(120 + 3 * 59);
    const capped = await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: namespace, JOB_TIMEOUT_SECONDS: '150', EXPORT_MAX_ACTIVE_PER_USER: '50' }, { kubeConfig });
    try {
      const exportId = (await capped.services.features.exports.create(capped.services.orm.em.fork(), user.user.id, long, { name: 'capped', export_settings: {} })).id;
      expect((await capped.services.orm.em.fork().findOneOrFail(Job, (await capped.services.orm.em.fork().findOneOrFail(Export, exportId)).jobId!)).timeoutSeconds).to.equal(150);
    } finally {
      await capped.close();
    }
  });

  it("the kubernetes path too: a user's second render is not handed to the cluster while the first is unsettled; another user's is, and the second follows the first's end", async () => {
    const alice = await signUpAndLogin(app, { tier: 'Creator' });
    const bob = await signUpAndLogin(app, { tier: 'Creator' });
    const [aliceProject, bobProject] = await Promise.all([projectWithSources(app, alice, [5000]), projectWithSources(app, bob, [5000])]);
    const exportOf = async (owner: SignedIn, projectId: string) => (await json(await owner.client.post(`/api/v1/projects/${projectId}/exports/`, { name: 'k' }))).uuid as string;
    const first = await jobOf(await exportOf(alice, aliceProject));
    const second = await jobOf(await exportOf(alice, aliceProject));
    const bobs = await jobOf(await exportOf(bob, bobProject));
    const dispatched = (id: string) => eventually(async () => ((await app.services.orm.em.fork().findOneOrFail(Job, id, { refresh: true })).dispatchedAt ? true : undefined), `job ${id} handed over`);
    await Promise.all([dispatched(first.id), dispatched(bobs.id)]);
    // a pass of the outbox after both were handed over: Alice's second is still held back
    app.services.jobs.outbox.kick();
    await app.services.jobs.outbox.idle();
    expect((await app.services.orm.em.fork().findOneOrFail(Job, second.id, { refresh: true })).dispatchedAt).to.equal(null);
    // the cluster reports the first as done (as the operator would): the second goes
    await app.services.completion.complete(first.id, { ok: false, error: 'stopped by the test' });
    app.services.jobs.outbox.kick();
    await dispatched(second.id);
  });

  it(`a project holds at most ${PROJECT_MAX_CANVASES} canvases: one more INSERT, split or project upload is 409 naming the limit`, async () => {
    const projectId = await projectWithSources(app, user, [60_000]);
    const { item } = await createItem(app, user.user.id, { file: { kind: 'image', durationMs: null, hasAudio: false } });
    const em = app.services.orm.em.fork();
    const project = em.getReference(Project, projectId);
    for (let position = 1; position < PROJECT_MAX_CANVASES; position++) {
      const canvas = em.create(Canvas, { id: randomUUID(), project, type: 'INSERT', sequencePosition: position, params: { duration_ms: 1000 } });
      em.create(CanvasMedia, { id: randomUUID(), canvas, item, role: 'INSERT_ASSET' });
    }
    await em.flush();
    const insert = await user.client.post(`/api/v1/projects/${projectId}/canvases`, { type: 'INSERT', media_item_id: item.id, params: { duration_ms: 1000 } });
    expect(insert.status, await insert.clone().text()).to.equal(409);
    expect((await json(insert)).detail).to.include(`at most ${PROJECT_MAX_CANVASES} canvases`);
    const single = (await json(await user.client.get(`/api/v1/projects/${projectId}/canvases`))).data.find((canvas: { type: string }) => canvas.type === 'SINGLE');
    const split = await user.client.post(`/api/v1/projects/${projectId}/canvases/${single.uuid}/split`, { p: 30_000 });
    expect(split.status, await split.clone().text()).to.equal(409);
    const upload = await user.client.post('/api/v1/media/presign', { filename: 'more.mp4', content_type: 'video/mp4', size_bytes: 1000, scope: 'project', scope_project_id: projectId });
    expect(upload.status, await upload.clone().text()).to.equal(409);
    expect(await app.services.orm.em.fork().count(Canvas, { project: projectId })).to.equal(PROJECT_MAX_CANVASES);
  });

  it(`a project holds at most ${PROJECT_MAX_MANUAL_EDITS} manual and asset edits: one more is 409 naming the limit`, async () => {
    const projectId = await projectWithSources(app, user, [600_000]);
    const em = app.services.orm.em.fork();
    const project = em.getReference(Project, projectId);
    for (let i = 0; i < PROJECT_MAX_MANUAL_EDITS; i++) em.create(Edit, { id: randomUUID(), project, runId: null, type: 'manual', startMs: i * 1000, endMs: i * 1000 + 500, active: true, reason: '' });
    await em.flush();
    const response = await user.client.post(`/api/v1/projects/${projectId}/edits/`, { type: 'manual', start_ms: 599_000, end_ms: 599_500, active: true, reason: 'one more' });
    expect(response.status, await response.clone().text()).to.equal(409);
    expect((await json(response)).detail).to.include(`at most ${PROJECT_MAX_MANUAL_EDITS} edits`);
  });
});
