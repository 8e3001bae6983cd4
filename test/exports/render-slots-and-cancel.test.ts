import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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
import { LOCAL_JOB_WORK_ROOT } from '../../api/src/jobs/local-runner.ts';

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
    // every render here counts as short (JOB_LOCAL_SHORT_RENDER_SECONDS): these tests pin one render per user, not the slot kept for short renders
    app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '2', JOB_LOCAL_SHORT_RENDER_SECONDS: '3600', WHISPER_BASE_URL: `http://127.0.0.1:${port}/v1` });
  });
  after(async () => {
    await app?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silentWhisper?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const { longProject, exportOf, jobOfExport, jobRow, dispatched, settled, remove } = rendering(() => app, () => dir);

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

  it("attack: a cancelled export leaves its job's outcome file in the store — after DELETE of a rendering (or rendered) export nothing under the job's prefix stays", async () => {
    const owner = await signUpAndLogin(app, { tier: 'Creator' });
    const projectId = await longProject(owner);
    const exportId = await exportOf(owner, projectId, 'cancelled');
    await dispatched(exportId);
    const job = await jobOfExport(exportId);
    // the program reports its progress: it runs its own code, which answers the stop by writing error.json
    await eventually(async () => ((await jobRow(job.id)).step !== null ? true : undefined), 'the render reports progress', 60_000);
    await remove(owner, exportId);
    expect((await settled(job.id)).errorCode).to.equal('job.cancelled');
    // what the program wrote is written before it exits, and it has exited when the job settles
    const left = async () => {
      const keys: string[] = [];
      for await (const { key } of app.services.storage.listObjects(`${job.outputPrefix}/`)) keys.push(key);
      return keys;
    };
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await left()).to.deep.equal([]);

    // a rendered export deleted: its output and its result.json go with it
    const short = await exportOf(owner, await longProject(owner, 2), 'rendered');
    await eventually(async () => ((await app.services.orm.em.fork().findOneOrFail(Export, short)).status === 'completed' ? true : undefined), 'export rendered', 60_000);
    const rendered = await jobOfExport(short);
    await remove(owner, short);
    const keys: string[] = [];
    for await (const { key } of app.services.storage.listObjects(`${rendered.outputPrefix}/`)) keys.push(key);
    expect(keys).to.deep.equal([]);
  });

  it('attack: a job program killed before its own cleanup, or orphaned by a crashed api, leaves no work directory in the temp folder', async () => {
    // what a crashed api leaves: the work of its job programs, under a process id that no longer runs
    const gone = spawn(process.execPath, ['-e', '']);
    await once(gone, 'exit');
    const crashed = join(LOCAL_JOB_WORK_ROOT, `${gone.pid}-${randomUUID()}`);
    await mkdir(join(crashed, 'cutroom-render-abc'), { recursive: true });
    await writeFile(join(crashed, 'cutroom-render-abc', 'part.ts'), Buffer.alloc(2 * 1024 * 1024));
    const live = join(LOCAL_JOB_WORK_ROOT, `${process.pid}-${randomUUID()}`);
    await mkdir(live, { recursive: true });
    const restarted = await startTestApp({ JOB_BACKEND: 'local' });
    try {
      await eventually(async () => ((await exists(crashed)) ? undefined : true), 'the crashed api\'s work directory removed at the next start', 10_000);
      expect(await exists(live), 'a running api\'s directory is kept').to.equal(true);
    } finally {
      await restarted.close();
      await rm(live, { recursive: true, force: true });
    }

    // a render program killed outright (SIGKILL: its own cleanup never runs)
    const owner = await signUpAndLogin(app, { tier: 'Creator' });
    const projectId = await longProject(owner);
    const exportId = await exportOf(owner, projectId, 'killed');
    await eventually(async () => ((await app.services.orm.em.fork().findOneOrFail(Export, exportId)).status === 'rendering' ? true : undefined), 'export rendering', 60_000);
    const job = await jobOfExport(exportId);
    const workDir = join(LOCAL_JOB_WORK_ROOT, `${process.pid}-${job.id}`);
    await eventually(async () => ((await readdir(workDir).catch(() => [])).length > 0 ? true : undefined), 'the program works in its own directory', 30_000);
    for (const pid of await processesOfJob(job.id)) process.kill(pid, 'SIGKILL');
    expect((await settled(job.id)).status).to.equal('failed');
    await eventually(async () => ((await exists(workDir)) ? undefined : true), 'the killed program\'s work directory removed', 10_000);
    await remove(owner, exportId);
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

describe('attack: two accounts\' hour-long exports hold both local render slots (issue 41 L4; local backend, real ffmpeg)', function () {
  this.timeout(240_000);
  let app: TestApp;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-render-kept-slot-'));
    // two render slots; a render whose timeout passes 600 s (an output over 160 s) is long
    app = await startTestApp({ JOB_BACKEND: 'local', JOB_LOCAL_CONCURRENCY: '2', JOB_LOCAL_SHORT_RENDER_SECONDS: '600' });
  });
  after(async () => {
    await app?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const { longProject, exportOf, jobOfExport, dispatched, remove } = rendering(() => app, () => dir);

  it("a third user's 3-second export is handed over at once while two other accounts' long exports wait and render: long renders hold all slots but one", async () => {
    const [alice, bob, carol] = await Promise.all([signUpAndLogin(app, { tier: 'Creator' }), signUpAndLogin(app, { tier: 'Creator' }), signUpAndLogin(app, { tier: 'Creator' })]);
    const [aliceProject, bobProject, carolProject] = await Promise.all([longProject(alice), longProject(bob), longProject(carol, 3)]);
    const alices = await exportOf(alice, aliceProject, 'long');
    await dispatched(alices);
    const bobs = await exportOf(bob, bobProject, 'long too');
    const carols = await exportOf(carol, carolProject, 'three seconds');
    // before: Bob's long render took the second slot and Carol's waited for the whole of one of them
    await dispatched(carols, 20_000);
    expect((await jobOfExport(bobs)).dispatchedAt, "Bob's long render waits for the long slot").to.equal(null);
    expect((await jobOfExport(alices)).completedAt, 'Alice\'s still renders').to.equal(null);
    // the long slot frees: Bob's goes
    await remove(alice, alices);
    await dispatched(bobs);
    await Promise.all([remove(bob, bobs), remove(carol, carols)]);
  });
});

let serial = 0;

/** What the tests of renders do with an app: projects long or short, exports, their jobs, waits. */
function rendering(appOf: () => TestApp, dirOf: () => string) {
  /** A project playing a `seconds`-long 160×90 clip (5 minutes by default: rendered at 720p it keeps ffmpeg busy for minutes). */
  async function longProject(owner: SignedIn, seconds = 300): Promise<string> {
    const app = appOf();
    const projectId = (await json(await owner.client.post('/api/v1/projects/', { name: 'Long' }))).uuid as string;
    const video = await makeVideo(dirOf(), `long-${process.pid}-${++serial}.mp4`, { width: 160, height: 90, seconds, fps: 25 });
    const uploaded = await uploadMedia(owner.client, video, { contentType: 'video/mp4', scopeProjectId: projectId });
    await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.status === 'UPLOADED', 120_000);
    return projectId;
  }

  async function exportOf(owner: SignedIn, projectId: string, name: string): Promise<string> {
    const response = await owner.client.post(`/api/v1/projects/${projectId}/exports/`, { name, export_settings: { resolution: '720p', audio: { normalize: true, noise_reduction: true } } });
    expect(response.status, await response.clone().text()).to.equal(202);
    return (await json(response)).uuid as string;
  }

  const em = () => appOf().services.orm.em.fork();
  const jobOfExport = async (exportId: string): Promise<JobRow> => em().findOneOrFail(Job, (await em().findOneOrFail(Export, exportId)).jobId!);
  const jobRow = (id: string) => em().findOneOrFail(Job, id);
  const dispatched = (exportId: string, timeoutMs = 60_000) => eventually(async () => ((await jobOfExport(exportId)).dispatchedAt ? true : undefined), `export ${exportId} handed to the runner`, timeoutMs);
  const settled = (jobId: string) => eventually(async () => ((await jobRow(jobId)).completedAt ? jobRow(jobId) : undefined), `job ${jobId} settled`, 60_000);
  async function remove(owner: SignedIn, exportId: string): Promise<void> {
    const response = await owner.client.delete(`/api/v1/exports/${exportId}`);
    expect(response.status, await response.clone().text()).to.equal(204);
  }
  return { longProject, exportOf, jobOfExport, jobRow, dispatched, settled, remove };
}

const exists = (path: string) => access(path).then(() => true, () => false);

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
