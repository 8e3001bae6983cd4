import { createServer, type Server, type Socket } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { eventually, fileWhen } from '../support/wait.ts';
import { dataOf, isEvent, openSse } from '../support/sse-stream.ts';
import { makeVideo } from '../support/media.ts';
import { AnalysisRun } from '../../api/src/analysis/entities.ts';
import { Export } from '../../api/src/exports/entities.ts';
import { Job, type JobRow } from '../../api/src/jobs/entities.ts';

/**
 * Issue 25 item 3: renders nobody could stop. On the local backend with the real render
 * program (ffmpeg) and two render slots: one user's second render waits while another
 * user's runs, a render is stopped by deleting its export, an analysis by its cancel, and
 * a deleted account's renders stop. The sources are long and tiny, so a render runs for
 * minutes unless stopped (every test stops what it started).
 */
describe('attack: renders that hold every slot and cannot be stopped (local backend, real ffmpeg)', function () {
  this.timeout(240_000);
  let app: TestApp;
  let dir: string;
  /** A transcription server that accepts and never answers: an analysis stays running until stopped. */
  let silentWhisper: Server;
  const sockets = new Set<Socket>();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-render-slots-'));
    silentWhisper = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silentWhisper.listen(0, '127.0.0.1', resolve));
    const port = (silentWhisper.address() as { port: number }).port;
    app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '2', WHISPER_BASE_URL: `http://127.0.0.1:${port}/v1` });
  });
  after(async () => {
    await app?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silentWhisper?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  let serial = 0;
  /** A project playing a 5-minute 160×90 clip: rendered at 720p it keeps ffmpeg busy for minutes. */
  async function longProject(owner: SignedIn): Promise<string> {
    const projectId = (await json(await owner.client.post('/api/v1/projects/', { name: 'Long' }))).uuid as string;
    const video = await makeVideo(dir, `long-${process.pid}-${++serial}.mp4`, { width: 160, height: 90, seconds: 300, fps: 25 });
    const uploaded = await uploadMedia(owner.client, video, { contentType: 'video/mp4', scopeProjectId: projectId });
    await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.status === 'UPLOADED', 120_000);
    return projectId;
  }

  async function exportOf(owner: SignedIn, projectId: string, name: string): Promise<string> {
    const response = await owner.client.post(`/api/v1/projects/${projectId}/exports/`, { name, export_settings: { resolution: '720p', audio: { normalize: true, noise_reduction: true } } });
    expect(response.status, await response.clone().text()).to.equal(202);
    return (await json(response)).uuid as string;
  }

  const jobOfExport = async (exportId: string): Promise<JobRow> => {
    const row = await app.services.orm.em.fork().findOneOrFail(Export, exportId);
    return app.services.orm.em.fork().findOneOrFail(Job, row.jobId!);
  };
  const jobRow = (id: string) => app.services.orm.em.fork().findOneOrFail(Job, id);
  const dispatched = (exportId: string) => eventually(async () => ((await jobOfExport(exportId)).dispatchedAt ? true : undefined), `export ${exportId} handed to the runner`, 60_000);
  const settled = (jobId: string) => eventually(async () => ((await jobRow(jobId)).completedAt ? jobRow(jobId) : undefined), `job ${jobId} settled`, 60_000);
  async function remove(owner: SignedIn, exportId: string): Promise<void> {
    const response = await owner.client.delete(`/api/v1/exports/${exportId}`);
    expect(response.status, await response.clone().text()).to.equal(204);
  }

  it("two exports of one user do not hold both render slots while another user's export waits", async () => {
    const alice = await signUpAndLogin(app, { tier: 'Creator' });
    const bob = await signUpAndLogin(app, { tier: 'Creator' });
    const [aliceProject, bobProject] = await Promise.all([longProject(alice), longProject(bob)]);
    const first = await exportOf(alice, aliceProject, 'first');
    const second = await exportOf(alice, aliceProject, 'second');
    await dispatched(first);
    const bobs = await exportOf(bob, bobProject, 'bob');
    // Bob's render gets the free slot although Alice's second was queued before it
    await dispatched(bobs);
    const [firstJob, secondJob, bobJob] = await Promise.all([jobOfExport(first), jobOfExport(second), jobOfExport(bobs)]);
    expect(firstJob.completedAt, 'still rendering').to.equal(null);
    expect(bobJob.completedAt, 'still rendering').to.equal(null);
    expect(secondJob.dispatchedAt, "Alice's second render waits for her first").to.equal(null);
    // Alice's second starts once her first is gone
    await remove(alice, first);
    await dispatched(second);
    await Promise.all([remove(alice, second), remove(bob, bobs)]);
    for (const job of [firstJob, secondJob, bobJob]) expect((await settled(job.id)).errorCode).to.equal('job.cancelled');
  });

  it('DELETE /api/v1/exports/{uuid} stops a rendering export: the process ends, the job settles once as cancelled, the export and its slot are gone', async () => {
    const owner = await signUpAndLogin(app, { tier: 'Creator' });
    const projectId = await longProject(owner);
    const exportId = await exportOf(owner, projectId, 'stopped');
    await eventually(async () => ((await app.services.orm.em.fork().findOneOrFail(Export, exportId)).status === 'rendering' ? true : undefined), 'export rendering', 60_000);
    const job = await jobOfExport(exportId);
    await remove(owner, exportId);
    expect((await owner.client.get(`/api/v1/exports/${exportId}`)).status).to.equal(404);
    const ended = await settled(job.id);
    expect(ended).to.deep.include({ status: 'failed', errorCode: 'job.cancelled' });
    const settledAt = ended.completedAt!.getTime();
    // a second delete is 404; a second settlement finds nothing to do
    expect((await owner.client.delete(`/api/v1/exports/${exportId}`)).status).to.equal(404);
    expect(await app.services.completion.complete(job.id, { ok: false, error: 'late report' })).to.equal(false);
    expect((await jobRow(job.id)).completedAt!.getTime()).to.equal(settledAt);
    // the slot is free: the same user's next render is handed over at once
    const next = await exportOf(owner, projectId, 'next');
    await dispatched(next);
    await remove(owner, next);
    expect((await settled((await app.services.orm.em.fork().findOneOrFail(Job, { subjectId: next })).id)).errorCode).to.equal('job.cancelled');
    expect((await owner.client.delete(`/api/v1/exports/00000000-0000-4000-8000-000000000000`)).status).to.equal(404);
  });

  it('a running analysis is cancelled: the run fails (job.cancelled), analysis_failed goes out, its minutes are released once and nothing is charged', async () => {
    const owner = await signUpAndLogin(app, { tier: 'Creator', credits: 20 });
    const projectId = await longProject(owner);
    const before = (await json(await owner.client.get('/api/v1/users/me/billing'))).credits.ai_minutes;
    const stream = await openSse(owner.client, `/api/v1/projects/${projectId}/events`);
    try {
      await stream.next((frame) => frame === ': connected');
      const analyzed = await owner.client.post(`/api/v1/projects/${projectId}/analyze`, { pacing_level: 50, false_start_sensitivity: 50, language: 'en' });
      expect(analyzed.status, await analyzed.clone().text()).to.equal(200);
      const runId = dataOf(await stream.next(isEvent('analysis_started'))).analysis_run_id as string;
      // the program waits on the transcription server, which never answers
      await stream.next((frame) => isEvent('analysis_progress')(frame) && dataOf(frame).step === 'transcribing', 60_000);
      const held = (await json(await owner.client.get('/api/v1/users/me/billing'))).credits.ai_minutes;
      expect(held.reserved).to.be.above(0);

      const cancel = await owner.client.post(`/api/v1/projects/${projectId}/analysis-runs/${runId}/cancel`);
      expect(cancel.status, await cancel.clone().text()).to.equal(202);
      expect((await json(cancel)).uuid).to.equal(runId);
      const failed = dataOf(await stream.next(isEvent('analysis_failed'), 30_000));
      expect(failed.analysis_run_id).to.equal(runId);
      const run = await app.services.orm.em.fork().findOneOrFail(AnalysisRun, runId);
      expect(run).to.deep.include({ status: 'failed', errorCode: 'job.cancelled' });
      const after = (await json(await owner.client.get('/api/v1/users/me/billing'))).credits.ai_minutes;
      expect(after, 'released, not charged').to.deep.equal({ balance: before.balance, reserved: 0 });
      const releases = await app.services.orm.em.fork().execute(`select kind from credit_entries where user_id = ? and reference = ?`, [owner.user.id, `job:${run.jobId}`]);
      expect(releases.map((row) => (row as { kind: string }).kind).sort()).to.deep.equal(['release', 'reserve']);
      // a run that has ended cannot be cancelled again; another project's run is not found
      expect((await owner.client.post(`/api/v1/projects/${projectId}/analysis-runs/${runId}/cancel`)).status).to.equal(409);
      const elsewhere = (await json(await owner.client.post('/api/v1/projects/', { name: 'Other' }))).uuid as string;
      expect((await owner.client.post(`/api/v1/projects/${elsewhere}/analysis-runs/${runId}/cancel`)).status).to.equal(404);
    } finally {
      stream.close();
    }
  });

  it("deleting the account stops its render: its ffmpeg process ends and its slot goes to the users waiting", async () => {
    const owner = await signUpAndLogin(app, { tier: 'Creator' });
    const [carol, dave] = await Promise.all([signUpAndLogin(app, { tier: 'Creator' }), signUpAndLogin(app, { tier: 'Creator' })]);
    const [projectId, carolProject, daveProject] = await Promise.all([longProject(owner), longProject(carol), longProject(dave)]);
    const doomed = await exportOf(owner, projectId, 'doomed');
    await dispatched(doomed);
    const doomedJob = await jobOfExport(doomed);
    const carols = await exportOf(carol, carolProject, 'carol');
    await dispatched(carols);
    const daves = await exportOf(dave, daveProject, 'dave');
    expect(await processesOfJob(doomedJob.id), 'the render runs').to.not.be.empty;
    const response = await owner.client.delete('/api/v1/users/me', { password: owner.password });
    expect(response.status, await response.clone().text()).to.equal(204);
    await eventually(async () => ((await processesOfJob(doomedJob.id)).length === 0 ? true : undefined), 'the deleted account\'s render process ended', 30_000);
    // the slot it held goes to Dave, who was waiting
    await dispatched(daves);
    await Promise.all([remove(carol, carols), remove(dave, daves)]);
  });
});

/** Processes of this machine running the job (its spec is in their environment). */
async function processesOfJob(jobId: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
    if (environ.includes(`"jobId":"${jobId}"`)) found.push(Number(entry));
  }
  return found;
}
