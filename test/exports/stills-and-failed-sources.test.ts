import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { fileWhen } from '../support/wait.ts';
import { isEvent, openSse } from '../support/sse-stream.ts';
import { makeCorruptFile, makeImage, makeVideo } from '../support/media.ts';
import { newProject } from '../support/projects.ts';

const run = promisify(execFile);

async function durationSeconds(path: string): Promise<number> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path]);
  return Number(stdout.trim());
}

/**
 * Issue 22 item 2: an image, or a failed upload, on a project's spine never freezes it.
 * An image is a still with a duration (IMAGE_STILL_DURATION_MS, or its canvas's
 * params.duration_ms); a failed source plays nothing and exports say which one to remove.
 */
describe('stills and failed sources on the spine: the project stays exportable (local backend, real ffmpeg)', function () {
  this.timeout(240_000);
  let app: TestApp;
  let dir: string;
  let user: SignedIn;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-stills-'));
    app = await startTestApp({ JOB_BACKEND: 'local', IMAGE_STILL_DURATION_MS: '4000' });
    user = await signUpAndLogin(app, { tier: 'Creator' });
  });
  after(async () => {
    await app?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function uploaded(projectId: string, path: string, contentType: string, status: 'UPLOADED' | 'FAILED' = 'UPLOADED') {
    const media = await uploadMedia(user.client, path, { contentType, scopeProjectId: projectId });
    await fileWhen(app.services.orm, media.mediaFileId, (file) => file.status === status, 60_000);
    return media;
  }

  async function exportAndDownload(projectId: string, name: string): Promise<string> {
    const stream = await openSse(user.client, `/api/v1/projects/${projectId}/events`);
    let exportId: string;
    try {
      const response = await user.client.post(`/api/v1/projects/${projectId}/exports/`, { name, export_settings: { resolution: '720p' } });
      expect(response.status, await response.clone().text()).to.equal(202);
      exportId = (await json(response)).uuid;
      const { frame, before } = await stream.until((f) => isEvent('export_complete')(f) || isEvent('export_failed')(f), 180_000);
      expect(frame, JSON.stringify(before)).to.match(/^event: export_complete/);
    } finally {
      stream.close();
    }
    const download = await json(await user.client.get(`/api/v1/exports/${exportId}/download`));
    const path = join(dir, `${name}.mp4`);
    await writeFile(path, Buffer.from(await (await fetch(download.url)).arrayBuffer()));
    return path;
  }

  it('an image on the spine is a still of IMAGE_STILL_DURATION_MS (its canvas may set its own): bounds are checked and the export renders it', async () => {
    const projectId = await newProject(user, 'Slides');
    await uploaded(projectId, await makeVideo(dir, 'intro.mp4', { width: 320, height: 240, seconds: 2, fps: 25 }), 'video/mp4');
    const still = await uploaded(projectId, await makeImage(dir, 'slide.png', { width: 320, height: 240 }), 'image/png');

    type SpineRow = { canvas_uuid: string; media_item_id: string; duration_ms: number | null };
    const listed = (await json(await user.client.get(`/api/v1/projects/${projectId}/spine`))) as SpineRow[] | { data: SpineRow[] };
    // a bare list, or the list envelope (issue 22 item 6 moves lists to { data })
    const spine = Array.isArray(listed) ? listed : listed.data;
    const stillRow = spine.find((row) => row.media_item_id === still.mediaItemId)!;
    expect(stillRow.duration_ms, 'the still reads the configured duration').to.equal(4000);

    // the timeline is known (2 s + 4 s): the bound is checked, not skipped for good
    const beyond = await user.client.post(`/api/v1/projects/${projectId}/edits/`, { type: 'manual', start_ms: 5000, end_ms: 6500, active: true, reason: 'too far' });
    expect(beyond.status, await beyond.clone().text()).to.equal(400);

    // a still's canvas sets its own length
    const patched = await user.client.patch(`/api/v1/projects/${projectId}/canvases/${stillRow.canvas_uuid}`, { params: { duration_ms: 3000 } });
    expect(patched.status, await patched.clone().text()).to.equal(200);
    expect((await json(patched)).params).to.deep.equal({ duration_ms: 3000 });

    const path = await exportAndDownload(projectId, 'Slides');
    // 2 s of video then the still for 3 s
    expect(Math.abs((await durationSeconds(path)) - 5)).to.be.lessThan(0.1);
  });

  it('a failed upload takes no time on the timeline and exports refuse naming it until it is deleted; then the export renders', async () => {
    const projectId = await newProject(user, 'Broken');
    await uploaded(projectId, await makeVideo(dir, 'good.mp4', { width: 320, height: 240, seconds: 2, fps: 25 }), 'video/mp4');
    const broken = await uploaded(projectId, await makeCorruptFile(dir, 'broken.mp4'), 'video/mp4', 'FAILED');

    // the bound is checked against the 2 s that play (the failed clip counts nothing)
    const beyond = await user.client.post(`/api/v1/projects/${projectId}/edits/`, { type: 'manual', start_ms: 1000, end_ms: 2500, active: true, reason: 'beyond' });
    expect(beyond.status, await beyond.clone().text()).to.equal(400);

    const refused = await user.client.post(`/api/v1/projects/${projectId}/exports/`, { name: 'Broken', export_settings: { resolution: '720p' } });
    expect(refused.status).to.equal(409);
    const body = await json(refused);
    expect(body.code).to.equal('SourceFailed');
    expect(body.detail).to.include('broken.mp4').and.match(/delete/i);
    expect(body.detail).not.to.match(/still being processed/);

    const analyze = await user.client.post(`/api/v1/projects/${projectId}/analyze`, { pacing_level: 50, false_start_sensitivity: 50, language: null });
    expect(analyze.status).to.equal(409);
    expect((await json(analyze)).detail).to.include('broken.mp4');

    expect((await user.client.delete(`/api/v1/media/${broken.mediaItemId}`)).status).to.equal(204);
    const path = await exportAndDownload(projectId, 'Fixed');
    expect(Math.abs((await durationSeconds(path)) - 2)).to.be.lessThan(0.1);
  });
});
