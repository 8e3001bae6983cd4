import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { eventually, fileWhen } from '../support/wait.ts';
import { isEvent, openSse } from '../support/sse-stream.ts';
import { makeImage } from '../support/media.ts';
import { makeSpokenTrack, makeSpokenVideo } from '../support/speech.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import type { RenderInput } from '../../crds/contract/programs/render.ts';

interface EditJson {
  uuid: string;
  type: string;
  start_ms: number;
  end_ms: number;
}

interface LineJson {
  uuid: string;
  text: string;
  original_text: string;
}

/**
 * Issue 22 item 3: a re-analysis never makes the user's own work disappear. The real
 * pipeline (analyze program, offline recognizer) runs twice on the same speech; between the
 * runs the user cuts, adds a b-roll overlay, corrects a caption and saves a draft.
 */
describe('a re-analysis keeps the user\'s own work: analyze → edit → re-analyze → export (local backend, offline recognizer, real ffmpeg)', function () {
  this.timeout(400_000);
  let app: TestApp;
  let dir: string;
  let user: SignedIn;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-reanalysis-'));
    app = await startTestApp({ JOB_BACKEND: 'local' });
    user = await signUpAndLogin(app, { tier: 'Creator', credits: 10 });
  });
  after(async () => {
    await app?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function analyzed(projectId: string, pacing: number): Promise<string> {
    const stream = await openSse(user.client, `/api/v1/projects/${projectId}/events`);
    try {
      const answer = await user.client.post(`/api/v1/projects/${projectId}/analyze`, { pacing_level: pacing, false_start_sensitivity: 50, language: 'en' });
      expect(answer.status, await answer.clone().text()).to.be.oneOf([200, 202]);
      const { frame, before } = await stream.until((f) => isEvent('analysis_complete')(f) || isEvent('analysis_failed')(f), 180_000);
      expect(frame, JSON.stringify(before)).to.match(/^event: analysis_complete/);
    } finally {
      stream.close();
    }
    return (await json(await user.client.get(`/api/v1/projects/${projectId}`))).active_run_id as string;
  }

  /** A bare list, or the list envelope (issue 22 item 6 moves lists to { data }). */
  const listOf = <T>(body: { data: T[] }): T[] => body.data;
  const editsOf = async (projectId: string): Promise<EditJson[]> => listOf<EditJson>(await json(await user.client.get(`/api/v1/projects/${projectId}/edits/`)));
  const linesOf = async (projectId: string): Promise<LineJson[]> => (await json(await user.client.get(`/api/v1/projects/${projectId}/caption-lines?items_per_page=100`))).data;

  it('manual and asset edits stay listed and exported, a draft\'s overrides still apply, and corrected caption text carries over where the words match', async () => {
    const track = await makeSpokenTrack(dir, 'talk.wav', [{ say: 'welcome to the show' }, { pauseMs: 2500 }, { say: 'today we talk about editing' }, { pauseMs: 1500 }, { say: 'thank you for watching' }]);
    const video = await makeSpokenVideo(dir, 'talk.mp4', track);
    const projectId = (await json(await user.client.post('/api/v1/projects/', { name: 'Talk' }))).uuid as string;
    const source = await uploadMedia(user.client, video.path, { contentType: 'video/mp4', scopeProjectId: projectId });
    const broll = await uploadMedia(user.client, await makeImage(dir, 'broll.png', { width: 320, height: 240 }), { contentType: 'image/png' });
    await fileWhen(app.services.orm, source.mediaFileId, (file) => file.status === 'UPLOADED', 60_000);
    await fileWhen(app.services.orm, broll.mediaFileId, (file) => file.status === 'UPLOADED', 60_000);

    const firstRun = await analyzed(projectId, 50);

    // the user's own work on the first run
    const manual = await json(await user.client.post(`/api/v1/projects/${projectId}/edits/`, { type: 'manual', start_ms: 0, end_ms: 600, active: true, reason: 'my cut' }));
    const overlay = await json(
      await user.client.post(`/api/v1/projects/${projectId}/edits/`, { type: 'asset', start_ms: 3000, end_ms: 4500, active: true, reason: 'b-roll', media_item_id: broll.mediaItemId, visual_mode: 'overlay' }),
    );
    expect(manual.uuid).to.be.a('string');
    expect(overlay.uuid).to.be.a('string');
    expect((await user.client.post(`/api/v1/projects/${projectId}/caption-lines/generate`)).status).to.equal(200);
    const [firstLine] = await linesOf(projectId);
    expect(firstLine, 'a line was generated').to.not.equal(undefined);
    expect((await user.client.patch(`/api/v1/caption-lines/${firstLine!.uuid}`, { text: 'Welcome to THE show!' })).status).to.equal(200);
    const draft = await json(await user.client.post(`/api/v1/projects/${projectId}/drafts/`, { name: 'Mine', edit_overrides: { [manual.uuid]: { end_ms: 900 } }, export_settings: {} }));
    expect(draft.analysis_run_id).to.equal(firstRun);

    const secondRun = await analyzed(projectId, 80);
    expect(secondRun, 'the new run is active').to.not.equal(firstRun);

    const listed = await editsOf(projectId);
    expect(listed.map((edit) => edit.uuid), 'the manual cut and the b-roll are still listed').to.include.members([manual.uuid, overlay.uuid]);

    expect((await user.client.post(`/api/v1/projects/${projectId}/caption-lines/generate`)).status).to.equal(200);
    const lines = await linesOf(projectId);
    const carried = lines.find((line) => line.original_text === firstLine!.original_text);
    expect(carried, JSON.stringify(lines)).to.not.equal(undefined);
    expect(carried!.text, 'the correction carried over').to.equal('Welcome to THE show!');

    const exported = await user.client.post(`/api/v1/projects/${projectId}/exports/`, { name: 'Again', draft_id: draft.uuid, export_settings: { resolution: '720p', captions: { enabled: true } } });
    expect(exported.status, await exported.clone().text()).to.equal(202);
    const exportId = (await json(exported)).uuid as string;
    const job = await app.services.orm.em.fork().findOneOrFail(Job, { program: 'render', subjectId: exportId });
    const input = job.input as unknown as RenderInput;
    expect(input.assets.map((asset) => asset.sourceId), 'the b-roll is exported').to.deep.equal([broll.mediaFileId]);
    // the cut [0, 600) with the draft's end_ms 900: nothing before 900 ms plays (600 without the override)
    expect(input.segments[0]!.sourceStartMs, "the manual cut, with the draft's override, is exported").to.be.at.least(900);
    expect(input.captions.map((caption) => caption.text)).to.include('Welcome to THE show!');
    const final = await eventually(async () => {
      const row = await json(await user.client.get(`/api/v1/exports/${exportId}`));
      return row.status === 'completed' || row.status === 'failed' ? row : undefined;
    }, 'export settled', 180_000);
    expect(final.status).to.equal('completed');
  });
});
