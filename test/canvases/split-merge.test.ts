import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { createItem } from '../media/library-fixtures.ts';
import { appendSingleCanvas } from '../../api/src/canvases/spine.ts';
import { CanvasEditor } from '../../api/src/canvases/editor.ts';
import { ProjectService } from '../../api/src/projects/service.ts';
import { DomainError } from '../../api/src/shared/errors.ts';
import { projectTimeline } from '../../api/src/timeline/project-timeline.ts';

/** Split and merge, through the editor service and their routes; the timeline reads the source ranges they write. */
describe('canvases: split and merge', function () {
  this.timeout(60_000);
  let app: TestApp;
  let user: SignedIn;
  let stranger: SignedIn;
  let editor: CanvasEditor;

  before(async () => {
    app = await startTestApp();
    user = await signUpAndLogin(app, { tier: 'Viral' });
    stranger = await signUpAndLogin(app, { tier: 'Viral' });
    editor = new CanvasEditor(new ProjectService({ billing: app.services.billing }));
  });
  after(() => app.close());

  const em = () => app.services.orm.em.fork();

  async function projectWith(durations: (number | null)[], owner: SignedIn = user): Promise<{ projectId: string; canvasIds: string[]; itemIds: string[] }> {
    const projectId = (await json(await owner.client.post('/api/v1/projects/', { name: 'Cut' }))).uuid as string;
    const canvasIds: string[] = [];
    const itemIds: string[] = [];
    for (const durationMs of durations) {
      const { item } = await createItem(app, owner.user.id, { scope: 'project', scopeProjectId: projectId, file: { durationMs, hasAudio: true } });
      canvasIds.push((await em().transactional((tx) => appendSingleCanvas(tx, projectId, item.id))).id);
      itemIds.push(item.id);
    }
    return { projectId, canvasIds, itemIds };
  }

  async function refusal(promise: Promise<unknown>): Promise<{ kind: string; code: string | undefined }> {
    try {
      await promise;
    } catch (error) {
      if (error instanceof DomainError) return { kind: error.kind, code: error.code };
      throw error;
    }
    throw new Error('expected a refusal');
  }

  it('split at p of a SINGLE canvas → two contiguous canvases on the same source, [start, p) and [p, end), the rest renumbered', async () => {
    const { projectId, canvasIds: [a, b], itemIds: [itemA] } = await projectWith([6000, 1000]);
    const outcome = await editor.split(em(), user.user.id, projectId, a!, 2500);
    const [first, second, moved] = outcome.canvases;
    expect([first!.id, first!.sequencePosition, first!.params]).to.deep.equal([a, 0, { source_start_ms: 0, source_end_ms: 2500 }]);
    expect([second!.sequencePosition, second!.type, second!.params]).to.deep.equal([1, 'SINGLE', { source_start_ms: 2500, source_end_ms: 6000 }]);
    expect(outcome.media.get(second!.id)!.map((row) => [row.item.id, row.role])).to.deep.equal([[itemA, 'CANVAS_FILL']]);
    expect([moved!.id, moved!.sequencePosition]).to.deep.equal([b, 2]);
    expect(outcome.moved).to.deep.equal([]);

    const again = await editor.split(em(), user.user.id, projectId, second!.id, 4000);
    expect(again.canvases.map((canvas) => canvas.params)).to.deep.equal([{ source_start_ms: 2500, source_end_ms: 4000 }, { source_start_ms: 4000, source_end_ms: 6000 }, {}]);
  });

  it('split at a p not strictly inside the source range → 422; an INSERT → 422; a source of unknown duration → 409', async () => {
    const { projectId, canvasIds: [a, unknown] } = await projectWith([3000, null]);
    for (const p of [0, 3000, 4000]) expect(await refusal(editor.split(em(), user.user.id, projectId, a!, p)), `p=${p}`).to.deep.equal({ kind: 'invalid', code: 'ValidationError' });
    expect(await refusal(editor.split(em(), user.user.id, projectId, unknown!, 1000))).to.deep.equal({ kind: 'conflict', code: 'SourceDurationUnknown' });
    const insert = await editor.create(em(), user.user.id, projectId, { type: 'INSERT', media_item_id: (await createItem(app, user.user.id, { file: { durationMs: 1000 } })).item.id, params: {} });
    expect(await refusal(editor.split(em(), user.user.id, projectId, insert.subject!.id, 500))).to.deep.equal({ kind: 'invalid', code: 'ValidationError' });
  });

  it('merge of a split canvas with its neighbour (left or right) → one canvas over the whole range, the later one removed', async () => {
    const { projectId, canvasIds: [a, b] } = await projectWith([6000, 1000]);
    const [, second] = (await editor.split(em(), user.user.id, projectId, a!, 2000)).canvases;
    await editor.split(em(), user.user.id, projectId, second!.id, 4000);
    const left = await editor.merge(em(), user.user.id, projectId, second!.id, 'left');
    expect(left.removed).to.deep.equal([second!.id]);
    expect(left.canvases.map((canvas) => [canvas.id, canvas.sequencePosition, canvas.params])).to.deep.equal([
      [a, 0, { source_start_ms: 0, source_end_ms: 4000 }],
      [left.canvases[1]!.id, 1, { source_start_ms: 4000, source_end_ms: 6000 }],
      [b, 2, {}],
    ]);
    const right = await editor.merge(em(), user.user.id, projectId, a!, 'right');
    expect(right.canvases.map((canvas) => [canvas.id, canvas.sequencePosition, canvas.params])).to.deep.equal([[a, 0, {}], [b, 1, {}]]);
  });

  it('merge with no neighbour, with a canvas of another source, or of non-contiguous source time → 422', async () => {
    const { projectId, canvasIds: [a, b] } = await projectWith([6000, 1000]);
    expect(await refusal(editor.merge(em(), user.user.id, projectId, a!, 'left'))).to.deep.equal({ kind: 'invalid', code: 'ValidationError' });
    expect(await refusal(editor.merge(em(), user.user.id, projectId, a!, 'right'))).to.deep.equal({ kind: 'invalid', code: 'ValidationError' });
    const [, second] = (await editor.split(em(), user.user.id, projectId, a!, 2000)).canvases;
    const [, third] = (await editor.split(em(), user.user.id, projectId, second!.id, 4000)).canvases;
    await editor.swap(em(), user.user.id, projectId, second!.id, third!.id);
    // now [0,2000) [4000,6000) [2000,4000): neighbours on one source, not contiguous
    expect(await refusal(editor.merge(em(), user.user.id, projectId, a!, 'right'))).to.deep.equal({ kind: 'invalid', code: 'ValidationError' });
    expect(await refusal(editor.merge(em(), user.user.id, projectId, b!, 'left'))).to.deep.equal({ kind: 'invalid', code: 'ValidationError' });
  });

  it("split or merge in another user's project → 404", async () => {
    const { projectId, canvasIds: [a] } = await projectWith([6000], stranger);
    expect(await refusal(editor.split(em(), user.user.id, projectId, a!, 1000))).to.deep.include({ kind: 'not_found' });
    expect(await refusal(editor.merge(em(), user.user.id, projectId, a!, 'right'))).to.deep.include({ kind: 'not_found' });
  });

  it('POST …/split {p} → 200 with the two canvases; the timeline keeps its length and plays the source once; the spine cannot be reordered as a flat list; POST …/merge joins them back', async () => {
    const { projectId, canvasIds: [a] } = await projectWith([6000, 1000]);
    const split = await user.client.post(`/api/v1/projects/${projectId}/canvases/${a}/split`, { p: 2500 });
    expect(split.status, await split.clone().text()).to.equal(200);
    const body = await json(split);
    expect(body.canvases.map((canvas: { sequence_position: number }) => canvas.sequence_position)).to.deep.equal([0, 1, 2]);
    const timeline = await projectTimeline(em(), projectId);
    expect(timeline.known && timeline.durationMs, 'split: 2.5 s + 3.5 s + 1 s, the source played once').to.equal(7000);
    expect(timeline.pieces.map((piece) => [piece.sourceStartMs, piece.durationMs])).to.deep.equal([[0, 2500], [2500, 3500], [0, 1000]]);
    const spine = (await json(await user.client.get(`/api/v1/projects/${projectId}/spine`))).data;
    const reorder = await user.client.post('/api/v1/media/reorder', { project_id: projectId, media_item_ids: [...new Set(spine.map((row: { media_item_id: string }) => row.media_item_id))].reverse() });
    expect(reorder.status, 'a split clip is composition: reorder in the canvas editor').to.equal(409);

    const merged = await user.client.post(`/api/v1/projects/${projectId}/canvases/${a}/merge`, { direction: 'right' });
    expect(merged.status, await merged.clone().text()).to.equal(200);
    const after = await projectTimeline(em(), projectId);
    expect(after.pieces.map((piece) => [piece.sourceStartMs, piece.durationMs])).to.deep.equal([[0, 6000], [0, 1000]]);
  });
});
