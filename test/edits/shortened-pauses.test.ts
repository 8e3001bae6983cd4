import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startTestApp, json, type TestApp, failCloseOnContractViolations } from '../support/harness.ts';
import { projectWithSources } from '../support/projects.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { completedRun } from '../support/analysis-runs.ts';
import { Edit } from '../../api/src/edits/entities.ts';
import { Project } from '../../api/src/projects/entities.ts';
import type { StoredPause } from '../../crds/contract/editing/kept-pause.ts';

/** A shortened pause over 2000–4500 ms keeping 420 ms of it (252 after the speech before, 168 before the speech after), with a breath at 3800–4150, as the analysis writes it. */
const PAUSE: StoredPause = { start_ms: 2_000, end_ms: 4_500, kept_ms: 420, kept_split: 0.6, breath: { start_ms: 3_800, end_ms: 4_150 }, keep_breath: false };

describe('edits: a shortened pause keeps what the creator chooses (issue 39)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let user: SignedIn;

  before(async () => {
    app = await startTestApp();
    await failCloseOnContractViolations(app);
    user = await signUpAndLogin(app, { tier: 'Viral' });
  });
  after(() => app.close());

  /** A project of one 10 s source, analysed: the shortened pause and a manual cut. */
  async function analysed(): Promise<{ projectId: string; pauseId: string; manualId: string }> {
    const projectId = await projectWithSources(app, user, [10_000]);
    const em = app.services.orm.em.fork();
    const project = await em.findOneOrFail(Project, projectId);
    const run = completedRun(em, project, user.user.id, [{ word: 'Hello.', start_ms: 1_500, end_ms: 2_000, confidence: 0.9, source_index: 0 }]);
    const pause = em.create(Edit, { id: randomUUID(), project, runId: run.id, type: 'silence', startMs: 2_252, endMs: 4_332, active: true, reason: 'Pause of 2.5 s, shortened to 0.42 s', pause: PAUSE });
    const manual = em.create(Edit, { id: randomUUID(), project, runId: null, type: 'manual', startMs: 6_000, endMs: 7_000, active: true, reason: '' });
    project.activeRunId = run.id;
    project.status = 'analyzed';
    await em.flush();
    return { projectId, pauseId: pause.id, manualId: manual.id };
  }

  const patch = (editId: string, body: Record<string, unknown>) => user.client.patch(`/api/v1/edits/${editId}`, body);

  it('the list serves the pause; PATCH kept_ms moves the removed range by the split, keep_breath stops it short of the breath', async () => {
    const { projectId, pauseId } = await analysed();
    const listed = (await json(await user.client.get(`/api/v1/projects/${projectId}/edits/`))).data.find((edit: { uuid: string }) => edit.uuid === pauseId);
    expect(listed).to.deep.include({ start_ms: 2_252, end_ms: 4_332, pause: PAUSE });

    const longer = await patch(pauseId, { kept_ms: 1_000 });
    expect(longer.status, await longer.clone().text()).to.equal(200);
    expect(await json(longer)).to.deep.include({ start_ms: 2_600, end_ms: 4_100, pause: { ...PAUSE, kept_ms: 1_000 } });

    const breathing = await patch(pauseId, { keep_breath: true });
    expect(breathing.status, await breathing.clone().text()).to.equal(200);
    expect(await json(breathing)).to.deep.include({ start_ms: 2_600, end_ms: 3_770, pause: { ...PAUSE, kept_ms: 1_000, keep_breath: true } });
  });

  it('PATCH 422s: kept_ms on an edit that shortens no pause, kept_ms with start_ms, keeping the whole pause, under 100 ms; a range set by hand leaves the pause keeping no set length', async () => {
    const { pauseId, manualId } = await analysed();
    for (const [editId, body] of [
      [manualId, { kept_ms: 500 }],
      [pauseId, { kept_ms: 500, start_ms: 2_100 }],
      [pauseId, { kept_ms: 2_500 }],
      [pauseId, { kept_ms: 50 }],
    ] as const) {
      const answer = await patch(editId, body);
      expect(answer.status, `${JSON.stringify(body)}: ${await answer.clone().text()}`).to.equal(422);
    }
    const byHand = await patch(pauseId, { start_ms: 2_100 });
    expect(byHand.status, await byHand.clone().text()).to.equal(200);
    expect(await json(byHand)).to.deep.include({ start_ms: 2_100, end_ms: 4_332, pause: { ...PAUSE, kept_ms: null } });
  });

  it('a draft override of kept_ms reaches the export\'s timeline: the output keeps that much of the pause', async () => {
    const { projectId, pauseId } = await analysed();
    const draft = await user.client.post(`/api/v1/projects/${projectId}/drafts/`, { name: 'Slower', edit_overrides: { [pauseId]: { kept_ms: 1_000 } } });
    expect(draft.status, await draft.clone().text()).to.equal(201);
    const bad = await user.client.post(`/api/v1/projects/${projectId}/drafts/`, { name: 'Bad', edit_overrides: { [pauseId]: { kept_ms: 10 } } });
    expect(bad.status).to.equal(422);
    const draftId = (await json(draft)).uuid as string;
    const lengthOf = async (query: string): Promise<number> => {
      const response = await user.client.get(`/api/v1/projects/${projectId}/timeline?format=otio${query}`);
      expect(response.status, await response.clone().text()).to.equal(200);
      const body = (await json(response)) as { duration_frames: number; frame_rate: { num: number; den: number } };
      return (body.duration_frames * 1000 * body.frame_rate.den) / body.frame_rate.num;
    };
    // the pause removes 2080 ms as analysed (420 kept), 1500 ms with 1000 kept: the draft's timeline is 580 ms longer, to a frame
    const longer = (await lengthOf(`&draft_id=${draftId}`)) - (await lengthOf(''));
    expect(longer).to.be.within(580 - 34, 580 + 34);
  });
});
