import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { ManualClock } from '../support/clock.ts';
import { newProject, projectWithSources } from '../support/projects.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { openSse, isEvent, dataOf } from '../support/sse-stream.ts';
import { resourceNamespace } from '../support/kube-cluster.ts';
import { renderInputSchema } from '../../crds/contract/programs/render.ts';
import { AnalysisRun } from '../../api/src/analysis/entities.ts';
import { Edit } from '../../api/src/edits/entities.ts';
import { Export } from '../../api/src/exports/entities.ts';
import { sweepExpiredExports } from '../../api/src/exports/service.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { Project } from '../../api/src/projects/entities.ts';

/**
 * The export API and the export's life, with render jobs handed to the Kubernetes
 * backend (a real API server, no operator): a job stays queued until the test plays the
 * backend's part through the job completion, as the operator would.
 */
describe('exports: create, list, download and expire', function () {
  this.timeout(60_000);
  const day = 24 * 3600 * 1000;
  let app: TestApp;
  let clock: ManualClock;
  let user: SignedIn;

  before(async () => {
    const { namespace, kubeConfig } = await resourceNamespace('exports');
    clock = new ManualClock();
    app = await startTestApp({ JOB_BACKEND: 'kubernetes', KUBE_NAMESPACE: namespace, EXPORT_MAX_ACTIVE_PER_USER: '3' }, { kubeConfig, clock });
    user = await signUpAndLogin(app, { tier: 'Creator' });
  });
  after(async () => {
    await app?.close();
  });

  const post = (projectId: string, body: Record<string, unknown>, owner: SignedIn = user) => owner.client.post(`/api/v1/projects/${projectId}/exports/`, body);
  async function created(projectId: string, body: Record<string, unknown> = { name: 'Final' }, owner: SignedIn = user) {
    const response = await post(projectId, body, owner);
    expect(response.status, await response.clone().text()).to.equal(202);
    return json(response);
  }
  const row = (id: string) => app.services.orm.em.fork().findOneOrFail(Export, id);
  const jobOf = async (exportId: string) => app.services.orm.em.fork().findOneOrFail(Job, (await row(exportId)).jobId!);
  /** A finished export: its job completed as a backend reports it, with an output object really stored. */
  async function completeExport(exportId: string): Promise<string> {
    const job = await jobOf(exportId);
    const key = `${job.outputPrefix}/export.mp4`;
    await app.services.storage.client.send(new PutObjectCommand({ Bucket: app.services.storage.bucket, Key: key, Body: 'mp4 bytes', ContentType: 'video/mp4' }));
    await app.services.completion.complete(job.id, { ok: true, result: { output_key: key, size_bytes: 9, duration_ms: 4000, width: 1920, height: 1080, frame_count: 120, path: 'full', loudness_linear: null } });
    return key;
  }
  /** Other exports of the user are finished so the per-user cap does not interfere. */
  async function settleActive(owner: SignedIn = user) {
    await app.services.orm.em.fork().nativeUpdate(Export, { userId: owner.user.id, status: { $in: ['queued', 'rendering'] } }, { status: 'failed' });
  }
  afterEach(() => settleActive());

  it('defaults exactly as the spec tables, stored resolved on the export, with a 202 that returns at once (queued)', async () => {
    const projectId = await projectWithSources(app, user, [4000]);
    const body = await created(projectId);
    expect(body.status).to.equal('queued');
    expect(body.export_settings).to.deep.equal({
      resolution: '1080p',
      aspect_ratio: '16:9',
      letterbox_background: '#000000',
      audio_censorship: 'none',
      video_flip_h: false,
      video_flip_v: false,
      audio: { normalize: false, target_lufs: -14, noise_reduction: false, noise_floor: -25, main_volume_percent: 100 },
      captions: { enabled: false, style: 'classic', font_size: 48 },
      edit_overrides: {},
      crop: null,
      snap_cuts_to_keyframes: true,
    });
    expect(body.filename).to.equal('Talk - Final - 1080p 16x9.mp4');
  });

  it("the render job's input is the timeline minus the active cuts, after the export's overrides", async () => {
    const projectId = await projectWithSources(app, user, [10_000]);
    const em = app.services.orm.em.fork();
    const project = await em.findOneOrFail(Project, projectId);
    const keep = em.create(Edit, { id: randomUUID(), project, type: 'manual', startMs: 2000, endMs: 3000, active: true, reason: '' });
    em.create(Edit, { id: randomUUID(), project, type: 'manual', startMs: 6000, endMs: 8000, active: true, reason: '' });
    await em.flush();
    const body = await created(projectId, { name: 'Cut', export_settings: { edit_overrides: { [keep.id]: { active: false } }, aspect_ratio: '9:16', letterbox_background: '#FF8800' } });
    const input = renderInputSchema.parse((await jobOf(body.uuid)).input);
    expect(input.segments.map((s) => [s.sourceStartMs, s.sourceEndMs, s.outStartMs])).to.deep.equal([[0, 6000, 0], [8000, 10_000, 6000]]);
    expect(input.settings).to.deep.include({ aspectRatio: '9:16', letterboxColor: '#ff8800', resolution: '1080p', captions: null });
    expect(input.watermark).to.equal(false);
  });

  it('a colour a preview preset takes (#fff) is a valid letterbox too, rendered as #ffffff (issue 22: presets and exports agree)', async () => {
    const projectId = await projectWithSources(app, user, [5000]);
    const preset = await user.client.post('/api/v1/users/me/preview-presets', {
      name: 'White', format: '9:16', background: '#fff', caption_style: 'karaoke', caption_font: 'DejaVu Sans', caption_size: 48, caption_position: 'bottom', caption_color: '#FfF', caption_length: 4, video_flip_h: false, video_flip_v: false,
    });
    expect(preset.status, await preset.clone().text()).to.equal(201);
    const body = await created(projectId, { name: 'White', export_settings: { aspect_ratio: '9:16', letterbox_background: (await json(preset)).background, captions: { enabled: false, style: 'karaoke' } } });
    expect(body.export_settings.letterbox_background).to.equal('#ffffff');
    expect(renderInputSchema.parse((await jobOf(body.uuid)).input).settings.letterboxColor).to.equal('#ffffff');
    // one list of caption styles: a style exports refuse is refused by preview presets too
    const unknownStyle = await user.client.post('/api/v1/users/me/preview-presets', {
      name: 'Comic', format: '9:16', background: '#000', caption_style: 'comic-sans', caption_font: 'DejaVu Sans', caption_size: 48, caption_position: 'bottom', caption_color: '#fff', caption_length: 4, video_flip_h: false, video_flip_v: false,
    });
    expect(unknownStyle.status).to.equal(422);
  });

  it('400 when inline overrides exceed the timeline duration or the project has no media; 422 for end_ms <= start_ms', async () => {
    const projectId = await projectWithSources(app, user, [5000]);
    const editId = randomUUID();
    const beyond = await post(projectId, { name: 'x', export_settings: { edit_overrides: { [editId]: { end_ms: 5001 } } } });
    expect(beyond.status).to.equal(400);
    expect((await json(beyond)).detail).to.contain('5000');
    const empty = await post(await newProject(user), { name: 'x' });
    expect(empty.status).to.equal(400);
    const backwards = await post(projectId, { name: 'x', export_settings: { edit_overrides: { [editId]: { start_ms: 3000, end_ms: 3000 } } } });
    expect(backwards.status).to.equal(422);
  });

  it('while a source is processing the bound check is skipped (no 400), and the export waits for the media: 409', async () => {
    const projectId = await projectWithSources(app, user, [null]);
    const response = await post(projectId, { name: 'x', export_settings: { edit_overrides: { [randomUUID()]: { end_ms: 99_000_000 } } } });
    expect(response.status).to.equal(409);
    expect((await json(response)).detail).to.match(/still being processed/);
    expect(await app.services.orm.em.fork().count(Export, { project: projectId })).to.equal(0);
  });

  it('unknown keys and out-of-range values in export_settings → 422; main_volume_percent is 0 to 100', async () => {
    const projectId = await projectWithSources(app, user, [5000]);
    for (const export_settings of [{ bogus: 1 }, { audio: { main_volume_percent: 101 } }, { audio: { main_volume_percent: -1 } }, { resolution: '4k' }, { letterbox_background: 'red' }, { captions: { style: 'comic-sans' } }, { audio: { extra: true } }]) {
      const response = await post(projectId, { name: 'x', export_settings });
      expect(response.status, JSON.stringify(export_settings)).to.equal(422);
    }
    const zero = await created(projectId, { name: 'silent', export_settings: { audio: { main_volume_percent: 0 } } });
    expect(zero.export_settings.audio.main_volume_percent).to.equal(0);
  });

  it("a saved draft brings its overrides, resolution, aspect and crop; draft_id with inline overrides → 422; another project's draft → 404", async () => {
    const projectId = await projectWithSources(app, user, [8000]);
    const draftResponse = await user.client.post(`/api/v1/projects/${projectId}/drafts/`, {
      name: 'Vertical',
      edit_overrides: {},
      export_settings: { resolution: '720p', aspect_ratio: '9:16', crop_enabled: true, crop_zoom: 2, crop_pan_x: 0.5, crop_pan_y: 0 },
    });
    const draft = await json(draftResponse);
    const body = await created(projectId, { name: 'From draft', draft_id: draft.uuid, export_settings: { video_flip_h: true } });
    expect(body.draft_id).to.equal(draft.uuid);
    expect(body.export_settings).to.deep.include({ resolution: '720p', aspect_ratio: '9:16', video_flip_h: true, crop: { zoom: 2, pan_x: 0.5, pan_y: 0 } });
    expect(body.filename).to.equal('Talk - From draft - 720p 9x16.mp4');
    const both = await post(projectId, { name: 'x', draft_id: draft.uuid, export_settings: { edit_overrides: {} } });
    expect(both.status).to.equal(422);
    const elsewhere = await post(await projectWithSources(app, user, [3000]), { name: 'x', draft_id: draft.uuid });
    expect(elsewhere.status).to.equal(404);
  });

  it("expires_at (the tier's retention days) and watermark_required (not can_watermark_free) are fixed at creation; a tier change later alters neither", async () => {
    const free = await signUpAndLogin(app);
    const projectId = await projectWithSources(app, free, [3000]);
    const body = await created(projectId, { name: 'Free export' }, free);
    expect(body.watermark_required).to.equal(true);
    expect(new Date(body.expires_at).getTime() - clock.now().getTime()).to.equal(3 * day);
    expect(renderInputSchema.parse((await jobOf(body.uuid)).input).watermark).to.equal(true);
    await app.services.billing.setPlan(app.services.orm.em.fork(), free.user.id, { tier: 'Viral', status: 'active' });
    const reread = await json(await free.client.get(`/api/v1/exports/${body.uuid}`));
    expect(reread).to.deep.include({ watermark_required: true, expires_at: body.expires_at });
    const viral = await created(projectId, { name: 'Viral export' }, free);
    expect(viral.watermark_required).to.equal(false);
    expect(new Date(viral.expires_at).getTime() - clock.now().getTime()).to.equal(90 * day);
    await settleActive(free);
  });

  it('statuses: queued → rendering when the backend starts it (export_started once) → completed (export_complete with the storage key)', async () => {
    const projectId = await projectWithSources(app, user, [3000]);
    const stream = await openSse(user.client, `/api/v1/projects/${projectId}/events`);
    try {
      const body = await created(projectId);
      const job = await jobOf(body.uuid);
      await app.services.completion.markProgress(job.id, { status: 'running', startedAt: new Date() });
      await app.services.completion.markProgress(job.id, { status: 'running', startedAt: new Date() });
      expect((await row(body.uuid)).status).to.equal('rendering');
      expect(dataOf(await stream.next(isEvent('export_started')))).to.deep.equal({ export_uuid: body.uuid });
      const key = await completeExport(body.uuid);
      const { frame, before } = await stream.until(isEvent('export_complete'));
      expect(before.filter(isEvent('export_started'))).to.deep.equal([]);
      expect(dataOf(frame)).to.deep.equal({ export_uuid: body.uuid, storage_key: key });
      const read = await json(await user.client.get(`/api/v1/exports/${body.uuid}`));
      expect(read).to.deep.include({ status: 'completed', size_bytes: 9, duration_ms: 4000, render_path: 'full', error: null });
    } finally {
      stream.close();
    }
  });

  it("export_progress goes out exactly at 5, 30 and 85, once each, with the encoder's time left in the owner's language", async () => {
    const pt = await signUpAndLogin(app, { tier: 'Creator', locale: 'pt' });
    const projectId = await projectWithSources(app, pt, [3000]);
    const stream = await openSse(pt.client, `/api/v1/projects/${projectId}/events`);
    try {
      const body = await created(projectId, { name: 'PT' }, pt);
      const job = await jobOf(body.uuid);
      for (const [progress, step, etaSeconds] of [[2, 'probe', null], [7, 'encode', 95], [12, 'encode', 80], [31, 'encode', 42], [60, 'encode', null], [90, 'mux', null], [95, 'upload', null]] as const) {
        await app.services.completion.markProgress(job.id, { progress, step, etaSeconds });
      }
      await completeExport(body.uuid);
      const { before } = await stream.until(isEvent('export_complete'));
      const marks = before.filter(isEvent('export_progress')).map(dataOf);
      expect(marks).to.deep.equal([
        { export_uuid: body.uuid, progress: 5, message: 'A preparar a renderização — faltam cerca de 1 min 35 s' },
        { export_uuid: body.uuid, progress: 30, message: 'A renderizar — faltam cerca de 42 s' },
        { export_uuid: body.uuid, progress: 85, message: 'A finalizar o vídeo' },
      ]);
      await settleActive(pt);
    } finally {
      stream.close();
    }
  });

  it("a render that fails (the program's code, a timeout, a kill) ends failed with a clear code, never stuck in rendering; export_failed in the owner's language", async () => {
    const es = await signUpAndLogin(app, { tier: 'Creator', locale: 'es' });
    const projectId = await projectWithSources(app, es, [3000]);
    const stream = await openSse(es.client, `/api/v1/projects/${projectId}/events`);
    try {
      const timedOut = await created(projectId, { name: 'late' }, es);
      await app.services.completion.markProgress((await jobOf(timedOut.uuid)).id, { status: 'running', startedAt: new Date() });
      await app.services.completion.complete((await jobOf(timedOut.uuid)).id, { ok: false, error: 'The job did not finish within its time limit of 3600 s.', code: 'job.timed_out', params: { seconds: 3600 } });
      const failed = dataOf(await stream.next(isEvent('export_failed')));
      expect(failed).to.deep.equal({ export_uuid: timedOut.uuid, error: 'La tarea no terminó dentro de su límite de tiempo de 3600 s.' });
      const read = await json(await es.client.get(`/api/v1/exports/${timedOut.uuid}`, { headers: { 'Accept-Language': 'en' } }));
      expect(read).to.deep.include({ status: 'failed', error: 'The job did not finish within its time limit of 3600 s.' });
      expect((await row(timedOut.uuid)).errorCode).to.equal('job.timed_out');

      // the operator's report of a pod the kernel killed
      const killed = await created(projectId, { name: 'killed' }, es);
      await app.services.completion.complete((await jobOf(killed.uuid)).id, { ok: false, error: 'The job ran out of memory.', code: 'job.out_of_memory' });
      expect(dataOf(await stream.next(isEvent('export_failed'))).export_uuid).to.equal(killed.uuid);
      expect(await row(killed.uuid)).to.deep.include({ status: 'failed', errorCode: 'job.out_of_memory' });
    } finally {
      stream.close();
    }
  });

  it('download: { uuid, url, expires_in: 3600, filename } of a completed export; the URL serves the file as that filename', async () => {
    const projectId = await projectWithSources(app, user, [3000]);
    const body = await created(projectId, { name: 'Ünïcode "quoted"' });
    const notYet = await user.client.get(`/api/v1/exports/${body.uuid}/download`);
    expect(notYet.status).to.equal(409);
    await completeExport(body.uuid);
    const response = await user.client.get(`/api/v1/exports/${body.uuid}/download`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('cache-control')).to.equal('no-store');
    const download = await json(response);
    expect(download).to.deep.include({ uuid: body.uuid, expires_in: 3600, filename: 'Talk - Ünïcode quoted - 1080p 16x9.mp4' });
    const file = await fetch(download.url);
    expect(file.status).to.equal(200);
    expect(await file.text()).to.equal('mp4 bytes');
    expect(file.headers.get('content-disposition')).to.contain("filename*=UTF-8''Talk%20-%20%C3%9Cn%C3%AFcode%20quoted%20-%201080p%2016x9.mp4");
  });

  it("another user's export is 404 on read and download, and their project's exports cannot be listed or created", async () => {
    const projectId = await projectWithSources(app, user, [3000]);
    const body = await created(projectId);
    await completeExport(body.uuid);
    const other = await signUpAndLogin(app, { tier: 'Creator' });
    expect((await other.client.get(`/api/v1/exports/${body.uuid}`)).status).to.equal(404);
    expect((await other.client.get(`/api/v1/exports/${body.uuid}/download`)).status).to.equal(404);
    expect((await other.client.get(`/api/v1/projects/${projectId}/exports/`)).status).to.equal(404);
    expect((await post(projectId, { name: 'mine now' }, other)).status).to.equal(404);
  });

  it('the list is the project\'s exports, newest first, paginated', async () => {
    const projectId = await projectWithSources(app, user, [3000]);
    const names = ['one', 'two', 'three'];
    for (const name of names) {
      await created(projectId, { name });
      clock.advance(1000);
    }
    const page = await json(await user.client.get(`/api/v1/projects/${projectId}/exports/?items_per_page=2`));
    expect(page.data.map((e: { name: string }) => e.name)).to.deep.equal(['three', 'two']);
    expect(page).to.deep.include({ total_count: 3, has_more: true, page: 1, items_per_page: 2 });
  });

  it('the sweep marks completed exports past expires_at expired and deletes their output; their download is 410 (even before the sweep ran)', async () => {
    const projectId = await projectWithSources(app, user, [3000]);
    const body = await created(projectId);
    const key = await completeExport(body.uuid);
    // its date passes (moving the clock 30 days would end the session too)
    await app.services.orm.em.fork().nativeUpdate(Export, { id: body.uuid }, { expiresAt: new Date(clock.now().getTime() - 1) });
    const early = await user.client.get(`/api/v1/exports/${body.uuid}/download`);
    expect(early.status).to.equal(410);
    const result = await sweepExpiredExports(app.services.orm.em.fork(), app.services.storage, clock.now());
    expect(result.expired).to.be.greaterThanOrEqual(1);
    expect((await row(body.uuid)).status).to.equal('expired');
    expect(await app.services.storage.sizeOf(key)).to.equal(null);
    const gone = await user.client.get(`/api/v1/exports/${body.uuid}/download`);
    expect(gone.status).to.equal(410);
    expect((await json(gone)).detail).to.match(/expired/);
    const again = await sweepExpiredExports(app.services.orm.em.fork(), app.services.storage, clock.now());
    expect(again.expired).to.equal(0);
  });

  it('two sweeps at once (two api instances) expire each export once', async () => {
    const projectId = await projectWithSources(app, user, [3000]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const body = await created(projectId, { name: `e${i}` });
      await completeExport(body.uuid);
      ids.push(body.uuid);
    }
    const later = new Date(clock.now().getTime() + 31 * day);
    const due = await app.services.orm.em.fork().count(Export, { status: 'completed', expiresAt: { $lte: later } });
    const results = await Promise.all([0, 1, 2].map(() => sweepExpiredExports(app.services.orm.em.fork(), app.services.storage, later)));
    expect(results.reduce((sum, r) => sum + r.expired, 0)).to.equal(due);
    for (const id of ids) expect((await row(id)).status).to.equal('expired');
  });

  it('EXPORT_MAX_ACTIVE_PER_USER: ten creations at once start exactly three renders; the others are 409', async () => {
    const projectId = await projectWithSources(app, user, [3000]);
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => post(projectId, { name: `burst ${i}` })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 202)).to.have.length(3);
    expect(statuses.filter((s) => s === 409)).to.have.length(7);
    expect(await app.services.orm.em.fork().count(Job, { program: 'render', projectId })).to.equal(3);
  });

  it('captions need an analysed project (409 before the first analysis); with a run, lines and words are placed on the output', async () => {
    const projectId = await projectWithSources(app, user, [10_000]);
    const refused = await post(projectId, { name: 'c', export_settings: { captions: { enabled: true } } });
    expect(refused.status).to.equal(409);
    const em = app.services.orm.em.fork();
    const project = await em.findOneOrFail(Project, projectId);
    const words = [
      { word: 'Hello', start_ms: 500, end_ms: 900, confidence: 0.9, source_index: 0 },
      { word: 'damn', start_ms: 1000, end_ms: 1400, confidence: 0.9, source_index: 0 },
      { word: 'world.', start_ms: 3500, end_ms: 4000, confidence: 0.9, source_index: 0 },
    ];
    const run = em.create(AnalysisRun, { id: randomUUID(), project, userId: user.user.id, status: 'completed', pacingLevel: 50, falseStartSensitivity: 50, analysisMode: 'ai_edit', creditsReserved: 0, transcript: { language: 'en', text: 'Hello damn world.', words } });
    project.activeRunId = run.id;
    em.create(Edit, { id: randomUUID(), project, runId: run.id, type: 'silence', startMs: 1500, endMs: 3000, active: true, reason: '' });
    await em.flush();
    const body = await created(projectId, { name: 'c', export_settings: { captions: { enabled: true, style: 'karaoke', font_size: 60 }, audio_censorship: 'bleep' } });
    const input = renderInputSchema.parse((await jobOf(body.uuid)).input);
    expect(input.settings.captions).to.deep.equal({ style: 'karaoke', fontSize: 60 });
    expect(input.captions).to.deep.equal([
      { outStartMs: 500, outEndMs: 1400, text: 'Hello damn', words: [{ outStartMs: 500, outEndMs: 900, text: 'Hello' }, { outStartMs: 1000, outEndMs: 1400, text: 'damn' }] },
      { outStartMs: 2000, outEndMs: 2500, text: 'world.', words: [{ outStartMs: 2000, outEndMs: 2500, text: 'world.' }] },
    ]);
    expect(input.censored).to.deep.equal([{ outStartMs: 1000, outEndMs: 1400 }]);
  });

  it('deleting the account deletes its export outputs', async () => {
    const owner = await signUpAndLogin(app, { tier: 'Creator' });
    const projectId = await projectWithSources(app, owner, [3000]);
    const body = await created(projectId, { name: 'gone' }, owner);
    const key = await completeExport(body.uuid);
    const response = await owner.client.delete('/api/v1/users/me', { password: owner.password });
    expect(response.status, `${await response.clone().text()} ${JSON.stringify(app.logs.filter((line) => line.level >= 50).slice(-2))}`).to.be.oneOf([200, 204]);
    expect(await app.services.orm.em.fork().count(Export, { id: body.uuid })).to.equal(0);
    expect(await app.services.storage.sizeOf(key)).to.equal(null);
  });

  it('a render finishing after its export is gone leaves no object behind', async () => {
    const projectId = await projectWithSources(app, user, [3000]);
    const body = await created(projectId);
    const job = await jobOf(body.uuid);
    await app.services.orm.em.fork().nativeDelete(Project, { id: projectId });
    const key = `${job.outputPrefix}/export.mp4`;
    await app.services.storage.client.send(new PutObjectCommand({ Bucket: app.services.storage.bucket, Key: key, Body: 'x' }));
    await app.services.completion.complete(job.id, { ok: true, result: { output_key: key, size_bytes: 1, duration_ms: 1, width: 1920, height: 1080, frame_count: 1, path: 'full' } });
    expect(await app.services.storage.sizeOf(key)).to.equal(null);
  });
});
