import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { makeVideo } from '../support/media.ts';
import { eventually, fileWhen } from '../support/wait.ts';
import { MediaFile } from '../../api/src/media/entities.ts';
import { AnalysisRun } from '../../api/src/analysis/entities.ts';
import { Project } from '../../api/src/projects/entities.ts';

const analyzeBody = { pacing_level: 50, false_start_sensitivity: 50, language: 'en' };

describe('analysis requests: analyze, estimated credits, runs and activation', function () {
  this.timeout(120_000);
  let app: TestApp;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-analysis-requests-'));
    // No transcription server answers here: these tests are about the requests, not the pipeline.
    app = await startTestApp({ JOB_BACKEND: 'local', WHISPER_BASE_URL: 'http://127.0.0.1:9/v1' });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function projectOf(user: SignedIn, name = 'Talk'): Promise<string> {
    const response = await user.client.post('/api/v1/projects/', { name });
    expect(response.status).to.equal(201);
    return (await json(response)).uuid;
  }

  /** A project with one uploaded clip of `seconds` (UPLOADED, artifacts done). */
  async function projectWithClip(user: SignedIn, seconds: number, audio: 'sine' | 'none' = 'sine') {
    const projectId = await projectOf(user);
    const clip = await makeVideo(dir, `clip-${Math.random().toString(36).slice(2)}.mp4`, { seconds, audio });
    const uploaded = await uploadMedia(user.client, clip, { contentType: 'video/mp4', scopeProjectId: projectId });
    await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.status === 'UPLOADED');
    return { projectId, ...uploaded };
  }

  const analyze = (user: SignedIn, projectId: string, body: Record<string, unknown> = analyzeBody) => user.client.post(`/api/v1/projects/${projectId}/analyze`, body);

  it('a project with no media → 400, nothing reserved', async () => {
    const user = await signUpAndLogin(app, { credits: 10 });
    const response = await analyze(user, await projectOf(user));
    expect(response.status).to.equal(400);
    expect((await json(response)).detail).to.match(/no media/i);
  });

  it('director_notes where the tier lacks can_use_ai_director → 403 AiDirectorNotIncluded saying so, nothing reserved; blank notes pass; a Creator may send them (issue 22)', async () => {
    const free = await signUpAndLogin(app, { credits: 10 });
    const { projectId } = await projectWithClip(free, 1);
    const refused = await analyze(free, projectId, { ...analyzeBody, director_notes: 'Spell the guest as Siobhán' });
    expect(refused.status).to.equal(403);
    const body = await json(refused);
    expect(body.code).to.equal('AiDirectorNotIncluded');
    expect(body.detail).to.match(/director notes/i);
    expect((await json(await free.client.get('/api/v1/users/me/billing'))).credits.ai_minutes.reserved).to.equal(0);
    expect((await analyze(free, projectId, { ...analyzeBody, director_notes: '  ' })).status).to.equal(200);

    const creator = await signUpAndLogin(app, { tier: 'Creator', credits: 10 });
    const other = await projectWithClip(creator, 1);
    expect((await analyze(creator, other.projectId, { ...analyzeBody, director_notes: 'Spell the guest as Siobhán' })).status).to.equal(200);
  });

  it('an analysis preset applies as stored: preset_id alone analyzes with its settings, fields sent win; another user\'s preset → 404; without a preset the fields are required (422) (issue 22)', async () => {
    const user = await signUpAndLogin(app, { credits: 10 });
    const preset = await json(await user.client.post('/api/v1/users/me/presets', { name: 'Tight', pacing_level: 80, false_start_sensitivity: 20, language: 'en', audio_clean: true, censorship_mode: 'bleep' }));
    const { projectId } = await projectWithClip(user, 1);
    const answer = await analyze(user, projectId, { preset_id: preset.uuid });
    expect(answer.status, await answer.clone().text()).to.equal(200);
    const run = await app.services.orm.em.fork().findOneOrFail(AnalysisRun, { project: projectId });
    expect(run).to.deep.include({ pacingLevel: 80, falseStartSensitivity: 20, language: 'en' });

    const second = await projectWithClip(user, 1);
    expect((await analyze(user, second.projectId, { preset_id: preset.uuid, pacing_level: 10 })).status).to.equal(200);
    expect(await app.services.orm.em.fork().findOneOrFail(AnalysisRun, { project: second.projectId })).to.deep.include({ pacingLevel: 10, falseStartSensitivity: 20 });

    const stranger = await signUpAndLogin(app, { credits: 10 });
    const theirs = await projectWithClip(stranger, 1);
    expect((await analyze(stranger, theirs.projectId, { preset_id: preset.uuid })).status).to.equal(404);
    const missing = await analyze(stranger, theirs.projectId, { pacing_level: 50 });
    expect(missing.status).to.equal(422);
    expect((await json(missing)).detail).to.match(/false_start_sensitivity/);
  });

  it('a source still processing → 409 with a clear message', async () => {
    const user = await signUpAndLogin(app, { credits: 10 });
    const { projectId, mediaFileId } = await projectWithClip(user, 1);
    await app.services.orm.em.fork().nativeUpdate(MediaFile, { id: mediaFileId }, { status: 'PROCESSING' });
    const response = await analyze(user, projectId);
    expect(response.status).to.equal(409);
    expect((await json(response)).detail).to.match(/still being processed/);
  });

  it('every source silent (no CANVAS_FILL media has audio) → 422', async () => {
    const user = await signUpAndLogin(app, { credits: 10 });
    const { projectId } = await projectWithClip(user, 1, 'none');
    const response = await analyze(user, projectId);
    expect(response.status).to.equal(422);
    expect((await json(response)).detail).to.match(/silent/);
  });

  it('credits insufficient → 402 stating the AI minutes needed and the balance; the project stays created', async () => {
    const user = await signUpAndLogin(app);
    const { projectId } = await projectWithClip(user, 7); // 7 s → 0.2 minutes (rounded up to 0.1)
    const response = await analyze(user, projectId);
    expect(response.status).to.equal(402);
    const { detail } = await json(response);
    expect(detail).to.include('0.2').and.include('0');
    const project = await app.services.orm.em.fork().findOneOrFail(Project, projectId);
    expect(project.status).to.equal('created');
    expect(await app.services.orm.em.fork().count(AnalysisRun, { project: projectId })).to.equal(0);
    expect(await app.services.billing.creditsOf(app.services.orm.em.fork(), user.user.id)).to.include({ reserved: 0 });
  });

  it('attack: a container declaring 20 ms of audio — any analysis with audio costs at least the smallest unit (0.1 minutes), so a balance of 0 → 402 (it cost 0)', async () => {
    const user = await signUpAndLogin(app);
    const { projectId, mediaFileId } = await projectWithClip(user, 2);
    // what the artifact job recorded for a Matroska file whose Segment Duration says 20 ms
    await app.services.orm.em.fork().nativeUpdate(MediaFile, { id: mediaFileId }, { durationMs: 20 });
    const estimate = await json(await user.client.get(`/api/v1/projects/${projectId}/estimated-credits`));
    expect(estimate).to.deep.equal({ estimated_minutes: 0.1, balance: 0, reserved: 0, available: 0, sufficient: false });
    expect((await analyze(user, projectId)).status).to.equal(402);
    expect(await app.services.orm.em.fork().count(AnalysisRun, { project: projectId })).to.equal(0);
  });

  it('estimated-credits → { estimated_minutes, balance, reserved, available, sufficient } (AI minutes of the spine audio, rounded up to 0.1)', async () => {
    const user = await signUpAndLogin(app, { credits: 1 });
    const { projectId } = await projectWithClip(user, 7);
    const response = await user.client.get(`/api/v1/projects/${projectId}/estimated-credits`);
    expect(response.status).to.equal(200);
    expect(await json(response)).to.deep.equal({ estimated_minutes: 0.2, balance: 1, reserved: 0, available: 1, sufficient: true });
  });

  it("estimated-credits' balance and the 402 state the same balance the billing status shows while minutes are reserved; available is said apart", async () => {
    const user = await signUpAndLogin(app, { credits: 1 });
    const { projectId } = await projectWithClip(user, 7);
    await app.services.billing.reserveCredits(app.services.orm.em.fork(), user.user.id, { reference: `test-hold:${projectId}`, minutes: 0.9 });
    const billing = (await json(await user.client.get('/api/v1/users/me/billing'))).credits.ai_minutes;
    const estimate = await json(await user.client.get(`/api/v1/projects/${projectId}/estimated-credits`));
    expect(estimate).to.deep.equal({ estimated_minutes: 0.2, balance: billing.balance, reserved: billing.reserved, available: 0.1, sufficient: false });
    const refused = await analyze(user, projectId);
    expect(refused.status).to.equal(402);
    expect((await json(refused)).detail).to.equal(`This needs 0.2 AI minutes; your balance is ${billing.balance}, of which ${billing.reserved} are reserved by analyses in progress, so 0.1 are available.`);
  });

  it('analyze → returns at once with status analyzing and the credits reserved; a concurrent second analyze → 409 (already analyzing)', async () => {
    const user = await signUpAndLogin(app, { credits: 5 });
    const { projectId } = await projectWithClip(user, 7);
    const [first, second] = await Promise.all([analyze(user, projectId), analyze(user, projectId)]);
    expect([first.status, second.status].sort()).to.deep.equal([200, 409]);
    const ok = first.status === 200 ? first : second;
    expect((await json(ok)).status).to.equal('analyzing');
    const runs = await app.services.orm.em.fork().find(AnalysisRun, { project: projectId });
    expect(runs).to.have.lengthOf(1);
    expect(Number(runs[0]!.creditsReserved)).to.equal(0.2);
  });

  it('a failed pipeline (the transcription server unreachable) → run failed with a stable code, project failed, credits released', async () => {
    const user = await signUpAndLogin(app, { credits: 5 });
    const { projectId } = await projectWithClip(user, 2);
    expect((await analyze(user, projectId)).status).to.equal(200);
    const run = await waitForRun(app, projectId, (candidate) => candidate.status === 'failed');
    expect(run.errorCode).to.be.a('string').and.not.equal('');
    expect((await app.services.orm.em.fork().findOneOrFail(Project, projectId)).status).to.equal('failed');
    expect(await app.services.billing.creditsOf(app.services.orm.em.fork(), user.user.id)).to.include({ balance: 5, reserved: 0 });
    // Re-analysis is allowed from failed.
    expect((await analyze(user, projectId)).status).to.equal(200);
  });

  it('analysis-runs lists the runs newest first with the lightweight fields; activating a run that is not completed → 422', async () => {
    const user = await signUpAndLogin(app, { credits: 5 });
    const { projectId } = await projectWithClip(user, 2);
    expect((await analyze(user, projectId)).status).to.equal(200);
    const run = await waitForRun(app, projectId, (candidate) => candidate.status === 'failed');
    const list = (await json(await user.client.get(`/api/v1/projects/${projectId}/analysis-runs?limit=20`))).data;
    expect(list[0]).to.include({ uuid: run.id, status: 'failed', pacing_level: 50, false_start_sensitivity: 50, language: 'en', edit_count: 0 });
    expect(list[0]).to.have.all.keys('uuid', 'status', 'pacing_level', 'false_start_sensitivity', 'language', 'edit_count', 'silence_count', 'false_start_count', 'filler_count', 'credits_charged', 'duration_ms', 'created_at', 'weak_evidence');
    const activate = await user.client.post(`/api/v1/projects/${projectId}/analysis-runs/${run.id}/activate`);
    expect(activate.status).to.equal(422);
  });

  it("activating another project's run → 422; another user's project → 404 on analyze, estimate, runs and edits", async () => {
    const owner = await signUpAndLogin(app, { credits: 5 });
    const { projectId } = await projectWithClip(owner, 1);
    expect((await analyze(owner, projectId)).status).to.equal(200);
    const run = await waitForRun(app, projectId, () => true);
    const other = await projectOf(owner, 'Other');
    expect((await owner.client.post(`/api/v1/projects/${other}/analysis-runs/${run.id}/activate`)).status).to.equal(422);

    const stranger = await signUpAndLogin(app, { credits: 5 });
    expect((await analyze(stranger, projectId)).status).to.equal(404);
    expect((await stranger.client.get(`/api/v1/projects/${projectId}/estimated-credits`)).status).to.equal(404);
    expect((await stranger.client.get(`/api/v1/projects/${projectId}/analysis-runs`)).status).to.equal(404);
    expect((await stranger.client.get(`/api/v1/projects/${projectId}/edits/`)).status).to.equal(404);
  });

  it('pacing_level and false_start_sensitivity outside 0–100, or a language that is not an ISO code → 422', async () => {
    const user = await signUpAndLogin(app, { credits: 5 });
    const projectId = await projectOf(user);
    for (const body of [
      { ...analyzeBody, pacing_level: 101 },
      { ...analyzeBody, false_start_sensitivity: -1 },
      { ...analyzeBody, language: 'english' },
      { ...analyzeBody, analysis_mode: 'everything' },
    ]) {
      expect((await analyze(user, projectId, body)).status, JSON.stringify(body)).to.equal(422);
    }
  });
});

async function waitForRun(app: TestApp, projectId: string, done: (run: InstanceType<typeof AnalysisRun.class>) => boolean) {
  return eventually(async () => {
    const [run] = await app.services.orm.em.fork().find(AnalysisRun, { project: projectId }, { orderBy: { createdAt: 'desc' }, limit: 1 });
    return run && run.status !== 'queued' && run.status !== 'running' && done(run) ? run : undefined;
  }, `a settled run of project ${projectId}`, 60_000);
}
