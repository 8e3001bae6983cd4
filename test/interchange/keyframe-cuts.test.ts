import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startTestApp, json, failCloseOnContractViolations, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { completedRun } from '../support/analysis-runs.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { eventually, fileWhen } from '../support/wait.ts';
import { runFfmpeg } from '../../hack/fixtures/media.ts';
import { removedRange, type StoredPause } from '../../crds/contract/editing/kept-pause.ts';
import { renderInputSchema } from '../../crds/contract/programs/render.ts';
import { Edit } from '../../api/src/edits/entities.ts';
import { Export } from '../../api/src/exports/entities.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { MediaFile, MediaItem } from '../../api/src/media/entities.ts';
import { Project } from '../../api/src/projects/entities.ts';

const run = promisify(execFile);

/** The talk's frame rate; a keyframe every FPS frames: one each second. */
const FPS = 30;
const EVERY_SECOND = Array.from({ length: 10 }, (_, index) => index * 1_000);
/**
 * A pause of 700 ms between two words, 420 ms kept (60/40): the pause rule removes 5_952–6_232;
 * the keyframe at 6_000 lies 48 ms after the removed range's start, within what the 168 ms kept
 * after it may give (68 ms), so the range slides to 6_000–6_280 (the kept stretch before the
 * cut ends on the keyframe); its end would need −232 ms of the 152 ms the side before may give.
 */
const PAUSE: StoredPause = { start_ms: 5_700, end_ms: 6_400, kept_ms: 420, kept_split: 0.6, breath: null, keep_breath: false };
const KEYFRAME_MS = 6_000;

interface Segment {
  source_in: number;
  record_in: number;
  duration: number;
  track: string;
}

describe('keyframe-aware cut edges in production: the artifact job lists a source\'s keyframes, exports and timeline files slide shortened pauses onto them (issue 42 item 1)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let dir: string;
  let user: SignedIn;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-keyframe-cuts-'));
    app = await startTestApp({ JOB_BACKEND: 'local', WHISPER_BASE_URL: 'http://127.0.0.1:9/v1', EXPORT_MAX_ACTIVE_PER_USER: '10' });
    await failCloseOnContractViolations(app);
    user = await signUpAndLogin(app, { tier: 'Creator' });
  });
  after(async () => {
    await app?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A 10 s 30 fps talk with a keyframe every 30 frames, uploaded into a new project (the real artifact job), analysed with one shortened pause. */
  async function talkWithPause(): Promise<{ projectId: string; fileId: string; itemId: string; path: string }> {
    const path = join(dir, `talk-${randomUUID().slice(0, 8)}.mp4`);
    await runFfmpeg([
      '-f', 'lavfi', '-i', `testsrc2=size=320x180:rate=${FPS}:duration=10`, '-f', 'lavfi', '-i', 'sine=frequency=440:duration=10',
      '-c:v', 'libx264', '-preset', 'veryfast', '-g', String(FPS), '-keyint_min', String(FPS), '-sc_threshold', '0', '-pix_fmt', 'yuv420p',
      '-c:a', 'aac', '-shortest', '-metadata', `comment=cutroom-test-${randomUUID()}`, path,
    ]);
    const projectId = (await json(await user.client.post('/api/v1/projects/', { name: 'Talk' }))).uuid as string;
    const uploaded = await uploadMedia(user.client, path, { contentType: 'video/mp4', scopeProjectId: projectId });
    await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.status === 'UPLOADED', 90_000);
    const em = app.services.orm.em.fork();
    const project = await em.findOneOrFail(Project, projectId);
    const run = completedRun(em, project, user.user.id, [
      { word: 'Hello.', start_ms: 5_000, end_ms: 5_680, confidence: 0.9, source_index: 0 },
      { word: 'Again.', start_ms: 6_420, end_ms: 7_000, confidence: 0.9, source_index: 0 },
    ]);
    const removed = removedRange(PAUSE.start_ms, PAUSE.end_ms, { keptMs: PAUSE.kept_ms, keptSplit: PAUSE.kept_split, breath: null, keepBreath: false })!;
    expect(removed).to.deep.equal({ startMs: 5_952, endMs: 6_232 });
    em.create(Edit, { id: randomUUID(), project, runId: run.id, type: 'silence', startMs: removed.startMs, endMs: removed.endMs, active: true, reason: 'Pause of 0.7 s, shortened to 0.42 s', pause: PAUSE });
    project.activeRunId = run.id;
    project.status = 'analyzed';
    await em.flush();
    return { projectId, fileId: uploaded.mediaFileId, itemId: uploaded.mediaItemId, path };
  }

  /** The export's render request (the job's input, as the render program reads it) and its echoed settings. */
  async function exported(projectId: string, exportSettings: Record<string, unknown> = {}) {
    const response = await user.client.post(`/api/v1/projects/${projectId}/exports/`, { name: 'Cut', export_settings: { resolution: '720p', ...exportSettings } });
    expect(response.status, await response.clone().text()).to.equal(202);
    const body = await json(response);
    const row = await app.services.orm.em.fork().findOneOrFail(Export, body.uuid);
    const job = await app.services.orm.em.fork().findOneOrFail(Job, row.jobId!);
    return { id: body.uuid as string, settings: body.export_settings, segments: renderInputSchema.parse(job.input).segments.filter((segment) => !segment.inserted) };
  }

  /** The main track of the timeline file (OpenTimelineIO), in frames. */
  async function timelineClips(projectId: string, query = ''): Promise<{ clips: Segment[]; durationFrames: number }> {
    const response = await user.client.get(`/api/v1/projects/${projectId}/timeline?format=otio${query}`);
    expect(response.status, await response.clone().text()).to.equal(200);
    const body = await json(response);
    return { clips: (body.segments as Segment[]).filter((segment) => segment.track === 'main'), durationFrames: body.duration_frames };
  }

  const frameOf = (ms: number) => Math.round((ms * FPS) / 1000);

  /** The render request's pieces and the timeline's clips are the same cut: each edit point on the same frame. */
  function expectSameCut(segments: { sourceStartMs: number; sourceEndMs: number; outStartMs: number }[], clips: Segment[]): void {
    expect(clips.map((clip) => [clip.source_in, clip.record_in, clip.duration])).to.deep.equal(
      segments.map((segment) => [frameOf(segment.sourceStartMs), frameOf(segment.outStartMs), frameOf(segment.sourceEndMs) - frameOf(segment.sourceStartMs)]),
    );
  }

  it('the artifact job records the upload\'s keyframes (media_files.keyframes_ms), not shown in the MediaFile read model', async () => {
    const { fileId, itemId } = await talkWithPause();
    const file = await app.services.orm.em.fork().findOneOrFail(MediaFile, fileId, { populate: ['keyframesMs'] });
    expect(file.keyframesMs).to.deep.equal(EVERY_SECOND);
    const item = await user.client.get(`/api/v1/media/${itemId}`);
    expect(item.status).to.equal(200);
    expect(await item.text()).to.not.include('keyframe');
  });

  it('a media edit\'s produced file records its own keyframes too (the artifact program runs on it in the same job): those ffprobe reads from the stored object', async () => {
    const path = join(dir, `edit-source-${randomUUID().slice(0, 8)}.mp4`);
    await runFfmpeg([
      '-f', 'lavfi', '-i', `testsrc2=size=320x180:rate=${FPS}:duration=6`, '-f', 'lavfi', '-i', 'sine=duration=6',
      '-c:v', 'libx264', '-preset', 'veryfast', '-g', String(FPS), '-keyint_min', String(FPS), '-sc_threshold', '0', '-pix_fmt', 'yuv420p',
      '-c:a', 'aac', '-shortest', '-metadata', `comment=cutroom-test-${randomUUID()}`, path,
    ]);
    const source = await uploadMedia(user.client, path, { contentType: 'video/mp4' });
    await fileWhen(app.services.orm, source.mediaFileId, (file) => file.status === 'UPLOADED', 90_000);
    const response = await user.client.post(`/api/v1/media/${source.mediaItemId}/edit`, { extract_audio: false, save_mode: 'copy', fast_mode: true, start_ms: 1_000, end_ms: 5_000, cuts: [{ start_ms: 2_000, end_ms: 3_000 }] });
    expect(response.status, await response.clone().text()).to.equal(202);
    const itemId = (await json(response)).new_media_item_uuid as string;
    const produced = await eventually(async () => {
      const item = await app.services.orm.em.fork().findOneOrFail(MediaItem, itemId, { populate: ['file', 'file.keyframesMs'] });
      if (item.file.status === 'FAILED') throw new Error(`the edit failed: ${item.file.error}`);
      return item.file.status === 'UPLOADED' ? item.file : undefined;
    }, 'the edit produced its file', 120_000);
    const copy = join(dir, `produced-${itemId}.mp4`);
    await writeFile(copy, Buffer.from(await (await fetch(await app.services.storage.presignGet(produced.storageKey, 600))).arrayBuffer()));
    // ffprobe's packet flags, counted from the container's start; a key packet the stream copy's joins repeat is one keyframe
    const start = Number((await run('ffprobe', ['-v', 'error', '-show_entries', 'format=start_time', '-of', 'csv=p=0', copy])).stdout.trim());
    const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', copy]);
    const keys = stdout.trim().split('\n').filter((line) => line.split(',')[1]?.startsWith('K'));
    const keyframes = [...new Set(keys.map((line) => Math.round((Number(line.split(',')[0]) - start) * 1000)))].sort((a, b) => a - b);
    expect(keyframes.length).to.be.above(2);
    expect(produced.keyframesMs).to.deep.equal(keyframes);
  });

  it('a shortened pause holding a keyframe has its cut slid onto it: the render request\'s piece edge and the timeline\'s edit point agree, on the keyframe, the kept pause length unchanged; snap_cuts_to_keyframes false leaves them where the pause rule placed them', async () => {
    const { projectId } = await talkWithPause();

    const slid = await exported(projectId);
    expect(slid.segments[0]).to.include({ sourceStartMs: 0, sourceEndMs: KEYFRAME_MS, outStartMs: 0 });
    expect(frameOf(slid.segments[1]!.sourceStartMs)).to.equal(frameOf(KEYFRAME_MS + 280));
    const slidTimeline = await timelineClips(projectId);
    expectSameCut(slid.segments, slidTimeline.clips);
    expect(slidTimeline.clips[0]!.duration).to.equal(frameOf(KEYFRAME_MS));
    expect(slid.settings.snap_cuts_to_keyframes).to.equal(true);

    const placed = await exported(projectId, { snap_cuts_to_keyframes: false });
    expect(placed.settings.snap_cuts_to_keyframes).to.equal(false);
    expect(frameOf(placed.segments[0]!.sourceEndMs)).to.equal(frameOf(5_952));
    expect(frameOf(placed.segments[1]!.sourceStartMs)).to.equal(frameOf(6_232));
    const placedTimeline = await timelineClips(projectId, '&snap_cuts_to_keyframes=false');
    expectSameCut(placed.segments, placedTimeline.clips);
    // the same request in a body
    const posted = await user.client.post(`/api/v1/projects/${projectId}/timeline`, { format: 'otio', snap_cuts_to_keyframes: false });
    expect(posted.status, await posted.clone().text()).to.equal(200);
    expect(((await json(posted)).segments as Segment[]).filter((segment) => segment.track === 'main')).to.deep.equal(placedTimeline.clips);
    // the slide moves the cut, not what it removes: the output is as long either way
    expect(slidTimeline.durationFrames).to.equal(placedTimeline.durationFrames);

    expect((await user.client.post(`/api/v1/projects/${projectId}/exports/`, { name: 'x', export_settings: { snap_cuts_to_keyframes: 'yes' } })).status).to.equal(422);
    expect((await user.client.get(`/api/v1/projects/${projectId}/timeline?format=otio&snap_cuts_to_keyframes=yes`)).status).to.equal(422);
  });

  it('a source with no keyframes recorded (probed before they were) slides no cut, until the same bytes are uploaded again; an export stored before the setting echoes false (it slid nothing)', async () => {
    const { projectId, fileId, path } = await talkWithPause();
    expect((await timelineClips(projectId)).clips[0]!.duration, 'with its keyframes').to.equal(frameOf(KEYFRAME_MS));
    const slid = await exported(projectId);

    await app.services.orm.em.fork().nativeUpdate(MediaFile, { id: fileId }, { keyframesMs: null });
    const unknown = await exported(projectId);
    expect(unknown.settings.snap_cuts_to_keyframes).to.equal(true);
    expect(frameOf(unknown.segments[0]!.sourceEndMs)).to.equal(frameOf(5_952));
    expect((await timelineClips(projectId)).clips[0]!.duration).to.equal(frameOf(5_952));

    // the same bytes uploaded again fold onto the stored file, which gains the keyframes it lacked
    const again = await uploadMedia(user.client, path, { contentType: 'video/mp4' });
    const twin = await eventually(async () => {
      const stored = await app.services.orm.em.fork().findOneOrFail(MediaFile, fileId, { populate: ['keyframesMs'] });
      return stored.keyframesMs ? stored : undefined;
    }, 'the stored file gains its keyframes', 90_000);
    expect(twin.keyframesMs).to.deep.equal(EVERY_SECOND);
    expect(await app.services.orm.em.fork().count(MediaFile, { id: again.mediaFileId })).to.equal(0);
    expect((await timelineClips(projectId)).clips[0]!.duration).to.equal(frameOf(KEYFRAME_MS));

    // an export stored before the setting existed: it slid nothing, and says so
    const em = app.services.orm.em.fork();
    const row = await em.findOneOrFail(Export, slid.id);
    const { snap_cuts_to_keyframes: _dropped, ...before } = row.exportSettings;
    row.exportSettings = before;
    await em.flush();
    const read = await json(await user.client.get(`/api/v1/exports/${slid.id}`));
    expect(read.export_settings.snap_cuts_to_keyframes).to.equal(false);
  });
});
