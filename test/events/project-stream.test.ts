import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { Client, signUpAndLogin, type SignedIn } from '../support/users.ts';
import { makeVideo } from '../support/media.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { fileWhen } from '../support/wait.ts';
import { storedUpload } from '../support/stored-upload.ts';
import { LocalJobRunner } from '../../api/src/jobs/local-runner.ts';
import type { JobCompletion } from '../../api/src/jobs/completion.ts';
import { jobPrograms } from '../../crds/contract/programs.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { AnalysisRun } from '../../api/src/analysis/entities.ts';
import { analysisProgress } from '../../api/src/analysis/completion.ts';
import { progressSnapshotKey } from '../../api/src/events/bus.ts';
import { ProgressRelay } from '../../api/src/events/progress-relay.ts';
import { dataOf, expectKeepalives, isAnyEvent, isEvent, openSse } from '../support/sse-stream.ts';

const eventsOf = (projectId: string) => `/api/v1/projects/${projectId}/events`;
const connected = (frame: string) => frame === ': connected';

describe('project stream: GET /api/v1/projects/{project_uuid}/events', function () {
  this.timeout(60_000);
  let app: TestApp;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-project-stream-'));
    // No transcription server answers here: a real analysis fails, which is what the end-to-end test follows.
    app = await startTestApp({ SSE_KEEPALIVE_SECONDS: '1', SSE_MAX_CONNECTIONS_PER_USER: '3', JOB_BACKEND: 'local', WHISPER_BASE_URL: 'http://127.0.0.1:9/v1' });
  });
  after(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function projectOf(user: SignedIn): Promise<string> {
    const response = await user.client.post('/api/v1/projects/', { name: 'Talk' });
    expect(response.status).to.equal(201);
    return (await json(response)).uuid;
  }

  /** A running job of the project that no backend runs: the test reports its progress itself. */
  async function jobOf(user: SignedIn, projectId: string, program: 'analyze' | 'render' | 'artifact', fields: { input?: Record<string, unknown>; mediaFileId?: string; subjectId?: string } = {}): Promise<string> {
    const { input = {}, mediaFileId, subjectId } = fields;
    const em = app.services.orm.em.fork();
    const id = randomUUID();
    em.create(Job, {
      id,
      kind: jobPrograms[program].kind,
      program,
      userId: user.user.id,
      projectId,
      mediaFileId: mediaFileId ?? null,
      subjectId: subjectId ?? null,
      input,
      outputPrefix: `jobs/${program}/${id}`,
      backend: 'local',
      status: 'running',
      dispatchedAt: new Date(),
    });
    await em.flush();
    return id;
  }

  const progress = (jobId: string, value: number, step: string) => app.services.completion.markProgress(jobId, { progress: value, step });

  describe('authentication (spec, Authentication rule 8)', () => {
    it('without an active session → 401', async () => {
      const response = await app.fetch(eventsOf(randomUUID()));
      expect(response.status).to.equal(401);
      expect(await json(response)).to.have.property('detail');
    });

    it("a deleted user's session → 401, even for the project that was theirs", async () => {
      const user = await signUpAndLogin(app);
      const projectId = await projectOf(user);
      await app.services.orm.em.fork().getConnection().execute('delete from users where id = ?', [user.user.id]);
      const response = await user.client.get(eventsOf(projectId));
      expect(response.status).to.equal(401);
    });

    it("another user's project → 403 (not 404)", async () => {
      const owner = await signUpAndLogin(app);
      const other = await signUpAndLogin(app);
      const response = await other.client.get(eventsOf(await projectOf(owner)));
      expect(response.status).to.equal(403);
      expect(await json(response)).to.have.property('detail');
    });

    it('a missing project → 404', async () => {
      const user = await signUpAndLogin(app);
      const response = await user.client.get(eventsOf(randomUUID()));
      expect(response.status).to.equal(404);
    });

    it('the stream ends with its session: after logout it is closed at the next keepalive', async () => {
      const user = await signUpAndLogin(app);
      const stream = await openSse(user.client, eventsOf(await projectOf(user)));
      try {
        await stream.next(connected);
        expect((await user.client.post('/api/v1/auth/logout')).status).to.be.oneOf([200, 204]);
        await stream.ended(2500);
      } finally {
        stream.close();
      }
    });
  });

  it('SSE headers: text/event-stream, Cache-Control no-cache, Connection keep-alive, X-Accel-Buffering no; the route is in the OpenAPI document', async () => {
    const user = await signUpAndLogin(app);
    const stream = await openSse(user.client, eventsOf(await projectOf(user)));
    try {
      expect(stream.response.status).to.equal(200);
      expect(stream.response.headers.get('content-type')).to.match(/^text\/event-stream/);
      expect(stream.response.headers.get('cache-control')).to.equal('no-cache');
      expect(stream.response.headers.get('connection')).to.equal('keep-alive');
      expect(stream.response.headers.get('x-accel-buffering')).to.equal('no');
      await stream.next(connected);
    } finally {
      stream.close();
    }
    const document = await json(await app.fetch('/api/v1/openapi.json'));
    const route = document.paths['/api/v1/projects/{project_uuid}/events'].get;
    expect(Object.keys(route.responses)).to.include.members(['200', '401', '403', '404', '429']);
  });

  it('keepalive: a comment every SSE_KEEPALIVE_SECONDS', async () => {
    const user = await signUpAndLogin(app);
    const stream = await openSse(user.client, eventsOf(await projectOf(user)));
    try {
      await expectKeepalives(stream, 1);
    } finally {
      stream.close();
    }
  });

  it('two tabs are not a crowd: three tabs with a user stream and a project stream each all open (SSE_MAX_CONNECTIONS_PER_USER per kind); the next of either kind → 429', async () => {
    const user = await signUpAndLogin(app);
    const projectId = await projectOf(user);
    const open = [];
    for (let tab = 0; tab < 3; tab++) open.push(await openSse(user.client, '/api/v1/user-stream'), await openSse(user.client, eventsOf(projectId)));
    try {
      expect(open.map((stream) => stream.response.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
      for (const path of [eventsOf(projectId), '/api/v1/user-stream']) {
        const refused = await user.client.get(path);
        expect(refused.status, path).to.equal(429);
        expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
      }
    } finally {
      for (const stream of open) stream.close();
    }
  });

  describe('progress snapshot for late subscribers', () => {
    it('a late subscriber gets the latest analysis_progress as its first frame; it is kept 1 hour', async () => {
      const user = await signUpAndLogin(app);
      const projectId = await projectOf(user);
      const jobId = await jobOf(user, projectId, 'analyze');
      await progress(jobId, 10, 'transcribe');
      await progress(jobId, 40, 'detect_silences');
      const stream = await openSse(user.client, eventsOf(projectId));
      try {
        const first = await stream.first();
        expect(isEvent('analysis_progress')(first), first).to.equal(true);
        expect(dataOf(first)).to.deep.equal({ project_uuid: projectId, analysis_run_id: null, step: 'detect_silences', progress: 40 });
        await stream.next(connected);
        expect(await app.services.redis.ttl(progressSnapshotKey(projectId))).to.be.within(3590, 3600);
      } finally {
        stream.close();
      }
    });

    it('analysis_complete clears the snapshot: a subscriber after it gets no progress frame', async () => {
      const user = await signUpAndLogin(app);
      const projectId = await projectOf(user);
      await progress(await jobOf(user, projectId, 'analyze'), 55, 'detect_false_starts');
      const early = await openSse(user.client, eventsOf(projectId));
      try {
        expect(dataOf(await early.first())).to.include({ progress: 55 });
        await app.services.bus.publishToProject(projectId, { type: 'analysis_complete', data: { project_uuid: projectId, analysis_run_id: projectId, edit_count: 3 } });
        expect(dataOf(await early.next(isEvent('analysis_complete')))).to.deep.equal({ project_uuid: projectId, analysis_run_id: projectId, edit_count: 3 });
        const late = await openSse(user.client, eventsOf(projectId));
        try {
          expect(await late.first()).to.equal(': connected');
        } finally {
          late.close();
        }
      } finally {
        early.close();
      }
    });

    it("analysis_failed, published by the job's completion, clears the snapshot", async () => {
      const user = await signUpAndLogin(app);
      const projectId = await projectOf(user);
      const em = app.services.orm.em.fork();
      const run = em.create(AnalysisRun, {
        id: randomUUID(),
        project: projectId,
        userId: user.user.id,
        status: 'running',
        pacingLevel: 50,
        falseStartSensitivity: 50,
        language: 'en',
        analysisMode: 'ai_edit',
        creditsReserved: 0,
      });
      await em.flush();
      const jobId = await jobOf(user, projectId, 'analyze', { subjectId: run.id });
      await progress(jobId, 30, 'transcribe');
      const early = await openSse(user.client, eventsOf(projectId));
      try {
        expect(dataOf(await early.first())).to.include({ progress: 30 });
        expect(await app.services.completion.complete(jobId, { ok: false, error: 'The transcription server did not answer.' })).to.equal(true);
        expect(dataOf(await early.next(isEvent('analysis_failed')))).to.deep.equal({ project_uuid: projectId, analysis_run_id: run.id, error: 'The transcription server did not answer.' });
        const late = await openSse(user.client, eventsOf(projectId));
        try {
          expect(await late.first()).to.equal(': connected');
        } finally {
          late.close();
        }
        expect(await app.services.redis.exists(progressSnapshotKey(projectId))).to.equal(0);
      } finally {
        early.close();
      }
    });
  });

  describe('job progress relay (one path for both backends: JobCompletion.markProgress)', () => {
    it("an analyze job's reported progress (the local runner's stdout line, the operator's CR status) reaches the stream as analysis_progress {analysis_run_id, step, progress}: the run's id makes it attributable", async () => {
      const user = await signUpAndLogin(app);
      const projectId = await projectOf(user);
      const runId = randomUUID();
      const jobId = await jobOf(user, projectId, 'analyze', { subjectId: runId });
      const stream = await openSse(user.client, eventsOf(projectId));
      try {
        await stream.next(connected);
        await progress(jobId, 12, 'transcribe');
        expect(dataOf(await stream.next(isEvent('analysis_progress')))).to.deep.equal({ project_uuid: projectId, analysis_run_id: runId, step: 'transcribe', progress: 12 });
        const row = await app.services.orm.em.fork().findOneOrFail(Job, jobId);
        expect([row.progress, row.step]).to.deep.equal([12, 'transcribe']);
      } finally {
        stream.close();
      }
    });

    it('a real local run: the progress lines a job program writes on stdout reach the stream in their order, each step at least once', async function () {
      this.timeout(60_000);
      const user = await signUpAndLogin(app);
      const projectId = await projectOf(user);
      // No analysis program exists on these machines: the artifact program's real reports stand in for one,
      // relayed as those of an analyze job of the project.
      const analyzeJob = await jobOf(user, projectId, 'analyze');
      const upload = await storedUpload(app.services, await makeVideo(dir, `real-${randomUUID()}.mp4`, { seconds: 2 }), 'video/mp4', user.user.id);
      const input = { sourceKey: upload.key, contentType: 'video/mp4' };
      const artifactJob = await jobOf(user, projectId, 'artifact', { input, mediaFileId: upload.file.id });
      const { completion, storage, logger, jobMetrics } = app.services;
      const runner = new LocalJobRunner({
        concurrency: 1,
        s3: storage.settings,
        storage,
        logger,
        metrics: jobMetrics,
        completion: {
          markProgress: (_jobId, update) => completion.markProgress(analyzeJob, update),
          complete: (jobId, outcome) => completion.complete(jobId, outcome),
        } as Pick<JobCompletion, 'markProgress' | 'complete'> as JobCompletion,
      });
      const stream = await openSse(user.client, eventsOf(projectId));
      try {
        await stream.next(connected);
        await runner.dispatch({
          kind: 'ArtifactJob',
          spec: { jobId: artifactJob, program: 'artifact', userId: user.user.id, projectId, mediaFileId: upload.file.id, input, outputPrefix: `jobs/artifact/${artifactJob}`, timeoutSeconds: 60 },
        });
        await runner.idle();
        const row = await app.services.orm.em.fork().findOneOrFail(Job, analyzeJob);
        await app.services.bus.publishToProject(projectId, { type: 'analysis_complete', data: { project_uuid: projectId, analysis_run_id: projectId, edit_count: 0 } });
        const { before } = await stream.until(isEvent('analysis_complete'));
        const sent = before.filter(isEvent('analysis_progress')).map(dataOf) as { step: string; progress: number }[];
        expect([...new Set(sent.map(({ step }) => step))]).to.deep.equal(['download', 'probe', 'process', 'upload']);
        const values = sent.map(({ progress: value }) => value);
        expect(values).to.deep.equal([...values].sort((a, b) => a - b));
        // The row holds the last report; the stream's last event is of its step (a report within 250 ms of the previous event is held back).
        expect(sent.at(-1)!.step).to.equal(row.step);
        expect(sent.at(-1)!.progress).to.be.at.most(row.progress);
      } finally {
        stream.close();
        await runner.close();
      }
    });

    it('analysis progress is throttled: every step change goes out, within a step only a changed percentage at least 250 ms after the last event', async () => {
      const user = await signUpAndLogin(app);
      const projectId = await projectOf(user);
      let now = 0;
      const relay = new ProgressRelay({ redis: app.services.redis, bus: app.services.bus, policies: { analyze: analysisProgress }, now: () => now });
      const job = { id: randomUUID(), program: 'analyze', projectId, input: {} };
      const stream = await openSse(user.client, eventsOf(projectId));
      try {
        await stream.next(connected);
        const reports: [number, string, number][] = [
          [0, 'transcribe', 1], // first report: out
          [100, 'transcribe', 5], // 100 ms later: held back
          [249, 'transcribe', 6], // 249 ms: held back
          [250, 'transcribe', 6], // 250 ms and moved: out
          [900, 'transcribe', 6], // same percentage: held back
          [901, 'detect_silences', 6], // step change: out at once
          [902, 'detect_silences', 7], // 1 ms later: held back
        ];
        for (const [at, step, value] of reports) {
          now = at;
          await relay.relay(job, { step, progress: value, etaSeconds: null });
        }
        // Ordering barrier: the channel delivers in publish order.
        await app.services.bus.publishToProject(projectId, { type: 'analysis_complete', data: { project_uuid: projectId, analysis_run_id: projectId, edit_count: 0 } });
        const { before } = await stream.until(isEvent('analysis_complete'));
        const sent = before.filter(isEvent('analysis_progress')).map(dataOf);
        expect(sent.map(({ step, progress: value }) => [step, value])).to.deep.equal([
          ['transcribe', 1],
          ['transcribe', 6],
          ['detect_silences', 6],
        ]);
      } finally {
        stream.close();
      }
    });

    it("a render job → export_progress at exactly 5, 30 and 85 %, each once and in order, whatever progress values arrive, each naming its export (export_uuid): two exports of one project are told apart", async () => {
      const user = await signUpAndLogin(app);
      const projectId = await projectOf(user);
      // the render program's own steps: the sources until 7 %, the encode until 87 %, then the finish
      const stepAt = (value: number) => (value < 7 ? 'probe' : value < 87 ? 'encode' : 'upload');
      const stream = await openSse(user.client, eventsOf(projectId));
      try {
        await stream.next(connected);
        // The export feature words each mark; the relay only decides which marks go out.
        const wanderingExport = randomUUID();
        const wandering = await jobOf(user, projectId, 'render', { subjectId: wanderingExport });
        for (const value of [0, 3, 5, 5, 12, 4, 29, 31, 30, 60, 86, 20, 90, 100, 100]) await progress(wandering, value, stepAt(value));
        // A job whose first report is past every mark still gets each, in order.
        const leapingExport = randomUUID();
        const leaping = await jobOf(user, projectId, 'render', { subjectId: leapingExport });
        for (const value of [90, 95, 100]) await progress(leaping, value, 'upload');
        await app.services.bus.publishToProject(projectId, { type: 'export_complete', data: { export_uuid: 'barrier', storage_key: 'x' } });
        const { before } = await stream.until(isEvent('export_complete'));
        expect(before.filter(isAnyEvent).every(isEvent('export_progress'))).to.equal(true);
        const marks = before.filter(isEvent('export_progress')).map(dataOf);
        expect(marks.map(({ progress: value }) => value)).to.deep.equal([5, 30, 85, 5, 30, 85]);
        expect(marks.map(({ export_uuid }) => export_uuid)).to.deep.equal([...Array(3).fill(wanderingExport), ...Array(3).fill(leapingExport)]);
        for (const { message } of marks) expect(message).to.be.a('string').that.is.not.empty;
      } finally {
        stream.close();
      }
    });
  });

  it('two api instances on one Redis: progress relayed by one reaches a subscriber of the other, and its snapshot greets a late subscriber there', async () => {
    const other = await startTestApp({ SSE_KEEPALIVE_SECONDS: '1' });
    try {
      const user = await signUpAndLogin(app);
      const projectId = await projectOf(user);
      // The same session cookie, presented to the other instance.
      const onOther = new Client(other);
      for (const [name, value] of user.client.cookies) onOther.cookies.set(name, value);
      const stream = await openSse(onOther, eventsOf(projectId));
      try {
        await stream.next(connected);
        const jobId = await jobOf(user, projectId, 'analyze');
        await progress(jobId, 20, 'transcribe');
        expect(dataOf(await stream.next(isEvent('analysis_progress')))).to.deep.equal({ project_uuid: projectId, analysis_run_id: null, step: 'transcribe', progress: 20 });
        const late = await openSse(onOther, eventsOf(projectId));
        try {
          expect(dataOf(await late.first())).to.deep.equal({ project_uuid: projectId, analysis_run_id: null, step: 'transcribe', progress: 20 });
        } finally {
          late.close();
        }
      } finally {
        stream.close();
      }
    } finally {
      await other.close();
    }
  });

  it("POST analyze → analysis_started {project_uuid, analysis_run_id} on the stream, then (no transcription server here) analysis_failed with the error and the same run's id (end to end)", async function () {
    this.timeout(120_000);
    const user = await signUpAndLogin(app, { credits: 5 });
    const projectId = await projectOf(user);
    const clip = await makeVideo(dir, `clip-${randomUUID()}.mp4`, { seconds: 2 });
    const uploaded = await uploadMedia(user.client, clip, { contentType: 'video/mp4', scopeProjectId: projectId });
    await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.status === 'UPLOADED');
    const stream = await openSse(user.client, eventsOf(projectId));
    try {
      await stream.next(connected);
      const analyze = await user.client.post(`/api/v1/projects/${projectId}/analyze`, { pacing_level: 50, false_start_sensitivity: 50, language: 'en' });
      expect(analyze.status).to.equal(200);
      const started = dataOf(await stream.next(isEvent('analysis_started')));
      const runs = (await json(await user.client.get(`/api/v1/projects/${projectId}/analysis-runs`))) as { data: { uuid: string }[] };
      const runIds = runs.data.map((run) => run.uuid);
      expect(started).to.deep.equal({ project_uuid: projectId, analysis_run_id: runIds[0] });
      const failed = dataOf(await stream.next(isEvent('analysis_failed'), 60_000));
      expect(failed.project_uuid).to.equal(projectId);
      expect(failed.analysis_run_id).to.equal(started.analysis_run_id);
      expect(failed.error).to.be.a('string').that.is.not.empty;
    } finally {
      stream.close();
    }
  });
});
