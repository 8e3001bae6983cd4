import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { Client, signUpAndLogin, type SignedIn } from '../support/users.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { fileWhen, eventually } from '../support/wait.ts';
import { dataOf, isAnyEvent, isEvent, openSse } from '../support/sse-stream.ts';
import { makeVideo, topLevelBoxes } from '../support/media.ts';
import { Export } from '../../api/src/exports/entities.ts';

const run = promisify(execFile);

interface Probe {
  streams: { codec_type: string; codec_name: string; width?: number; height?: number; pix_fmt?: string; nb_read_frames?: string }[];
  format: { duration: string };
}

async function probe(path: string): Promise<Probe> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-show_entries', 'stream=codec_type,codec_name,width,height,pix_fmt,nb_read_frames:format=duration', '-of', 'json', path]);
  return JSON.parse(stdout) as Probe;
}


/**
 * A creator's whole export, on the local backend with the ffmpeg image's render program:
 * upload, cut, export with the project stream open, download, and the file checked.
 */
describe('exports, end to end: upload, cut, render, download (local backend, real ffmpeg)', function () {
  this.timeout(240_000);
  let app: TestApp;
  let dir: string;
  let user: SignedIn;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-export-'));
    app = await startTestApp({ JOB_BACKEND: 'local' });
    user = await signUpAndLogin(app, { tier: 'Creator' });
  });
  after(async () => {
    await app?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function projectWithVideo(owner: SignedIn, seconds: number): Promise<string> {
    const projectId = (await json(await owner.client.post('/api/v1/projects/', { name: 'Journey' }))).uuid as string;
    const video = await makeVideo(dir, `source-${Date.now()}.mp4`, { width: 640, height: 360, seconds, fps: 25 });
    const uploaded = await uploadMedia(owner.client, video, { contentType: 'video/mp4', scopeProjectId: projectId });
    await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.status === 'UPLOADED', 60_000);
    return projectId;
  }

  it('a cut 720p export: export_started, export_progress 5/30/85 once each, export_complete; the download is an H.264/AAC faststart MP4 as long as the kept time', async () => {
    const projectId = await projectWithVideo(user, 6);
    const cut = await user.client.post(`/api/v1/projects/${projectId}/edits/`, { type: 'manual', start_ms: 2000, end_ms: 3000, active: true, reason: 'cough' });
    expect(cut.status, await cut.clone().text()).to.equal(201);
    const stream = await openSse(user.client, `/api/v1/projects/${projectId}/events`);
    let exportId: string;
    try {
      const response = await user.client.post(`/api/v1/projects/${projectId}/exports/`, { name: 'Short', export_settings: { resolution: '720p' } });
      expect(response.status, await response.clone().text()).to.equal(202);
      exportId = (await json(response)).uuid;
      const { frame, before } = await stream.until((f) => isEvent('export_complete')(f) || isEvent('export_failed')(f), 180_000);
      expect(frame, JSON.stringify(before)).to.match(/^event: export_complete/);
      const events = before.filter(isAnyEvent);
      expect(events.filter(isEvent('export_started')).map(dataOf)).to.deep.equal([{ export_uuid: exportId }]);
      expect(events.filter(isEvent('export_progress')).map((f) => dataOf(f).progress)).to.deep.equal([5, 30, 85]);
      for (const f of events.filter(isEvent('export_progress'))) expect(dataOf(f).message).to.be.a('string').and.not.equal('');
      expect(dataOf(frame)).to.deep.include({ export_uuid: exportId });
    } finally {
      stream.close();
    }

    const download = await json(await user.client.get(`/api/v1/exports/${exportId}/download`));
    expect(download).to.deep.include({ expires_in: 3600, filename: 'Journey - Short - 720p 16x9.mp4' });
    const file = await fetch(download.url);
    expect(file.status).to.equal(200);
    const path = join(dir, 'downloaded.mp4');
    await writeFile(path, Buffer.from(await file.arrayBuffer()));
    const probed = await probe(path);
    const video = probed.streams.find((s) => s.codec_type === 'video')!;
    const audio = probed.streams.find((s) => s.codec_type === 'audio')!;
    expect(video).to.deep.include({ codec_name: 'h264', width: 1280, height: 720, pix_fmt: 'yuv420p' });
    expect(audio.codec_name).to.equal('aac');
    // 6 s less the 1 s cut, within one frame at 25 fps
    expect(Math.abs(Number(probed.format.duration) - 5)).to.be.lessThan(0.04 + 0.025);
    expect(Number(video.nb_read_frames)).to.equal(125);
    const boxes = await topLevelBoxes(path);
    expect(boxes.indexOf('moov')).to.be.lessThan(boxes.indexOf('mdat'));
    const row = await app.services.orm.em.fork().findOneOrFail(Export, exportId);
    expect(row).to.deep.include({ status: 'completed', durationMs: row.durationMs });
    expect(Math.abs(row.durationMs! - 5000)).to.be.lessThan(41);
  });

  it('a render past its deadline ends failed with job.timed_out and export_failed, never stuck in rendering', async () => {
    const owner = await signUpAndLogin(app, { tier: 'Creator', locale: 'pt' });
    const projectId = (await json(await owner.client.post('/api/v1/projects/', { name: 'Long' }))).uuid as string;
    const video = await makeVideo(dir, 'long.mp4', { width: 1280, height: 720, seconds: 20, fps: 30 });
    const uploaded = await uploadMedia(owner.client, video, { contentType: 'video/mp4', scopeProjectId: projectId });
    await fileWhen(app.services.orm, uploaded.mediaFileId, (f) => f.status === 'UPLOADED', 60_000);
    // A second api on the same database and Redis whose jobs get one second: the session works there too.
    const impatient = await startTestApp({ JOB_BACKEND: 'local', JOB_TIMEOUT_SECONDS: '1' });
    const stream = await openSse(owner.client, `/api/v1/projects/${projectId}/events`);
    try {
      const there = new Client(impatient);
      for (const [name, value] of owner.client.cookies) there.cookies.set(name, value);
      const response = await there.post(`/api/v1/projects/${projectId}/exports/`, { name: 'Heavy', export_settings: { audio: { normalize: true, noise_reduction: true } } });
      expect(response.status, await response.clone().text()).to.equal(202);
      const exportId = (await json(response)).uuid;
      const failed = dataOf(await stream.next(isEvent('export_failed'), 60_000));
      expect(failed.export_uuid).to.equal(exportId);
      expect(failed.error).to.match(/limite de tempo de 1 s/);
      const row = await eventually(async () => {
        const found = await app.services.orm.em.fork().findOneOrFail(Export, exportId);
        return found.status === 'failed' ? found : undefined;
      }, 'export failed');
      expect(row.errorCode).to.equal('job.timed_out');
    } finally {
      stream.close();
      await impatient.close();
    }
  });
});
