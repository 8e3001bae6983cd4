import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { makeVideo } from '../support/media.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { newProject } from '../support/projects.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { eventually, fileWhen } from '../support/wait.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const WEBHOOKS = '/api/v1/users/me/webhooks';

interface Verified {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

describe('webhooks of product events: what Cutroom emits on its streams and billing changes arrive signed, with the ids a client needs', function () {
  this.timeout(120_000);
  let app: TestApp;
  let dir: string;
  let receiver: WebhookReceiver;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-webhook-events-'));
    receiver = await WebhookReceiver.start();
    // No transcription server answers: an analysis starts, then fails, which is two events.
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_POLL_MS: '100', JOB_BACKEND: 'local', WHISPER_BASE_URL: 'http://127.0.0.1:9/v1' });
  });
  after(async () => {
    await app.close();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Registers an endpoint on the shared receiver; answers the verified events that endpoint gets (by its path). */
  async function subscribe(user: SignedIn, eventTypes: string[]) {
    const path = `/hooks/${user.user.id}`;
    const response = await user.client.post(WEBHOOKS, { url: `http://127.0.0.1:${receiver.port}${path}`, event_types: eventTypes });
    expect(response.status).to.equal(201);
    const { secret } = await json(response);
    const webhook = new Webhook(secret);
    return {
      /** The first verified event of `type` for this endpoint (every request to it must verify). */
      next: (type: string, match: (event: Verified) => boolean = () => true, timeoutMs = 60_000) =>
        eventually(async () => {
          for (const request of receiver.received.filter((r) => r.url === path)) {
            const event = webhook.verify(request.body, request.headers as Record<string, string>) as Verified;
            if (event.type === type && match(event)) return { event, request };
          }
          return undefined;
        }, `a verified ${type} webhook`, timeoutMs),
    };
  }

  it('upload a media file into a project → media.ready with the project, media item and file ids, verified by standardwebhooks', async () => {
    const user = await signUpAndLogin(app);
    const hooks = await subscribe(user, ['media.ready', 'media.failed']);
    const projectId = await newProject(user);
    const clip = await makeVideo(dir, 'clip.mp4', { seconds: 2 });
    const uploaded = await uploadMedia(user.client, clip, { contentType: 'video/mp4', scopeProjectId: projectId, displayName: 'Keynote' });
    const { event } = await hooks.next('media.ready');
    expect(event.data).to.deep.include({ project_uuid: projectId, media_item_uuid: uploaded.mediaItemId, media_file_uuid: uploaded.mediaFileId, display_name: 'Keynote' });
    expect(event.data.proxy_status).to.be.a('string');
  });

  it('analyze → analysis.started, then analysis.failed, each with the project and the run; the credits reserved and released → credits.updated', async () => {
    const user = await signUpAndLogin(app, { credits: 10 });
    const hooks = await subscribe(user, ['analysis.started', 'analysis.completed', 'analysis.failed', 'credits.updated']);
    const projectId = await newProject(user);
    const clip = await makeVideo(dir, 'talk.mp4', { seconds: 2 });
    const uploaded = await uploadMedia(user.client, clip, { contentType: 'video/mp4', scopeProjectId: projectId });
    await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.status === 'UPLOADED');
    const response = await user.client.post(`/api/v1/projects/${projectId}/analyze`, { pacing_level: 50, false_start_sensitivity: 50, language: 'en' });
    expect(response.status, await response.clone().text()).to.equal(200);
    const started = (await hooks.next('analysis.started')).event;
    expect(started.data).to.have.property('project_uuid', projectId);
    const runId = started.data.analysis_run_id;
    expect(runId).to.be.a('string');
    const failed = (await hooks.next('analysis.failed')).event;
    expect(failed.data).to.deep.include({ project_uuid: projectId, analysis_run_id: runId });
    expect(failed.data.error).to.be.a('string').and.not.equal('');
    await hooks.next('credits.updated', (event) => event.data.change === 'reserve');
    await hooks.next('credits.updated', (event) => event.data.change === 'release');
  });

  it('export → export.started, then export.completed, each with the project and the export', async function () {
    this.timeout(240_000);
    const user = await signUpAndLogin(app);
    const hooks = await subscribe(user, ['export.started', 'export.completed', 'export.failed']);
    const projectId = await newProject(user);
    const clip = await makeVideo(dir, 'export.mp4', { seconds: 2 });
    const uploaded = await uploadMedia(user.client, clip, { contentType: 'video/mp4', scopeProjectId: projectId });
    await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.status === 'UPLOADED', 60_000);
    const response = await user.client.post(`/api/v1/projects/${projectId}/exports/`, { name: 'Short', export_settings: { resolution: '720p' } });
    expect(response.status, await response.clone().text()).to.equal(202);
    const exportId = (await json(response)).uuid;
    expect((await hooks.next('export.started', () => true, 120_000)).event.data).to.deep.equal({ project_uuid: projectId, export_uuid: exportId });
    expect((await hooks.next('export.completed', () => true, 180_000)).event.data).to.deep.equal({ project_uuid: projectId, export_uuid: exportId });
  });

  it('a plan change → subscription.updated with the tier and status', async () => {
    const user = await signUpAndLogin(app);
    const hooks = await subscribe(user, ['subscription.updated']);
    await app.services.orm.em.fork().transactional((em) => app.services.billing.setPlan(em, user.user.id, { tier: 'Hobby', status: 'active' }));
    const { event } = await hooks.next('subscription.updated');
    expect(event.data).to.deep.include({ tier: 'Hobby', subscription_status: 'active' });
  });
});
