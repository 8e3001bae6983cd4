import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startTestApp, json, type TestApp, failCloseOnContractViolations } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { createItem } from '../media/library-fixtures.ts';
import { appendSingleCanvas } from '../../api/src/canvases/spine.ts';
import { Canvas, CanvasMedia, type CanvasType } from '../../api/src/canvases/entities.ts';
import { Edit } from '../../api/src/edits/entities.ts';
import { Project } from '../../api/src/projects/entities.ts';

interface CanvasJson {
  uuid: string;
  type: string;
  sequence_position: number;
  params: Record<string, unknown>;
  crop: unknown;
  aspect: unknown;
  letterbox: unknown;
  flags: Record<string, boolean>;
  media: { media_item_id: string; role: string }[];
}
interface EditJson {
  uuid: string;
  start_ms: number;
  end_ms: number;
}

describe('canvases: the structural editor (layout, swap, reorder, delete, create, PATCH)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let user: SignedIn;
  let stranger: SignedIn;

  before(async () => {
    app = await startTestApp();
    // Every answer of this file is checked against the served document; a violation fails the close (after).
    await failCloseOnContractViolations(app);
    user = await signUpAndLogin(app, { tier: 'Viral' });
    stranger = await signUpAndLogin(app, { tier: 'Viral' });
  });
  after(() => app.close());

  /** A project whose spine plays sources of these durations, as rows; returns its canvases in order. */
  async function projectWith(durations: number[], owner: SignedIn = user): Promise<{ projectId: string; canvases: CanvasJson[] }> {
    const response = await owner.client.post('/api/v1/projects/', { name: 'Cut' });
    expect(response.status).to.equal(201);
    const projectId = (await json(response)).uuid as string;
    for (const durationMs of durations) {
      const { item } = await createItem(app, owner.user.id, { scope: 'project', scopeProjectId: projectId, file: { durationMs, hasAudio: true } });
      await app.services.orm.em.fork().transactional((tx) => appendSingleCanvas(tx, projectId, item.id));
    }
    return { projectId, canvases: await canvases(projectId, owner) };
  }

  async function canvases(projectId: string, owner: SignedIn = user): Promise<CanvasJson[]> {
    return (await json(await owner.client.get(`/api/v1/projects/${projectId}/canvases`))).data;
  }

  /** A canvas row of any type, with media by role, appended at the given position. */
  async function canvasRow(projectId: string, type: CanvasType, sequencePosition: number, media: { role: 'CANVAS_FILL' | 'CO_STAR' | 'INSERT_ASSET'; itemId: string }[]): Promise<string> {
    const em = app.services.orm.em.fork();
    const canvas = em.create(Canvas, { id: randomUUID(), project: em.getReference(Project, projectId), type, sequencePosition });
    for (const { role, itemId } of media) em.create(CanvasMedia, { id: randomUUID(), canvas, item: itemId, role });
    await em.flush();
    return canvas.id;
  }

  async function asset(durationMs = 2000, owner: SignedIn = user): Promise<string> {
    return (await createItem(app, owner.user.id, { file: { durationMs, hasAudio: true } })).item.id;
  }

  async function editAt(projectId: string, startMs: number, endMs: number): Promise<string> {
    const em = app.services.orm.em.fork();
    const edit = em.create(Edit, { id: randomUUID(), project: em.getReference(Project, projectId), runId: null, type: 'manual', startMs, endMs, active: true, reason: '' });
    await em.flush();
    return edit.id;
  }

  const post = (path: string, body: unknown, owner: SignedIn = user) => owner.client.post(path, body);
  const positions = (list: CanvasJson[]) => list.map((canvas) => canvas.sequence_position);
  const ids = (list: { uuid: string }[]) => list.map((one) => one.uuid);

  describe('POST …/canvases/layout', () => {
    it('layout → 422 LayoutNotRenderable (SPLIT and TALKING_HEAD cannot be rendered yet); another user\'s project → 404', async () => {
      const { projectId } = await projectWith([1000]);
      const body = { canvas_type: 'TALKING_HEAD', t1: 0, t2: 500, co_star_media_item_id: await asset(), params: {} };
      const refused = await post(`/api/v1/projects/${projectId}/canvases/layout`, body);
      expect(refused.status).to.equal(422);
      expect(await json(refused)).to.include({ code: 'LayoutNotRenderable' });
      expect((await post(`/api/v1/projects/${projectId}/canvases/layout`, { ...body, canvas_type: 'SPLIT' })).status).to.equal(422);
      expect((await post(`/api/v1/projects/${projectId}/canvases/layout`, body, stranger)).status).to.equal(404);
    });
  });

  describe('POST …/canvases/swap', () => {
    it('swap of two adjacent SINGLE canvases → 200: positions traded, edits lying on a moved canvas move with it, a straddling edit is stranded', async () => {
      const { projectId, canvases: [a, b, c] } = await projectWith([5000, 3000, 1000]);
      const onA = await editAt(projectId, 1000, 2000);
      const onB = await editAt(projectId, 5500, 6000);
      const onC = await editAt(projectId, 8200, 8500);
      const straddling = await editAt(projectId, 4500, 5500);
      const response = await post(`/api/v1/projects/${projectId}/canvases/swap`, { canvas_a_uuid: a!.uuid, canvas_b_uuid: b!.uuid });
      expect(response.status, await response.clone().text()).to.equal(200);
      const result = await json(response);
      expect(ids(result.canvases)).to.deep.equal([b!.uuid, a!.uuid]);
      expect(positions(result.canvases)).to.deep.equal([0, 1]);
      expect(result.removed_canvas_uuids).to.deep.equal([]);
      const moved = new Map((result.edits as EditJson[]).map((edit) => [edit.uuid, [edit.start_ms, edit.end_ms]]));
      expect(Object.fromEntries(moved)).to.deep.equal({ [onA]: [4000, 5000], [onB]: [500, 1000] });
      expect(ids(result.stranded_edits)).to.deep.equal([straddling]);
      expect(moved.has(onC), 'the third canvas did not move').to.equal(false);
      expect(ids(await canvases(projectId))).to.deep.equal([b!.uuid, a!.uuid, c!.uuid]);
      const listed: EditJson[] = (await json(await user.client.get(`/api/v1/projects/${projectId}/edits/`))).data;
      expect(listed.find((edit) => edit.uuid === onA)).to.include({ start_ms: 4000, end_ms: 5000 });
    });

    it('swap of canvases that are not adjacent, the same canvas, or an INSERT → 422', async () => {
      const { projectId, canvases: [a, , c] } = await projectWith([1000, 1000, 1000]);
      const insert = await canvasRow(projectId, 'INSERT', 3, [{ role: 'INSERT_ASSET', itemId: await asset() }]);
      for (const [x, y] of [[a!.uuid, c!.uuid], [a!.uuid, a!.uuid], [c!.uuid, insert]]) {
        const response = await post(`/api/v1/projects/${projectId}/canvases/swap`, { canvas_a_uuid: x, canvas_b_uuid: y });
        expect(response.status, `${x} ${y}`).to.equal(422);
      }
      expect(ids(await canvases(projectId)).slice(0, 3)).to.deep.equal([a!.uuid, (await canvases(projectId))[1]!.uuid, c!.uuid]);
    });

    it("swap naming another user's project or canvas → 404", async () => {
      const { projectId, canvases: [a, b] } = await projectWith([1000, 1000]);
      const theirs = await projectWith([1000, 1000], stranger);
      expect((await post(`/api/v1/projects/${projectId}/canvases/swap`, { canvas_a_uuid: a!.uuid, canvas_b_uuid: b!.uuid }, stranger)).status).to.equal(404);
      expect((await post(`/api/v1/projects/${projectId}/canvases/swap`, { canvas_a_uuid: a!.uuid, canvas_b_uuid: theirs.canvases[0]!.uuid })).status).to.equal(404);
      expect((await post(`/api/v1/projects/${projectId}/canvases/swap`, { canvas_a_uuid: a!.uuid, canvas_b_uuid: randomUUID() })).status).to.equal(404);
    });

    it('10 concurrent swaps and reorders of one project leave positions 0..n-1 without gaps or duplicates', async () => {
      const { projectId, canvases: singles } = await projectWith([1000, 1000, 1000, 1000]);
      const insert = await canvasRow(projectId, 'INSERT', 4, [{ role: 'INSERT_ASSET', itemId: await asset() }]);
      const requests = Array.from({ length: 10 }, (_, index) =>
        index % 2 === 0
          ? post(`/api/v1/projects/${projectId}/canvases/swap`, { canvas_a_uuid: singles[index % 3]!.uuid, canvas_b_uuid: singles[(index % 3) + 1]!.uuid })
          : post(`/api/v1/projects/${projectId}/canvases/${insert}/reorder`, { new_sequence_position: index % 5 }),
      );
      const statuses = (await Promise.all(requests)).map((response) => response.status);
      expect(statuses.every((status) => status === 200 || status === 422), String(statuses)).to.equal(true);
      expect(statuses.filter((status) => status === 200)).to.have.length.above(0);
      const after = await canvases(projectId);
      expect(positions(after)).to.deep.equal([0, 1, 2, 3, 4]);
      expect(new Set(ids(after)).size).to.equal(5);
    });
  });

  describe('POST …/canvases/{canvas_uuid}/reorder', () => {
    it('reorder moves an INSERT canvas → 200 and renumbers the others; edits on moved SINGLE canvases follow them', async () => {
      const { projectId, canvases: [a, b] } = await projectWith([4000, 2000]);
      const insert = await canvasRow(projectId, 'INSERT', 2, [{ role: 'INSERT_ASSET', itemId: await asset(1500) }]);
      const onB = await editAt(projectId, 4500, 5000);
      const response = await post(`/api/v1/projects/${projectId}/canvases/${insert}/reorder`, { new_sequence_position: 0 });
      expect(response.status, await response.clone().text()).to.equal(200);
      const result = await json(response);
      expect(ids(result.canvases)).to.deep.equal([insert, a!.uuid, b!.uuid]);
      expect(positions(result.canvases)).to.deep.equal([0, 1, 2]);
      expect(result.edits.map((edit: EditJson) => [edit.uuid, edit.start_ms, edit.end_ms])).to.deep.equal([[onB, 6000, 6500]]);
    });

    it('reorder of a non-INSERT canvas, or to a position beyond n-1 → 422', async () => {
      const { projectId, canvases: [a] } = await projectWith([1000, 1000]);
      const insert = await canvasRow(projectId, 'INSERT', 2, [{ role: 'INSERT_ASSET', itemId: await asset() }]);
      expect((await post(`/api/v1/projects/${projectId}/canvases/${a!.uuid}/reorder`, { new_sequence_position: 1 })).status).to.equal(422);
      expect((await post(`/api/v1/projects/${projectId}/canvases/${insert}/reorder`, { new_sequence_position: 3 })).status).to.equal(422);
      expect((await post(`/api/v1/projects/${projectId}/canvases/${insert}/reorder`, { new_sequence_position: 0 }, stranger)).status).to.equal(404);
    });
  });

  describe('DELETE …/canvases/{canvas_uuid}', () => {
    it('delete of an INSERT canvas → 200: dropped, the rest renumbered, edits after it move back', async () => {
      const { projectId, canvases: [a, b] } = await projectWith([1000, 1000]);
      const insert = ((await json(await post(`/api/v1/projects/${projectId}/canvases`, { type: 'INSERT', media_item_id: await asset(3000), sequence_position: 1 }))) as CanvasJson).uuid;
      const onB = await editAt(projectId, 4200, 4800);
      const response = await user.client.delete(`/api/v1/projects/${projectId}/canvases/${insert}`);
      expect(response.status, await response.clone().text()).to.equal(200);
      const result = await json(response);
      expect(result.removed_canvas_uuids).to.deep.equal([insert]);
      expect(ids(result.canvases)).to.deep.equal([b!.uuid]);
      expect(result.edits.map((edit: EditJson) => [edit.uuid, edit.start_ms, edit.end_ms])).to.deep.equal([[onB, 1200, 1800]]);
      const after = await canvases(projectId);
      expect(ids(after)).to.deep.equal([a!.uuid, b!.uuid]);
      expect(positions(after)).to.deep.equal([0, 1]);
    });

    it('delete of a SINGLE canvas → 409 CanvasNotDeletable', async () => {
      const { projectId, canvases: [a] } = await projectWith([1000]);
      const response = await user.client.delete(`/api/v1/projects/${projectId}/canvases/${a!.uuid}`);
      expect(response.status).to.equal(409);
      expect(await json(response)).to.include({ code: 'CanvasNotDeletable' });
    });

    it('delete of a TALKING_HEAD canvas without keep → 422; keep=asset → SINGLE filled by the co-star', async () => {
      const { projectId } = await projectWith([1000]);
      const clip = await asset(2000);
      const coStar = await asset(2000);
      const head = await canvasRow(projectId, 'TALKING_HEAD', 1, [{ role: 'CANVAS_FILL', itemId: clip }, { role: 'CO_STAR', itemId: coStar }]);
      expect((await user.client.delete(`/api/v1/projects/${projectId}/canvases/${head}`)).status).to.equal(422);
      const response = await user.client.delete(`/api/v1/projects/${projectId}/canvases/${head}?keep=asset`);
      expect(response.status, await response.clone().text()).to.equal(200);
      const [canvas] = (await json(response)).canvases as CanvasJson[];
      expect(canvas).to.include({ uuid: head, type: 'SINGLE', sequence_position: 1 });
      expect(canvas!.media).to.deep.equal([{ media_item_id: coStar, role: 'CANVAS_FILL' }]);
    });

    it('delete of a SPLIT canvas → SINGLE keeping its clip (keep defaults to clip)', async () => {
      const { projectId } = await projectWith([1000]);
      const clip = await asset(2000);
      const split = await canvasRow(projectId, 'SPLIT', 1, [{ role: 'CANVAS_FILL', itemId: clip }, { role: 'CO_STAR', itemId: await asset(2000) }]);
      const response = await user.client.delete(`/api/v1/projects/${projectId}/canvases/${split}`);
      expect(response.status, await response.clone().text()).to.equal(200);
      const [canvas] = (await json(response)).canvases as CanvasJson[];
      expect(canvas).to.include({ type: 'SINGLE' });
      expect(canvas!.media).to.deep.equal([{ media_item_id: clip, role: 'CANVAS_FILL' }]);
      expect((await user.client.delete(`/api/v1/projects/${projectId}/canvases/${split}`)).status, 'now a SINGLE').to.equal(409);
    });

    it("delete of another user's canvas → 404", async () => {
      const theirs = await projectWith([1000], stranger);
      const insert = await canvasRow(theirs.projectId, 'INSERT', 1, [{ role: 'INSERT_ASSET', itemId: await asset(1000, stranger) }]);
      expect((await user.client.delete(`/api/v1/projects/${theirs.projectId}/canvases/${insert}`)).status).to.equal(404);
      const { projectId } = await projectWith([1000]);
      expect((await user.client.delete(`/api/v1/projects/${projectId}/canvases/${insert}`)).status).to.equal(404);
    });
  });

  describe('POST …/canvases (CanvasCreate)', () => {
    it('create of an INSERT canvas with a media item of the caller at a position → 201 CanvasRead; the rest shift', async () => {
      const { projectId, canvases: [a, b] } = await projectWith([1000, 1000]);
      const item = await asset(2500);
      const response = await post(`/api/v1/projects/${projectId}/canvases`, { type: 'INSERT', media_item_id: item, sequence_position: 1, params: { duration_ms: 1200 } });
      expect(response.status, await response.clone().text()).to.equal(201);
      const created: CanvasJson = await json(response);
      expect(created).to.include({ type: 'INSERT', sequence_position: 1 });
      expect(created.params).to.deep.equal({ duration_ms: 1200 });
      expect(created.media).to.deep.equal([{ media_item_id: item, role: 'INSERT_ASSET' }]);
      const after = await canvases(projectId);
      expect(ids(after)).to.deep.equal([a!.uuid, created.uuid, b!.uuid]);
      expect(positions(after)).to.deep.equal([0, 1, 2]);
      const appended: CanvasJson = await json(await post(`/api/v1/projects/${projectId}/canvases`, { type: 'INSERT', media_item_id: item }));
      expect(appended.sequence_position, 'the end by default').to.equal(3);
    });

    it("create with another user's media item or project → 404; another type, or a position beyond n → 422", async () => {
      const { projectId } = await projectWith([1000]);
      expect((await post(`/api/v1/projects/${projectId}/canvases`, { type: 'INSERT', media_item_id: await asset(1000, stranger) })).status).to.equal(404);
      expect((await post(`/api/v1/projects/${projectId}/canvases`, { type: 'INSERT', media_item_id: await asset() }, stranger)).status).to.equal(404);
      expect((await post(`/api/v1/projects/${projectId}/canvases`, { type: 'SPLIT', media_item_id: await asset() })).status).to.equal(422);
      expect((await post(`/api/v1/projects/${projectId}/canvases`, { type: 'INSERT', media_item_id: await asset(), sequence_position: 2 })).status).to.equal(422);
      expect(await canvases(projectId)).to.have.length(1);
    });
  });

  describe('PATCH …/canvases/{canvas_uuid}', () => {
    it('PATCH of crop, aspect, letterbox and flags → 200 CanvasRead; null clears', async () => {
      const { projectId, canvases: [a] } = await projectWith([1000]);
      const path = `/api/v1/projects/${projectId}/canvases/${a!.uuid}`;
      const body = { crop: { x: 0.1, y: 0, width: 0.8, height: 1 }, aspect: '9:16', letterbox: { color: '#000000', blur: true }, flags: { mirror: true } };
      const response = await user.client.patch(path, body);
      expect(response.status, await response.clone().text()).to.equal(200);
      expect(await json(response)).to.deep.include(body);
      const cleared: CanvasJson = await json(await user.client.patch(path, { crop: null, letterbox: null }));
      expect(cleared).to.deep.include({ crop: null, letterbox: null, aspect: '9:16', flags: { mirror: true } });
      expect(await json(await user.client.get(path))).to.deep.include({ crop: null, aspect: '9:16' });
    });

    it('PATCH of params on a non-INSERT canvas, a crop outside the frame, or an unknown field → 422; INSERT duration_ms → 200', async () => {
      const { projectId, canvases: [a] } = await projectWith([1000]);
      const path = `/api/v1/projects/${projectId}/canvases/${a!.uuid}`;
      for (const body of [{ params: { duration_ms: 500 } }, { crop: { x: 0.5, y: 0, width: 0.6, height: 1 } }, { aspect: '2:1' }, { colour: 'red' }]) {
        expect((await user.client.patch(path, body)).status, JSON.stringify(body)).to.equal(422);
      }
      const insert = await canvasRow(projectId, 'INSERT', 1, [{ role: 'INSERT_ASSET', itemId: await asset(3000) }]);
      const response = await user.client.patch(`/api/v1/projects/${projectId}/canvases/${insert}`, { params: { duration_ms: 500 } });
      expect(response.status).to.equal(200);
      expect((await json(response)).params).to.deep.equal({ duration_ms: 500 });
      expect((await stranger.client.patch(path, { aspect: '1:1' })).status).to.equal(404);
    });
  });
});
