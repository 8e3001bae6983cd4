import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { makeVideo } from '../support/media.ts';
import { dataOf, isEvent, openSse } from '../support/sse-stream.ts';
import { Client, signUpAndLogin } from '../support/users.ts';

/**
 * A server-to-server client's whole way with nothing but a key and plain fetch (no cookie,
 * no CSRF token): a project, an upload (presign, PUT, confirm), media_ready on the user
 * stream, an export request and its completion on the project stream.
 */
describe('an integration with a key alone (issue 24 item 1): upload to export with plain fetch and Authorization: Bearer', function () {
  this.timeout(240_000);
  let app: TestApp;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-key-journey-'));
    app = await startTestApp({ JOB_BACKEND: 'local' });
  });
  after(async () => {
    await app?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('project 201, presign 201, PUT 200, confirm 200, media_ready, export 202, export_complete, download 200', async () => {
    const owner = await signUpAndLogin(app, { tier: 'Creator' });
    const made = await owner.client.post('/api/v1/users/me/api-keys', { name: 'batch script', scopes: ['read', 'write'] });
    const { key } = (await made.json()) as { key: string };

    const api = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${app.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const keyOnly = new Client(app, { headers: { Authorization: `Bearer ${key}` } });

    const project = await api('POST', '/api/v1/projects/', { name: 'Recorded talk' });
    expect(project.status).to.equal(201);
    const projectId = project.body.uuid as string;
    const userStream = await openSse(keyOnly, '/api/v1/user-stream');
    try {
      const video = await readFile(await makeVideo(dir, 'talk.mp4', { width: 640, height: 360, seconds: 3, fps: 25 }));
      const presigned = await api('POST', '/api/v1/media/presign', { filename: 'talk.mp4', content_type: 'video/mp4', size_bytes: video.length, scope: 'project', scope_project_id: projectId });
      expect(presigned.status).to.equal(201);
      const put = await fetch(presigned.body.upload_url as string, { method: 'PUT', headers: { 'Content-Type': 'video/mp4' }, body: video });
      expect(put.status).to.equal(200);
      const confirmed = await api('POST', `/api/v1/media/${presigned.body.media_file_id as string}/confirm`);
      expect(confirmed.status).to.equal(200);
      const ready = await userStream.next(isEvent('media_ready'), 60_000);
      expect(dataOf(ready)).to.include({ media_file_uuid: presigned.body.media_file_id });
    } finally {
      userStream.close();
    }

    const projectStream = await openSse(keyOnly, `/api/v1/projects/${projectId}/events`);
    try {
      const requested = await api('POST', `/api/v1/projects/${projectId}/exports/`, { name: 'Cut', export_settings: { resolution: '720p' } });
      expect(requested.status).to.equal(202);
      const exportId = requested.body.uuid as string;
      const { frame, before } = await projectStream.until((f) => isEvent('export_complete')(f) || isEvent('export_failed')(f), 180_000);
      expect(frame, JSON.stringify(before)).to.match(/^event: export_complete/);
      expect(dataOf(frame)).to.include({ export_uuid: exportId });
      const download = await api('GET', `/api/v1/exports/${exportId}/download`);
      expect(download.status).to.equal(200);
      expect((await fetch(download.body.url as string)).status).to.equal(200);
    } finally {
      projectStream.close();
    }
  });
});
