import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startTestApp, json, type TestApp, failCloseOnContractViolations } from '../support/harness.ts';
import { newProject, projectWithSources } from '../support/projects.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { AnalysisRun } from '../../api/src/analysis/entities.ts';
import { Draft } from '../../api/src/drafts/entities.ts';
import { Edit } from '../../api/src/edits/entities.ts';
import { Project } from '../../api/src/projects/entities.ts';

interface DraftBody {
  uuid: string;
  name: string;
  edit_overrides: Record<string, { active?: boolean; start_ms?: number; end_ms?: number }>;
  export_settings: Record<string, unknown>;
  analysis_run_id: string | null;
  created_at: string;
  updated_at: string;
}

const settings = { platform: 'youtube', resolution: '1080p', aspect_ratio: '9:16', crop_enabled: true, crop_zoom: 1.5, crop_pan_x: -0.25, crop_pan_y: 0.5 };

describe('drafts: save, list, read and change a project draft', function () {
  this.timeout(60_000);
  let app: TestApp;
  let user: SignedIn;

  before(async () => {
    app = await startTestApp();
    // Every answer of this file is checked against the served document; a violation fails the close (after).
    await failCloseOnContractViolations(app);
    user = await signUpAndLogin(app, { tier: 'Viral' });
  });
  after(() => app.close());

  const projectOf = (owner: SignedIn = user) => newProject(owner);
  const projectWith = (durations: (number | null)[], owner: SignedIn = user) => projectWithSources(app, owner, durations);

  /** A completed run of the project with one silence edit, as the analysis completion leaves it; active unless told. */
  async function addRun(projectId: string, { activate = true } = {}): Promise<{ runId: string; editId: string }> {
    const em = app.services.orm.em.fork();
    const project = await em.findOneOrFail(Project, projectId);
    const run = em.create(AnalysisRun, { id: randomUUID(), project, userId: user.user.id, status: 'completed', pacingLevel: 50, falseStartSensitivity: 50, analysisMode: 'ai_edit', creditsReserved: 0 });
    const edit = em.create(Edit, { id: randomUUID(), project, runId: run.id, type: 'silence', startMs: 1000, endMs: 2000, active: true, reason: 'found' });
    if (activate) {
      project.activeRunId = run.id;
      project.status = 'analyzed';
    }
    await em.flush();
    return { runId: run.id, editId: edit.id };
  }

  const post = (projectId: string, body: Record<string, unknown>, owner: SignedIn = user) => owner.client.post(`/api/v1/projects/${projectId}/drafts/`, body);
  const patch = (draftId: string, body: Record<string, unknown>, owner: SignedIn = user) => owner.client.patch(`/api/v1/drafts/${draftId}`, body);
  const draft = (name: string, edit_overrides: Record<string, unknown> = {}, export_settings: Record<string, unknown> = settings) => ({ name, edit_overrides, export_settings });

  async function ok(response: Response, status: number): Promise<DraftBody> {
    expect(response.status, await response.clone().text()).to.equal(status);
    return json(response);
  }

  async function listed(projectId: string, query = ''): Promise<string[]> {
    const response = await user.client.get(`/api/v1/projects/${projectId}/drafts/${query ? `?${query}` : ''}`);
    expect(response.status, await response.clone().text()).to.equal(200);
    return (await json(response)).data.map((row: DraftBody) => row.name);
  }

  async function expect422(response: Response, mention: string | RegExp): Promise<void> {
    expect(response.status, await response.clone().text()).to.equal(422);
    const detail = (await json(response)).detail as string;
    if (typeof mention === 'string') expect(detail).to.include(mention);
    else expect(detail).to.match(mention);
  }

  describe('POST /projects/{project_uuid}/drafts/', () => {
    it("a draft → 201 with the Draft read model, on the project's active run", async () => {
      const projectId = await projectWith([10_000]);
      const { runId, editId } = await addRun(projectId);
      const overrides = { [editId]: { active: false, start_ms: 1200, end_ms: 1800 } };
      const body = await ok(await post(projectId, draft('For TikTok', overrides)), 201);
      expect(Object.keys(body).sort()).to.deep.equal(['analysis_run_id', 'created_at', 'edit_overrides', 'export_settings', 'name', 'updated_at', 'uuid']);
      expect(body).to.deep.include({ name: 'For TikTok', edit_overrides: overrides, export_settings: settings, analysis_run_id: runId });
      expect(new Date(body.created_at).getTime()).to.be.closeTo(Date.now(), 60_000);
      expect(await ok(await user.client.get(`/api/v1/drafts/${body.uuid}`), 200)).to.deep.equal(body);
    });

    it('before the first analysis → analysis_run_id null', async () => {
      const projectId = await projectWith([10_000]);
      expect((await ok(await post(projectId, draft('Early')), 201)).analysis_run_id).to.equal(null);
    });

    it('crop is stored as zoom plus pan, exactly as sent (no resolved region)', async () => {
      const projectId = await projectWith([10_000]);
      const created = await ok(await post(projectId, draft('Crop')), 201);
      const row = await app.services.orm.em.fork().findOneOrFail(Draft, created.uuid);
      expect(row.exportSettings).to.deep.equal(settings);
    });

    it('analysis_run_id in the body → 422 (the server sets it)', async () => {
      const projectId = await projectWith([10_000]);
      const { runId } = await addRun(projectId);
      await expect422(await post(projectId, { ...draft('Mine'), analysis_run_id: runId }), 'analysis_run_id');
      await expect422(await post(projectId, { ...draft('Mine'), analysis_run_id: null }), 'analysis_run_id');
      expect(await listed(projectId)).to.deep.equal([]);
    });

    it('an unknown key in export_settings → 422 naming it (no analysis settings, no caption_length)', async () => {
      const projectId = await projectWith([10_000]);
      for (const key of ['caption_length', 'pacing_level', 'language', 'director_notes', 'audio_censorship', 'crop_region']) {
        await expect422(await post(projectId, draft('Extra', {}, { ...settings, [key]: 1 })), key);
      }
    });

    it('export_settings values outside their allowed values → 422 naming the field', async () => {
      const projectId = await projectWith([10_000]);
      const wrong: [string, unknown][] = [
        ['resolution', '4k'],
        ['aspect_ratio', '4:3'],
        ['crop_enabled', 'yes'],
        ['crop_zoom', 0.5],
        ['crop_zoom', 11],
        ['crop_pan_x', 1.5],
        ['crop_pan_y', -2],
        ['platform', ''],
        ['platform', 'x'.repeat(51)],
      ];
      for (const [field, value] of wrong) {
        await expect422(await post(projectId, draft('Wrong', {}, { ...settings, [field]: value })), field);
      }
    });

    it('an unknown key in an override, a negative or fractional time, or a key that is not a uuid → 422', async () => {
      const projectId = await projectWith([10_000]);
      const editId = randomUUID();
      await expect422(await post(projectId, draft('Bad', { [editId]: { reason: 'x' } })), 'reason');
      await expect422(await post(projectId, draft('Bad', { [editId]: { start_ms: -1 } })), 'start_ms');
      await expect422(await post(projectId, draft('Bad', { [editId]: { end_ms: 10.5 } })), 'end_ms');
      await expect422(await post(projectId, draft('Bad', { 'not-a-uuid': { active: false } })), 'edit_overrides');
    });

    it('an override with end_ms <= start_ms → 422 ValidationError naming the edit', async () => {
      const projectId = await projectWith([10_000]);
      const editId = randomUUID();
      for (const [start_ms, end_ms] of [[2000, 2000], [3000, 2000]]) {
        const response = await post(projectId, draft('Backwards', { [editId]: { start_ms, end_ms } }));
        await expect422(response.clone(), editId);
        const body = await json(response);
        expect(body.code).to.equal('ValidationError');
        expect(body.detail).to.include(`end_ms (${end_ms})`);
      }
    });

    it('an override start_ms or end_ms beyond the total timeline duration → 400 naming it; exactly at the end → 201', async () => {
      const projectId = await projectWith([4000, 6000]);
      const editId = randomUUID();
      const beyond = await post(projectId, draft('Long', { [editId]: { end_ms: 10_001 } }));
      expect(beyond.status).to.equal(400);
      expect((await json(beyond)).detail).to.include(`edit_overrides.${editId}.end_ms`).and.include('10001').and.include('10000');
      await ok(await post(projectId, draft('At the end', { [editId]: { start_ms: 9000, end_ms: 10_000 } })), 201);
    });

    it('start_ms and end_ms are checked independently: a start_ms alone beyond the timeline → 400', async () => {
      const projectId = await projectWith([10_000]);
      const editId = randomUUID();
      const response = await post(projectId, draft('Start only', { [randomUUID()]: { end_ms: 5000 }, [editId]: { start_ms: 10_001 } }));
      expect(response.status).to.equal(400);
      expect((await json(response)).detail).to.include(`edit_overrides.${editId}.start_ms`);
    });

    it('a draft on a project with no media → 400 whatever its overrides (times, toggles only, none)', async () => {
      const projectId = await projectOf();
      for (const overrides of [{ [randomUUID()]: { start_ms: 0 } }, { [randomUUID()]: { active: false } }, {}]) {
        const response = await post(projectId, draft('Empty', overrides));
        expect(response.status, JSON.stringify(overrides)).to.equal(400);
        expect((await json(response)).detail).to.match(/no media/);
      }
    });

    it('a source with duration_ms null → the bound check is skipped (201)', async () => {
      const projectId = await projectWith([4000, null]);
      await ok(await post(projectId, draft('Processing', { [randomUUID()]: { start_ms: 500_000, end_ms: 600_000 } })), 201);
    });

    it('name missing, blank or over 200 characters → 422', async () => {
      const projectId = await projectWith([10_000]);
      await expect422(await post(projectId, { edit_overrides: {}, export_settings: settings }), 'name');
      await expect422(await post(projectId, draft('   ')), 'name');
      await expect422(await post(projectId, draft('n'.repeat(201))), 'name');
    });
  });

  describe('GET /projects/{project_uuid}/drafts/', () => {
    it('all drafts newest first, not filtered to the active run', async () => {
      const projectId = await projectWith([10_000]);
      await ok(await post(projectId, draft('before analysis')), 201);
      await addRun(projectId);
      await ok(await post(projectId, draft('first run')), 201);
      await addRun(projectId);
      await ok(await post(projectId, draft('second run')), 201);
      expect(await listed(projectId)).to.deep.equal(['second run', 'first run', 'before analysis']);
    });

    it("with analysis_run_id: that run's drafts plus drafts with a null run, newest first", async () => {
      const projectId = await projectWith([10_000]);
      await ok(await post(projectId, draft('before analysis')), 201);
      const first = await addRun(projectId);
      await ok(await post(projectId, draft('first run')), 201);
      const second = await addRun(projectId);
      await ok(await post(projectId, draft('second run')), 201);
      expect(await listed(projectId, `analysis_run_id=${first.runId}`)).to.deep.equal(['first run', 'before analysis']);
      expect(await listed(projectId, `analysis_run_id=${second.runId}`)).to.deep.equal(['second run', 'before analysis']);
      expect(await listed(projectId, `analysis_run_id=${randomUUID()}`)).to.deep.equal(['before analysis']);
    });

    it('activate another run → new drafts are saved on it and the filtered list follows it', async () => {
      const projectId = await projectWith([10_000]);
      await ok(await post(projectId, draft('before analysis')), 201);
      const first = await addRun(projectId);
      await ok(await post(projectId, draft('first run')), 201);
      const second = await addRun(projectId, { activate: false });

      expect((await user.client.post(`/api/v1/projects/${projectId}/analysis-runs/${second.runId}/activate`)).status).to.equal(200);
      const onSecond = await ok(await post(projectId, draft('second run')), 201);
      expect(onSecond.analysis_run_id).to.equal(second.runId);
      expect(await listed(projectId, `analysis_run_id=${second.runId}`)).to.deep.equal(['second run', 'before analysis']);

      expect((await user.client.post(`/api/v1/projects/${projectId}/analysis-runs/${first.runId}/activate`)).status).to.equal(200);
      expect((await ok(await post(projectId, draft('first run again')), 201)).analysis_run_id).to.equal(first.runId);
      expect(await listed(projectId, `analysis_run_id=${first.runId}`)).to.deep.equal(['first run again', 'first run', 'before analysis']);
      expect(await listed(projectId)).to.deep.equal(['first run again', 'second run', 'first run', 'before analysis']);
    });

    it('analysis_run_id that is not a uuid → 422', async () => {
      const projectId = await projectWith([10_000]);
      expect((await user.client.get(`/api/v1/projects/${projectId}/drafts/?analysis_run_id=latest`)).status).to.equal(422);
    });
  });

  describe('PATCH /drafts/{draft_uuid}', () => {
    it('PATCH partial: only the fields given change, analysis_run_id stays → 200', async () => {
      const projectId = await projectWith([10_000]);
      const { runId, editId } = await addRun(projectId);
      const created = await ok(await post(projectId, draft('First cut', { [editId]: { active: false } })), 201);
      await addRun(projectId);

      const renamed = await ok(await patch(created.uuid, { name: 'Final cut' }), 200);
      expect(renamed).to.deep.include({ name: 'Final cut', edit_overrides: { [editId]: { active: false } }, export_settings: settings, analysis_run_id: runId });
      expect(renamed.created_at).to.equal(created.created_at);
      expect(new Date(renamed.updated_at).getTime()).to.be.at.least(new Date(created.updated_at).getTime());

      const resettled = await ok(await patch(created.uuid, { export_settings: { resolution: '720p', aspect_ratio: '1:1' } }), 200);
      expect(resettled).to.deep.include({ name: 'Final cut', edit_overrides: { [editId]: { active: false } }, export_settings: { resolution: '720p', aspect_ratio: '1:1' } });

      const moved = await ok(await patch(created.uuid, { edit_overrides: { [editId]: { start_ms: 900, end_ms: 2100 } } }), 200);
      expect(moved.edit_overrides).to.deep.equal({ [editId]: { start_ms: 900, end_ms: 2100 } });
      expect(await ok(await user.client.get(`/api/v1/drafts/${created.uuid}`), 200)).to.deep.equal(moved);
    });

    it('PATCH override beyond the timeline → 400, end_ms <= start_ms → 422; the draft unchanged', async () => {
      const projectId = await projectWith([10_000]);
      const editId = randomUUID();
      const created = await ok(await post(projectId, draft('Keep', { [editId]: { end_ms: 5000 } })), 201);
      expect((await patch(created.uuid, { edit_overrides: { [editId]: { end_ms: 10_001 } } })).status).to.equal(400);
      expect((await patch(created.uuid, { edit_overrides: { [editId]: { start_ms: 10_001 } } })).status).to.equal(400);
      await expect422(await patch(created.uuid, { edit_overrides: { [editId]: { start_ms: 5000, end_ms: 4000 } } }), editId);
      expect(await ok(await user.client.get(`/api/v1/drafts/${created.uuid}`), 200)).to.deep.equal(created);
    });

    it('PATCH with analysis_run_id or an unknown export_settings key → 422', async () => {
      const projectId = await projectWith([10_000]);
      const { runId } = await addRun(projectId);
      const created = await ok(await post(projectId, draft('Strict')), 201);
      await expect422(await patch(created.uuid, { analysis_run_id: runId }), 'analysis_run_id');
      await expect422(await patch(created.uuid, { export_settings: { caption_length: 5 } }), 'caption_length');
    });
  });

  describe('ownership and deletion', () => {
    it("another user's project or draft → 404 on create, list, GET and PATCH", async () => {
      const projectId = await projectWith([10_000]);
      const created = await ok(await post(projectId, draft('Private')), 201);
      const stranger = await signUpAndLogin(app);
      expect((await post(projectId, draft('Intruder'), stranger)).status).to.equal(404);
      expect((await stranger.client.get(`/api/v1/projects/${projectId}/drafts/`)).status).to.equal(404);
      expect((await stranger.client.get(`/api/v1/drafts/${created.uuid}`)).status).to.equal(404);
      expect((await patch(created.uuid, { name: 'Mine now' }, stranger)).status).to.equal(404);
      expect((await user.client.get(`/api/v1/drafts/${randomUUID()}`)).status).to.equal(404);
      expect((await patch(randomUUID(), { name: 'Nobody' })).status).to.equal(404);
      expect((await ok(await user.client.get(`/api/v1/drafts/${created.uuid}`), 200)).name).to.equal('Private');
    });

    it('drafts go with their project (cascade) and with account deletion', async () => {
      const em = () => app.services.orm.em.fork();
      const owner = await signUpAndLogin(app, { tier: 'Viral' });
      const gone = await projectWith([10_000], owner);
      const kept = await projectWith([10_000], owner);
      await ok(await post(gone, draft('One'), owner), 201);
      await ok(await post(kept, draft('Two'), owner), 201);
      await em().nativeDelete(Project, { id: gone });
      expect(await em().count(Draft, { project: gone })).to.equal(0);
      expect(await em().count(Draft, { project: kept })).to.equal(1);

      expect((await owner.client.delete('/api/v1/users/me', { password: owner.password })).status).to.equal(204);
      expect(await em().count(Draft, { project: kept })).to.equal(0);
    });
  });
});
