import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startTestApp, json, type TestApp, failCloseOnContractViolations } from '../support/harness.ts';
import { newProject, projectWithSources } from '../support/projects.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { createItem } from '../media/library-fixtures.ts';
import type { MediaFileRow } from '../../api/src/media/entities.ts';
import { Canvas, CanvasMedia } from '../../api/src/canvases/entities.ts';
import { AnalysisRun } from '../../api/src/analysis/entities.ts';
import { Edit } from '../../api/src/edits/entities.ts';
import { Project } from '../../api/src/projects/entities.ts';

type FileState = Partial<Pick<MediaFileRow, 'status' | 'durationMs'>>;

describe('edits: list, manual and asset edits, their timeline bounds', function () {
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

  /** A library item of the owner to use as an asset. */
  async function asset(file: FileState = { durationMs: 5000 }, owner: SignedIn = user): Promise<string> {
    return (await createItem(app, owner.user.id, { file })).item.id;
  }

  /** A completed run made active with AI edits, as the analysis completion leaves it. */
  async function analysed(projectId: string, edits: { type: string; start_ms: number; end_ms: number; active?: boolean }[]) {
    const em = app.services.orm.em.fork();
    const project = await em.findOneOrFail(Project, projectId);
    const run = em.create(AnalysisRun, { id: randomUUID(), project, userId: user.user.id, status: 'completed', pacingLevel: 50, falseStartSensitivity: 50, analysisMode: 'ai_edit', creditsReserved: 0 });
    const rows = edits.map((e) => em.create(Edit, { id: randomUUID(), project, runId: run.id, type: e.type, startMs: e.start_ms, endMs: e.end_ms, active: e.active ?? true, reason: 'found' }));
    project.activeRunId = run.id;
    project.status = 'analyzed';
    await em.flush();
    return { runId: run.id, editIds: rows.map((row) => row.id) };
  }

  const create = (projectId: string, body: Record<string, unknown>, owner: SignedIn = user) => owner.client.post(`/api/v1/projects/${projectId}/edits/`, body);
  const patch = (editId: string, body: Record<string, unknown>, owner: SignedIn = user) => owner.client.patch(`/api/v1/edits/${editId}`, body);
  const manual = (start_ms: number, end_ms: number) => ({ type: 'manual', start_ms, end_ms, active: true, reason: 'too long' });
  const assetEdit = (media_item_id: string, start_ms: number, end_ms: number, fields: Record<string, unknown> = {}) => ({ type: 'asset', start_ms, end_ms, active: true, reason: 'b-roll', media_item_id, ...fields });

  async function created(response: Response): Promise<Record<string, unknown> & { uuid: string }> {
    expect(response.status, await response.clone().text()).to.equal(201);
    return json(response);
  }

  describe('POST /projects/{project_uuid}/edits/', () => {
    it('a manual edit within the timeline → 201 with the Edit read model, the project\'s rather than the active run\'s (issue 22: a re-analysis keeps it)', async () => {
      const projectId = await projectWith([4000, 6000]);
      await analysed(projectId, []);
      const edit = await created(await create(projectId, manual(9000, 10_000)));
      expect(edit).to.deep.include({ type: 'manual', start_ms: 9000, end_ms: 10_000, active: true, reason: 'too long', media_item_id: null, visual_mode: null, asset_offset_ms: null });
      expect((await app.services.orm.em.fork().findOneOrFail(Edit, edit.uuid)).runId).to.equal(null);
      await analysed(projectId, []);
      const listed = (await json(await user.client.get(`/api/v1/projects/${projectId}/edits/`))).data as { uuid: string }[];
      expect(listed.map((e) => e.uuid), 'listed after another run became active').to.include(edit.uuid);
    });

    it('a manual edit before any analysis → 201 without a run, and listed', async () => {
      const projectId = await projectWith([4000]);
      const edit = await created(await create(projectId, manual(0, 1000)));
      expect((await app.services.orm.em.fork().findOneOrFail(Edit, edit.uuid)).runId).to.equal(null);
      expect(((await json(await user.client.get(`/api/v1/projects/${projectId}/edits/`))).data).map((e: { uuid: string }) => e.uuid)).to.deep.equal([edit.uuid]);
    });

    it('an asset edit → 201 with every asset field, defaults filled', async () => {
      const projectId = await projectWith([10_000]);
      const itemId = await asset();
      const edit = await created(await create(projectId, assetEdit(itemId, 1000, 3000, { overlay_position: 'custom', overlay_x: 0.25, overlay_y: 0.75, overlay_rotation_deg: -90, audio_mode: 'duck' })));
      expect(edit).to.deep.equal({
        uuid: edit.uuid,
        type: 'asset',
        start_ms: 1000,
        end_ms: 3000,
        active: true,
        reason: 'b-roll',
        confidence: null,
        pause: null,
        media_item_id: itemId,
        visual_mode: 'overlay',
        audio_mode: 'duck',
        overlay_position: 'custom',
        overlay_size_percent: 30,
        overlay_opacity_percent: 100,
        overlay_x: 0.25,
        overlay_y: 0.75,
        overlay_flip_h: false,
        overlay_flip_v: false,
        overlay_rotation_deg: -90,
        audio_volume_percent: 100,
        audio_duck_main: false,
        asset_offset_ms: 0,
      });
    });

    it('rule 1: end_ms beyond the total timeline duration → 400 naming it; exactly at the end → 201', async () => {
      const projectId = await projectWith([4000, 6000]);
      const response = await create(projectId, manual(9000, 10_001));
      expect(response.status).to.equal(400);
      expect((await json(response)).detail).to.include('10001').and.include('10000');
      await created(await create(projectId, manual(9000, 10_000)));
    });

    it('rule 1: the total includes an INSERT canvas of the spine', async () => {
      const projectId = await projectWith([4000]);
      const em = app.services.orm.em.fork();
      const insertItem = await asset({ durationMs: 3000 });
      const canvas = em.create(Canvas, { id: randomUUID(), project: em.getReference(Project, projectId), type: 'INSERT', sequencePosition: 1 });
      em.create(CanvasMedia, { id: randomUUID(), canvas, item: insertItem, role: 'INSERT_ASSET' });
      await em.flush();
      await created(await create(projectId, manual(6000, 7000)));
      expect((await create(projectId, manual(6000, 7001))).status).to.equal(400);
    });

    it('rule 1: a project with no media → 400', async () => {
      const response = await create(await projectOf(), manual(0, 1000));
      expect(response.status).to.equal(400);
      expect((await json(response)).detail).to.match(/no media/);
    });

    it('rule 2: a source with duration_ms null → the bound check is skipped (201)', async () => {
      const projectId = await projectWith([4000, null]);
      await created(await create(projectId, manual(0, 600_000)));
    });

    it('rule 3: an insert asset edit bypasses the ceiling (201); longer than MAX_VIDEO_DURATION_MS → 400', async () => {
      const projectId = await projectWith([4000]);
      const itemId = await asset();
      await created(await create(projectId, assetEdit(itemId, 0, 7_200_000, { visual_mode: 'insert' })));
      const response = await create(projectId, assetEdit(itemId, 1000, 7_201_001, { visual_mode: 'insert' }));
      expect(response.status).to.equal(400);
      expect((await json(response)).detail).to.include('7200000');
    });

    it('rule 4: overlay, replace and none asset edits follow the ceiling → 400', async () => {
      const projectId = await projectWith([4000]);
      const itemId = await asset();
      for (const visual_mode of ['overlay', 'replace', 'none']) {
        expect((await create(projectId, assetEdit(itemId, 0, 4001, { visual_mode }))).status, visual_mode).to.equal(400);
        await created(await create(projectId, assetEdit(itemId, 0, 4000, { visual_mode })));
      }
    });

    it("rule 5: asset_offset_ms at or past the asset's duration_ms → 400; within it → 201; unknown duration → not checked", async () => {
      const projectId = await projectWith([10_000]);
      const itemId = await asset({ durationMs: 5000 });
      const response = await create(projectId, assetEdit(itemId, 0, 1000, { asset_offset_ms: 5000 }));
      expect(response.status).to.equal(400);
      expect((await json(response)).detail).to.include('5000');
      await created(await create(projectId, assetEdit(itemId, 0, 1000, { asset_offset_ms: 4999 })));
      await created(await create(projectId, assetEdit(await asset({ status: 'PROCESSING', durationMs: null }), 0, 1000, { asset_offset_ms: 90_000 })));
    });

    it('end_ms <= start_ms → 422 ValidationError', async () => {
      const projectId = await projectWith([10_000]);
      for (const [start, end] of [[2000, 2000], [3000, 2000]]) {
        const response = await create(projectId, manual(start!, end!));
        expect(response.status).to.equal(422);
        expect((await json(response)).code).to.equal('ValidationError');
      }
    });

    it('asset fields out of range or unknown values → 422 naming the field', async () => {
      const projectId = await projectWith([10_000]);
      const itemId = await asset();
      for (const [field, value] of [
        ['overlay_size_percent', 101],
        ['overlay_opacity_percent', -1],
        ['audio_volume_percent', 150],
        ['overlay_x', 1.5],
        ['overlay_y', -0.1],
        ['overlay_rotation_deg', 361],
        ['audio_mode', 'louder'],
        ['overlay_position', 'middle'],
        ['visual_mode', 'pip'],
        ['asset_offset_ms', -5],
      ] as const) {
        const response = await create(projectId, assetEdit(itemId, 0, 1000, { [field]: value }));
        expect(response.status, field).to.equal(422);
        expect((await json(response)).detail, field).to.include(`body.${field}`);
      }
    });

    it('a manual edit with asset fields, an asset edit without media_item_id, or another type → 422', async () => {
      const projectId = await projectWith([10_000]);
      expect((await create(projectId, { ...manual(0, 1000), visual_mode: 'overlay' })).status).to.equal(422);
      expect((await create(projectId, { type: 'asset', start_ms: 0, end_ms: 1000, active: true, reason: '' })).status).to.equal(422);
      expect((await create(projectId, { ...manual(0, 1000), type: 'silence' })).status).to.equal(422);
    });

    it("another user's media item as the asset → 404", async () => {
      const stranger = await signUpAndLogin(app);
      const projectId = await projectWith([10_000]);
      expect((await create(projectId, assetEdit(await asset({ durationMs: 5000 }, stranger), 0, 1000))).status).to.equal(404);
    });
  });

  describe('PATCH /edits/{edit_uuid}', () => {
    it('an AI edit is toggled inactive → 200; the list with active_only drops it', async () => {
      const projectId = await projectWith([10_000]);
      const { editIds } = await analysed(projectId, [{ type: 'silence', start_ms: 1000, end_ms: 2000 }, { type: 'filler', start_ms: 3000, end_ms: 3500 }]);
      const response = await patch(editIds[0]!, { active: false });
      expect(response.status).to.equal(200);
      expect(await json(response)).to.include({ uuid: editIds[0], type: 'silence', active: false });
      const active = (await json(await user.client.get(`/api/v1/projects/${projectId}/edits/?active_only=true`))).data;
      expect(active.map((e: { uuid: string }) => e.uuid)).to.deep.equal([editIds[1]]);
    });

    it('rule 1 on PATCH with end_ms: beyond the timeline → 400, the edit unchanged', async () => {
      const projectId = await projectWith([10_000]);
      const edit = await created(await create(projectId, manual(1000, 2000)));
      expect((await patch(edit.uuid, { end_ms: 10_001 })).status).to.equal(400);
      expect((await app.services.orm.em.fork().findOneOrFail(Edit, edit.uuid)).endMs).to.equal(2000);
      expect(await json(await patch(edit.uuid, { end_ms: 10_000 }))).to.include({ end_ms: 10_000 });
    });

    it('rule 2 on PATCH: a source with duration_ms null → skipped (200)', async () => {
      const projectId = await projectWith([null]);
      const edit = await created(await create(projectId, manual(1000, 2000)));
      expect((await patch(edit.uuid, { end_ms: 900_000 })).status).to.equal(200);
    });

    it('PATCH end_ms <= start_ms (as the edit would be) → 422', async () => {
      const projectId = await projectWith([10_000]);
      const edit = await created(await create(projectId, manual(1000, 2000)));
      expect((await patch(edit.uuid, { start_ms: 2000 })).status).to.equal(422);
      expect((await patch(edit.uuid, { end_ms: 500 })).status).to.equal(422);
    });

    it('rule 3 on PATCH: an insert lengthened past MAX_VIDEO_DURATION_MS → 400', async () => {
      const projectId = await projectWith([4000]);
      const edit = await created(await create(projectId, assetEdit(await asset(), 0, 60_000, { visual_mode: 'insert' })));
      expect((await patch(edit.uuid, { end_ms: 7_200_001 })).status).to.equal(400);
      expect((await patch(edit.uuid, { end_ms: 7_200_000 })).status).to.equal(200);
    });

    it('rule 5 on PATCH: asset_offset_ms past the asset → 400; within → 200', async () => {
      const projectId = await projectWith([10_000]);
      const edit = await created(await create(projectId, assetEdit(await asset({ durationMs: 5000 }), 0, 1000)));
      expect((await patch(edit.uuid, { asset_offset_ms: 6000 })).status).to.equal(400);
      expect(await json(await patch(edit.uuid, { asset_offset_ms: 2000 }))).to.include({ asset_offset_ms: 2000 });
    });

    it('rule 5 on PATCH: a new media_item_id shorter than the kept asset_offset_ms → 400', async () => {
      const projectId = await projectWith([10_000]);
      const edit = await created(await create(projectId, assetEdit(await asset({ durationMs: 9000 }), 0, 1000, { asset_offset_ms: 4000 })));
      expect((await patch(edit.uuid, { media_item_id: await asset({ durationMs: 3000 }) })).status).to.equal(400);
    });

    it('rule 6: changing media_item_id to an item pending, processing or failed → 409; uploaded → 200', async () => {
      const projectId = await projectWith([10_000]);
      const edit = await created(await create(projectId, assetEdit(await asset(), 0, 1000)));
      for (const status of ['PENDING', 'PROCESSING', 'FAILED'] as const) {
        const response = await patch(edit.uuid, { media_item_id: await asset({ status, durationMs: null }) });
        expect(response.status, status).to.equal(409);
        expect((await json(response)).detail, status).to.include(status.toLowerCase());
      }
      const uploaded = await asset({ durationMs: 8000 });
      expect(await json(await patch(edit.uuid, { media_item_id: uploaded }))).to.include({ media_item_id: uploaded });
    });

    it("changing media_item_id to another user's item → 404", async () => {
      const stranger = await signUpAndLogin(app);
      const projectId = await projectWith([10_000]);
      const edit = await created(await create(projectId, assetEdit(await asset(), 0, 1000)));
      expect((await patch(edit.uuid, { media_item_id: await asset({ durationMs: 5000 }, stranger) })).status).to.equal(404);
    });

    it('rule 7: insert → overlay or replace is judged by the resulting mode: without lowering end_ms → 400; lowering it in the same PATCH → 200', async () => {
      const projectId = await projectWith([4000]);
      const edit = await created(await create(projectId, assetEdit(await asset(), 1000, 30_000, { visual_mode: 'insert' })));
      for (const visual_mode of ['overlay', 'replace']) expect((await patch(edit.uuid, { visual_mode })).status, visual_mode).to.equal(400);
      expect(await json(await patch(edit.uuid, { visual_mode: 'overlay', end_ms: 4000 }))).to.include({ visual_mode: 'overlay', end_ms: 4000 });
    });

    it('asset fields on a manual or AI edit → 422', async () => {
      const projectId = await projectWith([10_000]);
      const { editIds } = await analysed(projectId, [{ type: 'silence', start_ms: 1000, end_ms: 2000 }]);
      const edit = await created(await create(projectId, manual(3000, 4000)));
      for (const id of [editIds[0]!, edit.uuid]) {
        const response = await patch(id, { overlay_opacity_percent: 50 });
        expect(response.status).to.equal(422);
        expect((await json(response)).detail).to.include('overlay_opacity_percent');
      }
    });
  });

  describe('DELETE /edits/{edit_uuid}', () => {
    it('a manual edit → 204, gone from the list', async () => {
      const projectId = await projectWith([10_000]);
      const edit = await created(await create(projectId, manual(1000, 2000)));
      expect((await user.client.delete(`/api/v1/edits/${edit.uuid}`)).status).to.equal(204);
      expect((await json(await user.client.get(`/api/v1/projects/${projectId}/edits/`))).data).to.deep.equal([]);
    });

    it('an asset edit → 204', async () => {
      const projectId = await projectWith([10_000]);
      const edit = await created(await create(projectId, assetEdit(await asset(), 0, 1000)));
      expect((await user.client.delete(`/api/v1/edits/${edit.uuid}`)).status).to.equal(204);
    });

    it('an AI-detected edit is toggled inactive instead (200 with the edit, active false); it stays, and a second DELETE keeps it so', async () => {
      const projectId = await projectWith([10_000]);
      const { editIds } = await analysed(projectId, [{ type: 'false_start', start_ms: 1000, end_ms: 2000 }]);
      const response = await user.client.delete(`/api/v1/edits/${editIds[0]}`);
      expect(response.status).to.equal(200);
      expect(await json(response)).to.include({ uuid: editIds[0], type: 'false_start', active: false });
      const again = await user.client.delete(`/api/v1/edits/${editIds[0]}`);
      expect(again.status).to.equal(200);
      expect((await json(again)).active).to.equal(false);
      const row = await app.services.orm.em.fork().findOneOrFail(Edit, editIds[0]!);
      expect(row.active).to.equal(false);
    });
  });

  describe('GET /projects/{project_uuid}/edits/ and ownership', () => {
    it("lists the active run's AI edits and every manual edit in timeline order, not another run's AI edits", async () => {
      const projectId = await projectWith([10_000]);
      const early = await created(await create(projectId, manual(8000, 9000)));
      const first = await analysed(projectId, [{ type: 'silence', start_ms: 1000, end_ms: 2000 }]);
      const onFirst = await created(await create(projectId, manual(5000, 6000)));
      const second = await analysed(projectId, [{ type: 'silence', start_ms: 3000, end_ms: 4000 }]);
      const list = (await json(await user.client.get(`/api/v1/projects/${projectId}/edits/`))).data;
      // the manual edit made while the first run was active stays (issue 22: a re-analysis never hides the user's work)
      expect(list.map((e: { uuid: string }) => e.uuid)).to.deep.equal([second.editIds[0], onFirst.uuid, early.uuid]);
      expect(list.map((e: { uuid: string }) => e.uuid)).to.not.include(first.editIds[0]);
    });

    it("another user's project or edit → 404 on list, create, PATCH and DELETE", async () => {
      const projectId = await projectWith([10_000]);
      const edit = await created(await create(projectId, manual(1000, 2000)));
      const stranger = await signUpAndLogin(app);
      expect((await stranger.client.get(`/api/v1/projects/${projectId}/edits/`)).status).to.equal(404);
      expect((await create(projectId, manual(0, 1000), stranger)).status).to.equal(404);
      expect((await patch(edit.uuid, { active: false }, stranger)).status).to.equal(404);
      expect((await stranger.client.delete(`/api/v1/edits/${edit.uuid}`)).status).to.equal(404);
      expect((await patch(randomUUID(), { active: false })).status).to.equal(404);
    });
  });
});
