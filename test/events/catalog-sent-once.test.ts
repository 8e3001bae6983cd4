import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Announcer } from '../../api/src/events/announcer.ts';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { makeVideo } from '../support/media.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { newProject } from '../support/projects.ts';
import { dataOf, isEvent, openSse, type Frame, type SseStream } from '../support/sse-stream.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { fileWhen } from '../support/wait.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const STARTED_TYPES = ['analysis.started', 'analysis.failed', 'export.started', 'export.completed', 'export.failed'];

describe('a started event is sent once: one frame on the project stream and one webhook, whatever retries its publish', function () {
  this.timeout(240_000);
  let app: TestApp;
  let dir: string;
  let receiver: WebhookReceiver;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-sent-once-'));
    receiver = await WebhookReceiver.start();
    // No transcription server answers: an analysis starts, then fails.
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '100', JOB_BACKEND: 'local', WHISPER_BASE_URL: 'http://127.0.0.1:9/v1' });
  });
  after(async () => {
    await app.close();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A user with a webhook endpoint for the start and end events, and a project holding an uploaded clip. */
  async function readyProject(credits?: number): Promise<{ user: SignedIn; endpointId: string; projectId: string }> {
    const user = await signUpAndLogin(app, credits === undefined ? {} : { credits });
    const created = await user.client.post('/api/v1/users/me/webhooks', { url: `http://127.0.0.1:${receiver.port}/hooks/${user.user.id}`, event_types: STARTED_TYPES });
    expect(created.status).to.equal(201);
    const projectId = await newProject(user);
    const clip = await makeVideo(dir, `${user.user.id}.mp4`, { seconds: 2 });
    const uploaded = await uploadMedia(user.client, clip, { contentType: 'video/mp4', scopeProjectId: projectId });
    await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.status === 'UPLOADED', 60_000);
    return { user, endpointId: (await json(created)).id, projectId };
  }

  /** Deliveries recorded for the endpoint, by event type. */
  async function recorded(endpointId: string): Promise<Record<string, number>> {
    const rows = await app.services.orm.em.fork().getConnection().execute<{ event_type: string; n: string }[]>(
      `select event_type, count(*) as n from webhook_deliveries where endpoint_id = ? group by event_type`,
      [endpointId],
    );
    return Object.fromEntries(rows.map((row) => [row.event_type, Number(row.n)]));
  }

  const named = (frames: Frame[], name: string) => frames.filter(isEvent(name));

  /** Runs `act` while the project's stream is open (connected), and closes it after. */
  async function onStream(user: SignedIn, projectId: string, act: (stream: SseStream) => Promise<void>): Promise<void> {
    const stream = await openSse(user.client, `/api/v1/projects/${projectId}/events`);
    try {
      await stream.next((frame) => frame === ': connected');
      await act(stream);
    } finally {
      stream.close();
    }
  }

  it('analyze → analysis_started once on the stream and analysis.started once among the webhooks, then the failure', async () => {
    const { user, endpointId, projectId } = await readyProject(10);
    await onStream(user, projectId, async (stream) => {
      const response = await user.client.post(`/api/v1/projects/${projectId}/analyze`, { pacing_level: 50, false_start_sensitivity: 50, language: 'en' });
      expect(response.status, await response.clone().text()).to.equal(200);
      const { frame: failed, before } = await stream.until(isEvent('analysis_failed'), 120_000);
      const started = named(before, 'analysis_started');
      expect(started, 'analysis_started frames').to.have.length(1);
      expect(dataOf(started[0]!)).to.deep.equal({ project_uuid: projectId, analysis_run_id: dataOf(failed).analysis_run_id });
      expect(await recorded(endpointId)).to.deep.equal({ 'analysis.started': 1, 'analysis.failed': 1 });
    });
  });

  it('export → export_started once on the stream and export.started once among the webhooks, then the completion', async () => {
    const { user, endpointId, projectId } = await readyProject();
    await onStream(user, projectId, async (stream) => {
      const response = await user.client.post(`/api/v1/projects/${projectId}/exports/`, { name: 'Short', export_settings: { resolution: '720p' } });
      expect(response.status, await response.clone().text()).to.equal(202);
      const exportId = (await json(response)).uuid as string;
      const { before } = await stream.until(isEvent('export_complete'), 200_000);
      const started = named(before, 'export_started');
      expect(started, 'export_started frames').to.have.length(1);
      expect(dataOf(started[0]!)).to.deep.equal({ export_uuid: exportId });
      expect(await recorded(endpointId)).to.deep.equal({ 'export.started': 1, 'export.completed': 1 });
    });
  });

  it('an announcement whose publish runs again (an after-commit retry) sends no second frame, and its webhook is recorded once with the transaction', async () => {
    const { user, endpointId, projectId } = await readyProject();
    await onStream(user, projectId, async (stream) => {
      const exportId = randomUUID();
      const announcer = new Announcer(app.services.bus, app.services.webhooks);
      const publish = await app.services.orm.em
        .fork()
        .transactional((em) => announcer.announce(em, exportId, { to: 'project', projectId, event: { type: 'export_started', data: { export_uuid: exportId } } }));
      await publish();
      await publish();
      // Ordering barrier: the channel delivers in publish order.
      await app.services.bus.publishToProject(projectId, { type: 'export_failed', data: { export_uuid: exportId, error: 'barrier' } });
      const { before } = await stream.until(isEvent('export_failed'));
      expect(named(before, 'export_started').map(dataOf)).to.deep.equal([{ export_uuid: exportId }]);
      expect(await recorded(endpointId)).to.deep.equal({ 'export.started': 1 });
    });
  });
});
