import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { json, startTestApp, type TestApp } from '../support/harness.ts';
import { checkResponsesAgainstDocument, type ContractCheck } from '../support/contract.ts';
import { Client, signUpAndLogin, uniqueUsername } from '../support/users.ts';
import { makeVideo } from '../support/media.ts';
import { uploadMedia } from '../support/media-upload.ts';

/**
 * A creator's ordinary session, from sign-up to a listed upload, with the refusals a
 * client meets on the way (401, 403, 404, 422, 429): every answer is checked against the
 * document the app serves (test/support/contract.ts) — its status listed, its media type
 * declared, its JSON body valid under the operation's schema.
 */
describe('the API document tells the truth about real answers', () => {
  let app: TestApp;
  let contract: ContractCheck;
  let dir: string;
  before(async () => {
    // Signup's per-IP limit is reached from one address: X-Forwarded-For is trusted, each run its own Redis keys.
    app = await startTestApp({ TRUST_PROXY: 'true', REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}truth-${randomBytes(3).toString('hex')}:` });
    contract = await checkResponsesAgainstDocument(app);
    dir = await mkdtemp(join(tmpdir(), 'cutroom-truth-'));
  });
  after(async () => {
    contract.stop();
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a journey over accounts, projects, uploads, media, presets, groups and the project lists answers only what the document says', async function () {
    this.timeout(120_000);
    const anonymous = new Client(app, { ip: '198.51.100.7' });
    // Sign-up: 201, then 422 for a bad body, 409 for a taken username, 429 once the address's limit is spent.
    const username = uniqueUsername('truth');
    const signup = { name: 'Truth', username, email: `${username}@example.test`, password: 'correct horse battery staple' };
    expect((await anonymous.post('/api/v1/users/', signup)).status).to.equal(201);
    expect((await anonymous.post('/api/v1/users/', { ...signup, email: 'not-an-address' })).status).to.equal(422);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 8; attempt++) {
      const name = uniqueUsername('truth');
      statuses.push((await anonymous.post('/api/v1/users/', { ...signup, username: name, email: `${name}@example.test` })).status);
    }
    expect(statuses).to.include(429);
    expect((await anonymous.logIn(username, 'wrong password')).status).to.be.oneOf([401, 403]);
    expect((await anonymous.get('/api/v1/users/me')).status).to.equal(401);
    expect((await anonymous.get('/api/v1/auth/check-auth')).status).to.equal(200);

    const user = await signUpAndLogin(app, { tier: 'Creator', credits: 60 });
    const client = user.client;
    expect((await client.get('/api/v1/users/me')).status).to.equal(200);
    expect((await client.patch('/api/v1/users/me', { name: 'Renamed' })).status).to.equal(200);
    expect((await client.get('/api/v1/users/me/billing')).status).to.equal(200);
    // A mutation without the CSRF header: 403.
    expect((await client.post('/api/v1/projects/', { name: 'x' }, { headers: { 'X-CSRF-Token': 'stale' } })).status).to.equal(403);

    const created = await client.post('/api/v1/projects/', { name: 'Talk' });
    expect(created.status).to.equal(201);
    const project = (await json(created)).uuid as string;
    expect((await client.post('/api/v1/projects/', { name: '' })).status).to.equal(422);
    expect((await client.get('/api/v1/projects/?page=1&items_per_page=5')).status).to.equal(200);
    expect((await client.get(`/api/v1/projects/${project}`)).status).to.equal(200);
    expect((await client.get('/api/v1/projects/8d0e2f7c-0000-4000-8000-000000000000')).status).to.equal(404);
    expect((await client.get('/api/v1/projects/not-a-uuid')).status).to.equal(422);

    const clip = await makeVideo(dir, 'truth.mp4', { seconds: 1, width: 160, height: 90 });
    const uploaded = await uploadMedia(client, clip, { contentType: 'video/mp4', scopeProjectId: project });
    expect((await client.get('/api/v1/media')).status).to.equal(200);
    expect((await client.get(`/api/v1/media/${uploaded.mediaItemId}`)).status).to.equal(200);
    expect((await client.patch(`/api/v1/media/${uploaded.mediaItemId}`, { display_name: 'Renamed clip' })).status).to.equal(200);
    expect((await client.get(`/api/v1/media/${uploaded.mediaItemId}/proxy`)).status).to.be.oneOf([200, 409]);

    for (const list of ['canvases', 'spine', 'analysis-runs', 'edits/', 'drafts/', 'exports/', 'caption-lines', 'estimated-credits']) {
      const response = await client.get(`/api/v1/projects/${project}/${list}`);
      expect(response.status, list).to.be.oneOf([200, 409]);
    }
    expect((await client.get(`/api/v1/projects/${project}/timeline?format=otio`)).status).to.be.oneOf([200, 400, 409]);
    expect((await client.post(`/api/v1/projects/${project}/drafts/`, { name: 'First cut' })).status).to.be.oneOf([201, 400]);
    expect((await client.post(`/api/v1/projects/${project}/analyze`, { pacing_level: 500 })).status).to.equal(422);

    const preset = await client.post('/api/v1/users/me/presets', {
      name: 'Tight', pacing_level: 70, false_start_sensitivity: 40, language: 'en', audio_clean: true, censorship_mode: 'bleep',
    });
    expect(preset.status).to.equal(201);
    expect((await client.get('/api/v1/users/me/presets')).status).to.equal(200);
    expect((await client.patch(`/api/v1/users/me/presets/${(await json(preset)).uuid}`, { name: 'Tighter' })).status).to.equal(200);
    const previewPreset = await client.post('/api/v1/users/me/preview-presets', {
      name: 'Shorts', format: '9:16', background: '#000', caption_style: 'bold', caption_font: 'Inter', caption_size: 48,
      caption_position: 'bottom', caption_color: '#FFCC00', caption_length: 4,
    });
    expect(previewPreset.status).to.equal(201);
    expect((await client.get('/api/v1/users/me/preview-presets')).status).to.equal(200);
    expect((await client.delete(`/api/v1/users/me/preview-presets/${(await json(previewPreset)).uuid}`)).status).to.equal(204);

    const group = await client.post('/api/v1/media-groups', { name: 'Talks' });
    expect(group.status).to.equal(201);
    const groupBody = await json(group);
    const groupId = groupBody.id ?? groupBody.uuid;
    expect((await client.get('/api/v1/media-groups')).status).to.equal(200);
    expect((await client.get(`/api/v1/media-groups/${groupId}`)).status).to.equal(200);

    // An event stream: its head is checked (text/event-stream declared), then the client goes away.
    for (const path of ['/api/v1/user-stream', `/api/v1/projects/${project}/events`]) {
      const leaving = new AbortController();
      const stream = await client.get(path, { signal: leaving.signal });
      expect(stream.status, path).to.equal(200);
      leaving.abort();
      await stream.body?.cancel().catch(() => undefined);
    }
    for (const path of ['/healthz', '/readyz', '/api/v1/openapi.json', '/api/v1/docs']) expect((await app.fetch(path)).status, path).to.equal(200);
    expect((await client.post('/api/v1/auth/logout')).status).to.equal(200);
    expect((await client.get(`/api/v1/projects/${project}`)).status).to.equal(401);

    expect(contract.violations).to.deep.equal([]);
    const answered = new Set(contract.exchanges.map((exchange) => exchange.status));
    for (const status of [200, 201, 204, 401, 403, 404, 422, 429]) expect([...answered], `a ${status} was checked`).to.include(status);
    expect(new Set(contract.exchanges.map((exchange) => `${exchange.method} ${exchange.template}`)).size).to.be.greaterThan(30);
  });
});
