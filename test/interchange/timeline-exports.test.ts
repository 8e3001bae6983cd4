import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { XMLParser } from 'fast-xml-parser';
import { startTestApp, json, type TestApp } from '../support/harness.ts';
import { signUpAndLogin, type SignedIn } from '../support/users.ts';
import { completedRun } from '../support/analysis-runs.ts';
import { uploadMedia } from '../support/media-upload.ts';
import { eventually, fileWhen } from '../support/wait.ts';
import { makeVideo } from '../support/media.ts';
import { projectWithSources } from '../support/projects.ts';
import { Edit } from '../../api/src/edits/entities.ts';
import { Export } from '../../api/src/exports/entities.ts';
import { Job } from '../../api/src/jobs/entities.ts';
import { MediaFile, MediaItem } from '../../api/src/media/entities.ts';
import { Project } from '../../api/src/projects/entities.ts';
import type { RenderRequestInput } from '../../crds/contract/programs/render.ts';
import type { TranscriptWord } from '../../crds/contract/programs/analyze.ts';

const run = promisify(execFile);

interface Segment {
  source: string;
  source_in: number;
  record_in: number;
  duration: number;
  track: 'main' | 'insert' | 'overlay';
}

interface TimelineBody {
  format: string;
  filename: string;
  content: string;
  frame_rate: { num: number; den: number };
  duration_frames: number;
  segments: Segment[];
  markers: number;
  unexpressed: string[];
}

const xmlParser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', parseAttributeValue: false, parseTagValue: false, isArray: (name) => ['asset-clip', 'clipitem', 'track', 'marker', 'chapter-marker', 'entry', 'blank', 'producer', 'playlist', 'asset'].includes(name) });

/** "1001/30000s" or "2s" at `rate` → frames. */
function fcpFrames(time: string, rate: { num: number; den: number }): number {
  const [num, den = '1'] = time.replace(/s$/, '').split('/');
  return Math.round((Number(num) * rate.num) / (Number(den) * rate.den));
}

/** The V1 clips of each format as [source_in, record_in, duration] frames, read by a parser that is not the writer. */
function keptOf(format: string, content: string, rate: { num: number; den: number }): number[][] {
  switch (format) {
    case 'fcpxml': {
      const doc = xmlParser.parse(content);
      expect(doc.fcpxml.version).to.equal('1.10');
      return doc.fcpxml.library.event.project.sequence.spine['asset-clip'].map((clip: Record<string, string>) => [fcpFrames(clip.start!, rate), fcpFrames(clip.offset!, rate), fcpFrames(clip.duration!, rate)]);
    }
    case 'xmeml': {
      const doc = xmlParser.parse(content);
      expect(doc.xmeml.version).to.equal('4');
      const track = doc.xmeml.sequence.media.video.track[0];
      return track.clipitem.map((item: Record<string, string>) => [Number(item.in), Number(item.start), Number(item.end) - Number(item.start)]);
    }
    case 'mlt': {
      const doc = xmlParser.parse(content);
      const v1 = doc.mlt.playlist.find((playlist: { id: string }) => playlist.id === 'V1');
      let at = 0;
      return v1.entry.map((entry: Record<string, string>) => {
        const duration = Number(entry.out) - Number(entry.in) + 1;
        const row = [Number(entry.in), at, duration];
        at += duration;
        return row;
      });
    }
    case 'edl': {
      const base = Math.round(rate.num / rate.den);
      const frames = (tc: string) => tc.split(':').map(Number).reduce((sum, part, index) => (index < 3 ? (sum + part) * (index < 2 ? 60 : base) : sum + part), 0);
      return content
        .split('\r\n')
        .filter((line) => /^\d{3}\s+\S+\s+V\s+C\s/.test(line))
        .map((line) => {
          const [srcIn, srcOut, recIn] = line.trim().split(/\s+/).slice(4, 7).map(frames) as [number, number, number];
          return [srcIn, recIn, srcOut - srcIn];
        });
    }
    case 'otio': {
      const doc = JSON.parse(content);
      expect(doc.OTIO_SCHEMA).to.equal('Timeline.1');
      const v1 = doc.tracks.children.find((track: { name: string }) => track.name === 'V1');
      let at = 0;
      const rows: number[][] = [];
      for (const child of v1.children) {
        const duration = child.source_range.duration.value as number;
        if (child.OTIO_SCHEMA === 'Clip.2') rows.push([child.source_range.start_time.value, at, duration]);
        at += duration;
      }
      return rows;
    }
  }
  throw new Error(format);
}

describe('timeline exports: the cut in editor formats, captions and transcripts re-timed to the cut', function () {
  this.timeout(300_000);
  let app: TestApp;
  let dir: string;
  let user: SignedIn;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-interchange-'));
    app = await startTestApp({ JOB_BACKEND: 'local', WHISPER_BASE_URL: 'http://127.0.0.1:9/v1' });
    user = await signUpAndLogin(app, { tier: 'Creator' });
  });
  after(async () => {
    await app?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A project playing one real upload; returns its id, the local file and its media file id. */
  async function projectWithVideo(owner: SignedIn, options: { seconds: number; fps: number; width?: number; height?: number; gopFrames?: number }): Promise<{ projectId: string; path: string; name: string; fileId: string }> {
    const projectId = (await json(await owner.client.post('/api/v1/projects/', { name: 'Talk' }))).uuid as string;
    const name = `talk-${randomUUID().slice(0, 8)}.mp4`;
    const size = { width: options.width ?? 640, height: options.height ?? 360 };
    const path = options.gopFrames ? await shortGopVideo(join(dir, name), { ...size, seconds: options.seconds, fps: options.fps, gopFrames: options.gopFrames }) : await makeVideo(dir, name, { ...size, seconds: options.seconds, fps: options.fps });
    const uploaded = await uploadMedia(owner.client, path, { contentType: 'video/mp4', scopeProjectId: projectId });
    await fileWhen(app.services.orm, uploaded.mediaFileId, (file) => file.status === 'UPLOADED', 60_000);
    return { projectId, path, name, fileId: uploaded.mediaFileId };
  }

  /** A testsrc2 H.264/AAC MP4 with a keyframe every `gopFrames`, so a cut-only export of it takes the smart path (whole GOPs inside its kept ranges). */
  async function shortGopVideo(path: string, options: { width: number; height: number; seconds: number; fps: number; gopFrames: number }): Promise<string> {
    await run('ffmpeg', [
      '-v', 'error', '-y',
      '-f', 'lavfi', '-i', `testsrc2=s=${options.width}x${options.height}:r=${options.fps}:d=${options.seconds}`,
      '-f', 'lavfi', '-i', `sine=frequency=440:d=${options.seconds}`,
      '-c:v', 'libx264', '-preset', 'ultrafast', '-g', String(options.gopFrames), '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', '-movflags', '+faststart', path,
    ]);
    return path;
  }

  /** Words every 500 ms (300 ms long) from `fromMs`, a sentence of `perSentence` words at a time. */
  function wordsFrom(fromMs: number, count: number, perSentence = 4, gapAfterSentenceMs = 0): TranscriptWord[] {
    const words: TranscriptWord[] = [];
    let at = fromMs;
    for (let index = 0; index < count; index++) {
      const last = (index + 1) % perSentence === 0;
      words.push({ word: `word${index}${last ? '.' : ''}`, start_ms: at, end_ms: at + 300, confidence: 0.9, source_index: 0 });
      at += 500 + (last ? gapAfterSentenceMs : 0);
    }
    return words;
  }

  /** A completed analysis run with these words and edits, made the active one (the rows the analysis writes). */
  async function analyse(owner: SignedIn, projectId: string, words: TranscriptWord[], edits: { type: string; start_ms: number; end_ms: number; active: boolean; reason: string }[]): Promise<void> {
    const em = app.services.orm.em.fork();
    const project = await em.findOneOrFail(Project, projectId);
    const analysis = completedRun(em, project, owner.user.id, words);
    for (const edit of edits) {
      em.create(Edit, { id: randomUUID(), project, runId: edit.type === 'manual' ? null : analysis.id, type: edit.type, startMs: edit.start_ms, endMs: edit.end_ms, active: edit.active, reason: edit.reason });
    }
    await em.flush();
    await em.nativeUpdate(Project, { id: projectId }, { activeRunId: analysis.id, status: 'analyzed' });
  }

  async function timeline(owner: SignedIn, projectId: string, query: string): Promise<TimelineBody> {
    const response = await owner.client.get(`/api/v1/projects/${projectId}/timeline?${query}`);
    expect(response.status, await response.clone().text()).to.equal(200);
    return (await json(response)) as TimelineBody;
  }

  async function exportAndDownload(owner: SignedIn, projectId: string, body: Record<string, unknown>): Promise<{ exportId: string; path: string; download: { filename: string; sidecars: { format: string; filename: string; path: string }[] } }> {
    const created = await owner.client.post(`/api/v1/projects/${projectId}/exports/`, body);
    expect(created.status, await created.clone().text()).to.equal(202);
    const exportId = (await json(created)).uuid as string;
    await eventually(async () => {
      const row = await app.services.orm.em.fork().findOneOrFail(Export, exportId);
      if (row.status === 'failed') throw new Error(`render failed: ${row.error}`);
      return row.status === 'completed' ? row : undefined;
    }, 'export completed', 240_000);
    const download = await json(await owner.client.get(`/api/v1/exports/${exportId}/download`));
    const path = join(dir, `export-${exportId}.mp4`);
    await writeFile(path, Buffer.from(await (await fetch(download.url)).arrayBuffer()));
    return { exportId, path, download };
  }

  async function frameCount(path: string): Promise<number> {
    const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-count_frames', '-show_entries', 'stream=nb_read_frames', '-of', 'csv=p=0', path]);
    return Number(stdout.trim());
  }

  /** PSNR (dB, average over planes) of every frame pair, by output frame number. */
  async function psnrByFrame(a: string, b: string, width: number, height: number): Promise<number[]> {
    const stats = join(dir, `psnr-${randomUUID()}.log`);
    await run('ffmpeg', ['-v', 'error', '-i', a, '-i', b, '-lavfi', `[0:v]scale=${width}:${height},setpts=N[a];[1:v]scale=${width}:${height},setpts=N[b];[a][b]psnr=stats_file=${stats}`, '-f', 'null', '-']);
    return (await readFile(stats, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => {
        const value = /psnr_avg:(\S+)/.exec(line)![1]!;
        return value === 'inf' ? Infinity : Number(value);
      });
  }

  it('the artifact program records a video\'s frame rate as a rational: 25/1 and 30000/1001 (not 29.97)', async () => {
    const pal = await projectWithVideo(user, { seconds: 2, fps: 25 });
    const ntsc = await projectWithVideo(user, { seconds: 2, fps: 30000 / 1001 });
    const em = app.services.orm.em.fork();
    expect(await em.findOneOrFail(MediaFile, pal.fileId)).to.deep.include({ frameRateNum: 25, frameRateDen: 1 });
    expect(await em.findOneOrFail(MediaFile, ntsc.fileId)).to.deep.include({ frameRateNum: 30000, frameRateDen: 1001 });
  });

  it("the MLT export rendered headless by melt has the frame count of Cutroom's own cut-only render of the same edit, with matching frames at every join (PSNR ≥ 35 dB)", async () => {
    const { projectId, path, name } = await projectWithVideo(user, { seconds: 6, fps: 25, width: 1280, height: 720 });
    // cut points on the 25 fps grid; the false start is offered, not applied, and still plays
    await analyse(user, projectId, wordsFrom(0, 10), [
      { type: 'silence', start_ms: 1200, end_ms: 2000, active: true, reason: 'pause 0.8 s' },
      { type: 'false_start', start_ms: 2400, end_ms: 2800, active: false, reason: "false start: 'so I'" },
      { type: 'manual', start_ms: 3600, end_ms: 4480, active: true, reason: 'cough' },
    ]);
    const mediaRoot = join(dir, 'media');
    await run('mkdir', ['-p', mediaRoot]);
    await copyFile(path, join(mediaRoot, name));
    const body = await timeline(user, projectId, `format=mlt&source_ref=path&media_root=${encodeURIComponent(mediaRoot)}`);
    expect(body.frame_rate).to.deep.equal({ num: 25, den: 1 });
    expect(body.segments.map((segment) => [segment.source_in, segment.record_in, segment.duration])).to.deep.equal([
      [0, 0, 30],
      [50, 30, 40],
      [112, 70, 38],
    ]);
    const mlt = join(dir, 'edit.mlt');
    await writeFile(mlt, body.content);
    const melted = join(dir, 'melt.mp4');
    await run('melt', ['-quiet', mlt, '-consumer', `avformat:${melted}`, 'vcodec=libx264', 'crf=12', 'acodec=aac'], { maxBuffer: 16 * 1024 * 1024 });

    const rendered = await exportAndDownload(user, projectId, { name: 'Cut', export_settings: { resolution: '720p' } });
    const [meltFrames, renderFrames] = [await frameCount(melted), await frameCount(rendered.path)];
    expect(meltFrames).to.equal(renderFrames);
    expect(meltFrames).to.equal(108);
    const psnr = await psnrByFrame(melted, rendered.path, 1280, 720);
    const joins = [30, 70];
    const atJoins = joins.flatMap((frame) => [frame - 1, frame]).map((frame) => psnr[frame]!);
    console.log(`      melt vs render: ${meltFrames} frames each; PSNR at the joins (frames 29, 30, 69, 70): ${atJoins.map((value) => value.toFixed(2)).join(', ')} dB; lowest of all frames ${Math.min(...psnr).toFixed(2)} dB`);
    for (const value of atJoins) expect(value).to.be.at.least(35);
    expect(Math.min(...psnr)).to.be.at.least(35);

    // the completed export's download names its sidecar files, each served re-timed to its cut
    const stem = rendered.download.filename.replace(/\.mp4$/, '');
    expect(rendered.download.sidecars.map((sidecar) => sidecar.filename)).to.deep.equal([`${stem}.srt`, `${stem}.vtt`, `${stem}.words.json`, `${stem}.chapters.txt`]);
    const srt = await user.client.get(rendered.download.sidecars[0]!.path);
    expect(srt.status, await srt.clone().text()).to.equal(200);
    expect(srt.headers.get('content-disposition')).to.include('.srt');
    expect(await srt.text()).to.match(/^1\n00:00:00,000 --> /);
  });

  /** The frames of the edit in every timeline file: the answer's count, and the main track read back from each format; melt's render of the MLT. */
  async function timelineFrames(owner: SignedIn, projectId: string, path: string, name: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    const mediaRoot = join(dir, `media-${randomUUID().slice(0, 8)}`);
    await run('mkdir', ['-p', mediaRoot]);
    await copyFile(path, join(mediaRoot, name));
    for (const format of ['fcpxml', 'xmeml', 'mlt', 'edl', 'otio']) {
      const body = await timeline(owner, projectId, `format=${format}&source_ref=path&media_root=${encodeURIComponent(mediaRoot)}`);
      counts[`${format} duration_frames`] = body.duration_frames;
      counts[`${format} clips`] = keptOf(format, body.content, body.frame_rate).reduce((sum, [, , duration]) => sum + duration!, 0);
      if (format === 'mlt') {
        const mlt = join(dir, `edit-${randomUUID().slice(0, 8)}.mlt`);
        await writeFile(mlt, body.content);
        const melted = join(dir, `melt-${randomUUID().slice(0, 8)}.mp4`);
        await run('melt', ['-quiet', mlt, '-consumer', `avformat:${melted}`, 'vcodec=libx264', 'preset=ultrafast', 'an=1'], { maxBuffer: 16 * 1024 * 1024 });
        counts['melt render of the mlt'] = await frameCount(melted);
      }
    }
    return counts;
  }

  it('a 40-second talk with three silence cuts has as many frames in the MP4 as in every timeline file', async () => {
    const { projectId, path, name } = await projectWithVideo(user, { seconds: 40, fps: 30, width: 1280, height: 720, gopFrames: 30 });
    // the third cut starts at 23,210 ms, between frames 696 (23,200 ms) and 697: the nearest edge is 696's start, so frame 696 is cut
    await analyse(user, projectId, wordsFrom(0, 60), [
      { type: 'silence', start_ms: 5_000, end_ms: 6_150, active: true, reason: 'pause 1.2 s' },
      { type: 'silence', start_ms: 12_400, end_ms: 13_900, active: true, reason: 'pause 1.5 s' },
      { type: 'silence', start_ms: 23_210, end_ms: 24_700, active: true, reason: 'pause 1.5 s' },
    ]);
    const files = await timelineFrames(user, projectId, path, name);
    const cutOnly = await exportAndDownload(user, projectId, { name: 'Cut', export_settings: { resolution: '720p' } });
    const flipped = await exportAndDownload(user, projectId, { name: 'Flipped', export_settings: { resolution: '720p', video_flip_h: true } });
    const paths = await Promise.all([cutOnly, flipped].map(async ({ exportId }) => (await app.services.orm.em.fork().findOneOrFail(Export, exportId)).renderPath));
    expect(paths).to.deep.equal(['smart', 'full']);
    const mp4 = { 'MP4, smart path': await frameCount(cutOnly.path), 'MP4, full render': await frameCount(flipped.path) };
    console.log(`      frames: ${JSON.stringify({ ...mp4, ...files })}`);
    // 1200 frames less 35 + 45 + 45 cut
    for (const [what, frames] of Object.entries({ ...mp4, ...files })) expect(frames, what).to.equal(1075);
  });

  it('two manual cuts 10 ms apart leave no flash frame', async () => {
    const { projectId, path, name } = await projectWithVideo(user, { seconds: 4, fps: 30, width: 1280, height: 720, gopFrames: 15 });
    await analyse(user, projectId, wordsFrom(0, 8), [
      { type: 'manual', start_ms: 1_000, end_ms: 1_500, active: true, reason: 'cough' },
      { type: 'manual', start_ms: 1_510, end_ms: 2_000, active: true, reason: 'cough' },
    ]);
    const files = await timelineFrames(user, projectId, path, name);
    const rendered = await exportAndDownload(user, projectId, { name: 'Cut', export_settings: { resolution: '720p' } });
    const job = await app.services.orm.em.fork().findOneOrFail(Job, { subjectId: rendered.exportId });
    const input = job.input as unknown as RenderRequestInput;
    // the 10 ms between the cuts (source frame 45 would have shown alone) is cut with them
    expect(input.segments.map((segment) => [segment.sourceStartMs, segment.sourceEndMs])).to.deep.equal([[0, 1_000], [2_000, 4_000]]);
    const frames = { MP4: await frameCount(rendered.path), ...files };
    console.log(`      frames: ${JSON.stringify(frames)}`);
    for (const [what, count] of Object.entries(frames)) expect(count, what).to.equal(90);
    // the MP4's frame 30 (right after the first cut) is source frame 60, not a flash of frame 45
    const [asKept, asSliver] = [await framePsnr(rendered.path, 30, path, 60), await framePsnr(rendered.path, 30, path, 45)];
    console.log(`      MP4 frame 30 against source frame 60: ${asKept.toFixed(1)} dB, against source frame 45: ${asSliver.toFixed(1)} dB`);
    expect(asKept).to.be.at.least(35);
    expect(asSliver).to.be.below(asKept - 10);
  });

  /** PSNR (dB) of frame `frameA` of one file against frame `frameB` of another. */
  async function framePsnr(a: string, frameA: number, b: string, frameB: number): Promise<number> {
    const { stderr } = await run('ffmpeg', ['-hide_banner', '-i', a, '-i', b, '-lavfi', `[0:v]select=eq(n\\,${frameA}),setpts=N[x];[1:v]select=eq(n\\,${frameB}),setpts=N[y];[x][y]psnr`, '-f', 'null', '-']);
    const value = /PSNR .* average:(\S+)/.exec(stderr)![1]!;
    return value === 'inf' ? Infinity : Number(value);
  }

  it('every format reads back (independent parsers, xmllint for XML well-formedness) to the same kept segments, frame-exact on 30000/1001, the rate kept rational', async () => {
    const { projectId } = await projectWithVideo(user, { seconds: 5, fps: 30000 / 1001 });
    await analyse(user, projectId, wordsFrom(0, 8), [
      { type: 'silence', start_ms: 1000, end_ms: 1734, active: true, reason: 'pause 0.7 s' },
      { type: 'filler', start_ms: 3000, end_ms: 3333, active: true, reason: "filler: 'um'" },
    ]);
    const rate = { num: 30000, den: 1001 };
    const frames = (ms: number) => Math.round((ms * rate.num) / (1000 * rate.den));
    const expected = [
      [0, 0, frames(1000)],
      [frames(1734), frames(1000), frames(3000) - frames(1734)],
      [frames(3333), frames(1000) + frames(3000) - frames(1734), frames(5000) - frames(3333)],
    ];
    for (const format of ['fcpxml', 'xmeml', 'mlt', 'edl', 'otio']) {
      const body = await timeline(user, projectId, `format=${format}`);
      expect(body.frame_rate, format).to.deep.equal(rate);
      expect(body.segments.filter((segment) => segment.track === 'main').map((segment) => [segment.source_in, segment.record_in, segment.duration]), format).to.deep.equal(expected);
      expect(keptOf(format, body.content, rate), format).to.deep.equal(expected);
      if (format !== 'edl' && format !== 'otio') {
        const file = join(dir, `wellformed.${format}`);
        await writeFile(file, body.content);
        await run('xmllint', ['--noout', file]);
      }
    }
    const fcp = xmlParser.parse((await timeline(user, projectId, 'format=fcpxml')).content);
    expect(fcp.fcpxml.resources.format.frameDuration).to.equal('1001/30000s');
    const xm = xmlParser.parse((await timeline(user, projectId, 'format=xmeml')).content);
    expect(xm.xmeml.sequence.rate).to.deep.equal({ timebase: '30', ntsc: 'TRUE' });
    const mlt = xmlParser.parse((await timeline(user, projectId, 'format=mlt')).content);
    expect(mlt.mlt.profile).to.include({ frame_rate_num: '30000', frame_rate_den: '1001' });
    const otio = await timeline(user, projectId, 'format=otio');
    expect(JSON.parse(otio.content).metadata.cutroom.rate).to.equal('30000/1001');
    expect(otio.unexpressed.join(' ')).to.match(/floating-point/);
    const edl = await timeline(user, projectId, 'format=edl');
    expect(edl.content).to.match(/^TITLE: /).and.match(/FCM: NON-DROP FRAME/);
    // CMX 3600 event lines: number, reel of at most 8 characters, channel, transition, four timecodes
    for (const line of edl.content.split('\r\n').filter((candidate) => /^\d{3} /.test(candidate))) expect(line).to.match(/^\d{3} {2}[A-Z0-9_]{1,8} +[VA] +C +(\d\d:\d\d:\d\d:\d\d ?){4}$/);
    expect(edl.unexpressed.join(' ')).to.match(/whole frames per second/);
  });

  it('attack: CR/LF in an edit\'s reason, in media_root and in a caption line write no line of their own into the EDL, SRT or WebVTT', async () => {
    const { projectId } = await projectWithVideo(user, { seconds: 4, fps: 25 });
    const fakeEvent = '\r\n099  AX001    V     C        00:00:00:00 00:00:01:00 00:00:00:00 00:00:01:00\r\n';
    await analyse(user, projectId, wordsFrom(0, 6, 3), [{ type: 'silence', start_ms: 1000, end_ms: 1600, active: true, reason: `pause${fakeEvent}` }]);
    const clean = (await timeline(user, projectId, 'format=edl&source_ref=path&media_root=/media')).content;
    const attacked = (await timeline(user, projectId, `format=edl&source_ref=path&media_root=${encodeURIComponent(`/media${fakeEvent}\u2028\u0085`)}`)).content;
    const eventLines = (edl: string) => edl.split('\r\n').filter((line) => /^\d{3} /.test(line));
    expect(eventLines(attacked)).to.deep.equal(eventLines(clean)).and.to.have.lengthOf(4);
    // every line is a title, a comment, an event or blank; none holds a control character
    for (const line of attacked.split('\r\n')) {
      expect(line).to.match(/^(TITLE: |FCM: |\* |\d{3} {2}|$)/);
      expect(line).not.to.match(/[\p{Cc}\u2028\u2029]/u);
    }

    expect((await user.client.post(`/api/v1/projects/${projectId}/caption-lines/generate`)).status).to.equal(200);
    const lines = (await json(await user.client.get(`/api/v1/projects/${projectId}/caption-lines`))).data as { uuid: string }[];
    expect(lines.length).to.be.greaterThan(1);
    const patched = await user.client.patch(`/api/v1/caption-lines/${lines[0]!.uuid}`, { text: 'hello\n\n9\n00:00:00,000 --> 00:00:09,000\rinjected\u2028cue\u000bhere' });
    expect(patched.status, await patched.clone().text()).to.equal(200);
    for (const format of ['srt', 'vtt']) {
      const response = await user.client.get(`/api/v1/projects/${projectId}/captions?format=${format}`);
      expect(response.status, await response.clone().text()).to.equal(200);
      const text = await response.text();
      const file = join(dir, `injected.${format}`);
      await writeFile(file, text);
      const { stdout } = await run('ffprobe', ['-v', 'error', '-f', format === 'srt' ? 'srt' : 'webvtt', '-show_packets', '-of', 'json', file]);
      expect(JSON.parse(stdout).packets, format).to.have.lengthOf(lines.length);
      expect(text.split('\n').filter((line) => line.includes('-->')), format).to.have.lengthOf(lines.length);
      for (const control of ['\r', '\u000b', '\u2028']) expect(text).not.to.include(control);
    }
  });

  it('video and audio on their own tracks; every cut edit a marker with its type and reason, applied and offered alike', async () => {
    const { projectId } = await projectWithVideo(user, { seconds: 4, fps: 25 });
    await analyse(user, projectId, wordsFrom(0, 6), [
      { type: 'silence', start_ms: 1000, end_ms: 1600, active: true, reason: 'pause 0.6 s' },
      { type: 'false_start', start_ms: 2000, end_ms: 2400, active: false, reason: "false start: 'we'" },
    ]);
    const xm = xmlParser.parse((await timeline(user, projectId, 'format=xmeml')).content);
    expect(xm.xmeml.sequence.media.video.track[0].clipitem).to.have.lengthOf(2);
    expect(xm.xmeml.sequence.media.audio.track[0].clipitem).to.have.lengthOf(2);
    const names = xm.xmeml.sequence.marker.filter((marker: { comment: string }) => marker.comment !== 'chapter').map((marker: { name: string; in: string; out: string; comment: string }) => [marker.name, Number(marker.in), Number(marker.out)]);
    expect(names).to.deep.equal([
      ['silence: pause 0.6 s', 25, -1],
      ["false start: 'we'", 35, 45],
    ]);
    expect(xm.xmeml.sequence.marker[1].comment).to.match(/not applied/);
    const otio = JSON.parse((await timeline(user, projectId, 'format=otio')).content);
    expect(otio.tracks.children.map((track: { name: string; kind: string }) => `${track.name}:${track.kind}`)).to.deep.equal(['V1:Video', 'A1:Audio']);
    expect(otio.tracks.markers.map((marker: { metadata: { cutroom: { type: string; state: string; reason: string } } }) => marker.metadata.cutroom)).to.deep.include.members([
      { type: 'silence', reason: 'pause 0.6 s', state: 'applied', edit_id: otio.tracks.markers[0].metadata.cutroom.edit_id },
    ]);
    const fcp = (await timeline(user, projectId, 'format=fcpxml')).content;
    expect(fcp).to.include('value="silence: pause 0.6 s"').and.include(`value="false start: 'we'"`).and.not.include('false_start: false start');
    const mlt = (await timeline(user, projectId, 'format=mlt')).content;
    expect(mlt).to.include('shotcut:markers').and.include('silence: pause 0.6 s');
    const edl = (await timeline(user, projectId, 'format=edl')).content;
    expect(edl).to.match(/\* LOC: 00:00:01:00 RED {4}silence: pause 0\.6 s \[applied\]/);
  });

  it('an overlay asset goes on an upper track (V2, FCPXML lane 1) where the format has one; the EDL says it left it out; its look is listed as not carried', async () => {
    const { projectId } = await projectWithVideo(user, { seconds: 4, fps: 25 });
    const assetPath = await makeVideo(dir, `broll-${randomUUID().slice(0, 8)}.mp4`, { width: 320, height: 180, seconds: 2, fps: 25 });
    const asset = await uploadMedia(user.client, assetPath, { contentType: 'video/mp4', scope: 'library' });
    await fileWhen(app.services.orm, asset.mediaFileId, (file) => file.status === 'UPLOADED', 60_000);
    const edit = await user.client.post(`/api/v1/projects/${projectId}/edits/`, { type: 'asset', start_ms: 1000, end_ms: 2000, media_item_id: asset.mediaItemId, visual_mode: 'overlay', audio_mode: 'mix' });
    expect(edit.status, await edit.clone().text()).to.equal(201);
    const xm = xmlParser.parse((await timeline(user, projectId, 'format=xmeml')).content);
    expect(xm.xmeml.sequence.media.video.track).to.have.lengthOf(2);
    expect(xm.xmeml.sequence.media.video.track[1].clipitem.map((item: Record<string, string>) => [Number(item.start), Number(item.end), Number(item.in)])).to.deep.equal([[25, 50, 0]]);
    const otio = JSON.parse((await timeline(user, projectId, 'format=otio')).content);
    expect(otio.tracks.children.map((track: { name: string }) => track.name)).to.deep.equal(['V1', 'V2', 'A1', 'A2']);
    const fcp = xmlParser.parse((await timeline(user, projectId, 'format=fcpxml')).content);
    expect(fcp.fcpxml.library.event.project.sequence.spine['asset-clip'][0]['asset-clip'][0]).to.include({ lane: '1', offset: '1s', duration: '1s' });
    const mlt = xmlParser.parse((await timeline(user, projectId, 'format=mlt')).content);
    expect(mlt.mlt.playlist.map((playlist: { id: string }) => playlist.id)).to.include.members(['V2', 'A2']);
    const edl = await timeline(user, projectId, 'format=edl');
    expect(edl.unexpressed.join(' ')).to.match(/overlay clips are left out/);
    expect(edl.unexpressed.join(' ')).to.match(/Overlay geometry/);
  });

  it('an inserted asset goes on the first upper track over a gap of the main one (FCPXML: a gap with the clip on lane 1), melt plays it where the render does; an overlay goes on the track above; the EDL keeps the insert as an event in place', async () => {
    const { projectId, path, name } = await projectWithVideo(user, { seconds: 3, fps: 25, width: 1280, height: 720 });
    const assetName = `insert-${randomUUID().slice(0, 8)}.mp4`;
    const assetPath = await makeVideo(dir, assetName, { width: 1280, height: 720, seconds: 2, fps: 25 });
    const asset = await uploadMedia(user.client, assetPath, { contentType: 'video/mp4', scope: 'library' });
    await fileWhen(app.services.orm, asset.mediaFileId, (file) => file.status === 'UPLOADED', 60_000);
    const inserted = await user.client.post(`/api/v1/projects/${projectId}/edits/`, { type: 'asset', start_ms: 1000, end_ms: 2000, media_item_id: asset.mediaItemId, visual_mode: 'insert', audio_mode: 'replace' });
    expect(inserted.status, await inserted.clone().text()).to.equal(201);

    const mediaRoot = join(dir, `media-${randomUUID().slice(0, 8)}`);
    await run('mkdir', ['-p', mediaRoot]);
    await copyFile(path, join(mediaRoot, name));
    await copyFile(assetPath, join(mediaRoot, assetName));
    const body = await timeline(user, projectId, `format=mlt&source_ref=path&media_root=${encodeURIComponent(mediaRoot)}`);
    // 1 s of the talk, then 1 s of the asset, then the talk's last 2 s: the insert pushes what follows
    expect(body.segments.map((segment) => [segment.track, segment.source_in, segment.record_in, segment.duration])).to.deep.equal([
      ['main', 0, 0, 25],
      ['insert', 0, 25, 25],
      ['main', 25, 50, 50],
    ]);
    const mlt = xmlParser.parse(body.content);
    const playlist = (id: string) => mlt.mlt.playlist.find((candidate: { id: string }) => candidate.id === id);
    expect(playlist('V1').blank.map((blank: { length: string }) => Number(blank.length))).to.deep.equal([25]);
    expect(playlist('V2').entry).to.have.lengthOf(1);
    expect(playlist('A2').entry).to.have.lengthOf(1);
    const mltPath = join(dir, `insert-${randomUUID().slice(0, 8)}.mlt`);
    await writeFile(mltPath, body.content);
    const melted = join(dir, `melt-insert-${randomUUID().slice(0, 8)}.mp4`);
    await run('melt', ['-quiet', mltPath, '-consumer', `avformat:${melted}`, 'vcodec=libx264', 'crf=12', 'acodec=aac'], { maxBuffer: 16 * 1024 * 1024 });
    const rendered = await exportAndDownload(user, projectId, { name: 'Insert', export_settings: { resolution: '720p' } });
    const [meltFrames, renderFrames] = [await frameCount(melted), await frameCount(rendered.path)];
    expect(meltFrames).to.equal(renderFrames);
    expect(meltFrames).to.equal(100);
    const psnr = await psnrByFrame(melted, rendered.path, 1280, 720);
    const atJoins = [24, 25, 49, 50].map((frame) => psnr[frame]!);
    console.log(`      melt vs render with an insert on V2: ${meltFrames} frames each; PSNR at the joins (frames 24, 25, 49, 50): ${atJoins.map((value) => value.toFixed(2)).join(', ')} dB; lowest of all frames ${Math.min(...psnr).toFixed(2)} dB`);
    expect(Math.min(...psnr)).to.be.at.least(35);

    // an overlay over the talk's end goes on the track above the inserts'
    const overlay = await user.client.post(`/api/v1/projects/${projectId}/edits/`, { type: 'asset', start_ms: 2000, end_ms: 2500, media_item_id: asset.mediaItemId, visual_mode: 'overlay', audio_mode: 'mute' });
    expect(overlay.status, await overlay.clone().text()).to.equal(201);
    const xm = xmlParser.parse((await timeline(user, projectId, 'format=xmeml')).content);
    const spans = (track: { clipitem: Record<string, string>[] }) => track.clipitem.map((item) => [Number(item.start), Number(item.end), Number(item.in)]);
    expect(xm.xmeml.sequence.media.video.track.map(spans)).to.deep.equal([[[0, 25, 0], [50, 100, 25]], [[25, 50, 0]], [[75, 88, 0]]]);
    expect(xm.xmeml.sequence.media.audio.track.map(spans)).to.deep.equal([[[0, 25, 0], [50, 100, 25]], [[25, 50, 0]]]);
    const fcp = xmlParser.parse((await timeline(user, projectId, 'format=fcpxml')).content);
    const spine = fcp.fcpxml.library.event.project.sequence.spine;
    expect(spine['asset-clip'].map((clip: Record<string, string>) => [clip.offset, clip.duration])).to.deep.equal([['0s', '1s'], ['2s', '2s']]);
    expect(spine.gap).to.include({ offset: '1s', duration: '1s', start: '0s' });
    expect(spine.gap['asset-clip'][0]).to.include({ lane: '1', offset: '0s', start: '0s', duration: '1s' });
    expect(spine['asset-clip'][1]['asset-clip'][0]).to.include({ lane: '2', offset: '2s' });
    const otio = JSON.parse((await timeline(user, projectId, 'format=otio')).content);
    expect(otio.tracks.children.map((track: { name: string; children: { OTIO_SCHEMA: string }[] }) => `${track.name}:${track.children.map((child) => child.OTIO_SCHEMA.split('.')[0]).join(',')}`)).to.deep.equal([
      'V1:Clip,Gap,Clip',
      'V2:Gap,Clip',
      'V3:Gap,Clip',
      'A1:Clip,Gap,Clip',
      'A2:Gap,Clip',
    ]);
    const edl = await timeline(user, projectId, 'format=edl');
    const videoEvents = edl.content.split('\r\n').filter((line) => /^\d{3}\s+\S+\s+V\s+C\s/.test(line)).map((line) => line.trim().split(/\s+/)[1]);
    expect(videoEvents).to.deep.equal(['AX001', 'AX002', 'AX001']);
    expect(edl.unexpressed.join(' ')).to.match(/inserted assets are events on it/).and.match(/overlay clips are left out/);
  });

  it("a source whose upload folded onto another user's identical file is named as its owner uploaded it: no timeline shows the other user's file name or file id", async () => {
    const earlier = await signUpAndLogin(app, { tier: 'Creator' });
    const first = await projectWithVideo(earlier, { seconds: 2, fps: 25 });
    const projectId = (await json(await user.client.post('/api/v1/projects/', { name: 'Same bytes' }))).uuid as string;
    const mine = await uploadMedia(user.client, first.path, { contentType: 'video/mp4', scopeProjectId: projectId, filename: 'my-own-take.mp4' });
    const folded = await eventually(async () => {
      const item = await app.services.orm.em.fork().findOne(MediaItem, mine.mediaItemId, { populate: ['file'] });
      return item?.file.id === first.fileId && item.file.status === 'UPLOADED' ? item : undefined;
    }, 'the upload folded onto the stored file', 60_000);
    expect(folded.uploadedFilename).to.equal('my-own-take.mp4');
    for (const format of ['otio', 'fcpxml', 'xmeml', 'mlt', 'edl']) {
      const body = await timeline(user, projectId, `format=${format}`);
      expect(body.content, format).to.include('my-own-take.mp4').and.not.include(first.name).and.not.include(first.fileId);
      expect(body.segments.map((segment) => segment.source), format).to.deep.equal(['my-own-take.mp4']);
    }
    const otio = JSON.parse((await timeline(user, projectId, 'format=otio')).content);
    expect(otio.tracks.children[0].children[0].metadata.cutroom.source_id).to.equal(mine.mediaFileId);
  });

  it('a draft and inline edit_overrides give their own cut, through the same resolution as an export', async () => {
    const { projectId } = await projectWithVideo(user, { seconds: 4, fps: 25 });
    await analyse(user, projectId, wordsFrom(0, 6), [{ type: 'silence', start_ms: 1000, end_ms: 2000, active: true, reason: 'pause 1.0 s' }]);
    const editId = (await app.services.orm.em.fork().findOneOrFail(Edit, { project: projectId })).id;
    const active = await timeline(user, projectId, 'format=otio');
    expect(active.duration_frames).to.equal(75);
    const inline = await user.client.post(`/api/v1/projects/${projectId}/timeline`, { format: 'otio', edit_overrides: { [editId]: { active: false } } });
    expect(inline.status, await inline.clone().text()).to.equal(200);
    expect((await json(inline)).duration_frames).to.equal(100);
    const draft = await user.client.post(`/api/v1/projects/${projectId}/drafts/`, { name: 'Longer', edit_overrides: { [editId]: { end_ms: 1520 } } });
    expect(draft.status, await draft.clone().text()).to.equal(201);
    const draftId = (await json(draft)).uuid as string;
    const drafted = await timeline(user, projectId, `format=otio&draft_id=${draftId}`);
    expect(drafted.duration_frames).to.equal(87);
    const both = await user.client.post(`/api/v1/projects/${projectId}/timeline`, { format: 'otio', draft_id: draftId, edit_overrides: {} });
    expect(both.status).to.equal(422);
  });

  it('SRT and WebVTT read back by ffmpeg: every cue inside kept time, in order, at the burned-in captions\' times of a render of the same edit; the words file in output time', async () => {
    const { projectId } = await projectWithVideo(user, { seconds: 8, fps: 25 });
    const words = wordsFrom(0, 16, 4);
    await analyse(user, projectId, words, [{ type: 'silence', start_ms: 2000, end_ms: 3000, active: true, reason: 'pause 1.0 s' }]);
    const created = await user.client.post(`/api/v1/projects/${projectId}/exports/`, { name: 'Captioned', export_settings: { resolution: '720p', captions: { enabled: true } } });
    expect(created.status, await created.clone().text()).to.equal(202);
    const exportId = (await json(created)).uuid as string;
    const job = await app.services.orm.em.fork().findOneOrFail(Job, { subjectId: exportId });
    const input = job.input as unknown as RenderRequestInput;
    const burned = (input.captions ?? []).map((caption) => [caption.outStartMs, caption.outEndMs, caption.text]);
    expect(burned.length).to.be.greaterThan(1);
    const outputMs = 7000;
    for (const format of ['srt', 'vtt']) {
      const response = await user.client.get(`/api/v1/projects/${projectId}/captions?format=${format}&export_id=${exportId}`);
      expect(response.status, await response.clone().text()).to.equal(200);
      const file = join(dir, `cues.${format}`);
      await writeFile(file, await response.text());
      const { stdout } = await run('ffprobe', ['-v', 'error', '-f', format === 'srt' ? 'srt' : 'webvtt', '-show_packets', '-show_entries', 'packet=pts_time,duration_time', '-of', 'json', file]);
      const cues = (JSON.parse(stdout).packets as { pts_time: string; duration_time: string }[]).map((packet) => [Math.round(Number(packet.pts_time) * 1000), Math.round((Number(packet.pts_time) + Number(packet.duration_time)) * 1000)] as [number, number]);
      expect(cues).to.have.lengthOf(burned.length);
      cues.forEach(([start, end], index) => {
        expect(start, `${format} cue ${index}`).to.be.at.least(index === 0 ? 0 : cues[index - 1]![1]);
        expect(end).to.be.greaterThan(start).and.at.most(outputMs);
        expect(Math.abs(start - (burned[index]![0] as number)), `${format} cue ${index} start`).to.be.at.most(40);
        expect(Math.abs(end - (burned[index]![1] as number)), `${format} cue ${index} end`).to.be.at.most(40);
      });
    }
    const wordsFile = await json(await user.client.get(`/api/v1/projects/${projectId}/captions?format=words`));
    expect(wordsFile.duration_ms).to.equal(outputMs);
    // word4 (2000–2300) and word5 (2500–2800) are inside the cut; word6 said at 3000 plays at 2000
    expect(wordsFile.words.map((word: { word: string }) => word.word)).to.not.include.members(['word4', 'word5']);
    expect(wordsFile.words.find((word: { word: string }) => word.word === 'word6')).to.include({ start_ms: 2000, end_ms: 2300, timeline_start_ms: 3000 });
    for (const [index, word] of wordsFile.words.entries()) if (index > 0) expect(word.start_ms).to.be.at.least(wordsFile.words[index - 1].end_ms);
  });

  it('chapters: YouTube lines, the first at 00:00, each at least 10 s, starting after long pauses at sentence starts; also as chapter markers in FCPXML', async () => {
    const { projectId } = await projectWithVideo(user, { seconds: 40, fps: 25, width: 320, height: 180 });
    // sentences of 4 words (2 s) each followed by 1.6 s of silence: a chapter may start at any sentence, at most every 10 s
    await analyse(user, projectId, wordsFrom(0, 40, 4, 1600), []);
    const response = await user.client.get(`/api/v1/projects/${projectId}/captions?format=chapters`);
    expect(response.status).to.equal(200);
    const lines = (await response.text()).trim().split('\n');
    expect(lines[0]).to.match(/^00:00 Word0 word1 word2 word3$/);
    const seconds = lines.map((line) => /^(\d\d):(\d\d) \S/.exec(line)!).map((match) => Number(match[1]) * 60 + Number(match[2]));
    expect(seconds.length).to.be.at.least(3);
    for (let index = 1; index < seconds.length; index++) expect(seconds[index]! - seconds[index - 1]!).to.be.at.least(10);
    expect(40 - seconds.at(-1)!).to.be.at.least(10);
    const fcp = xmlParser.parse((await timeline(user, projectId, 'format=fcpxml')).content);
    const clip = fcp.fcpxml.library.event.project.sequence.spine['asset-clip'][0];
    expect(clip['chapter-marker']).to.have.lengthOf(seconds.length);
  });

  it('bad input: an unknown format → 422 listing the formats; no media → 400; a source processing → 409; another user\'s project → 404; a read writes nothing', async () => {
    const { projectId } = await projectWithVideo(user, { seconds: 2, fps: 25 });
    const unknown = await user.client.get(`/api/v1/projects/${projectId}/timeline?format=aaf`);
    expect(unknown.status).to.equal(422);
    const unknownText = await unknown.text();
    for (const format of ['fcpxml', 'xmeml', 'mlt', 'edl', 'otio']) expect(unknownText).to.include(format);
    const unknownCaption = await user.client.get(`/api/v1/projects/${projectId}/captions?format=ass`);
    expect(unknownCaption.status).to.equal(422);
    for (const format of ['srt', 'vtt', 'words', 'chapters']) expect(await unknownCaption.clone().text()).to.include(format);

    const empty = (await json(await user.client.post('/api/v1/projects/', { name: 'Empty' }))).uuid as string;
    expect((await user.client.get(`/api/v1/projects/${empty}/timeline?format=edl`)).status).to.equal(400);
    const processing = await projectWithSources(app, user, [null]);
    const busy = await user.client.get(`/api/v1/projects/${processing}/timeline?format=edl`);
    expect(busy.status).to.equal(409);
    expect((await json(busy)).detail ?? (await busy.clone().text())).to.match(/processed/);
    const stranger = await signUpAndLogin(app);
    expect((await stranger.client.get(`/api/v1/projects/${projectId}/timeline?format=edl`)).status).to.equal(404);
    expect((await stranger.client.get(`/api/v1/projects/${projectId}/captions?format=srt`)).status).to.equal(404);
    const unanalysed = await user.client.get(`/api/v1/projects/${projectId}/captions?format=srt`);
    expect(unanalysed.status).to.equal(409);
    const both = await user.client.get(`/api/v1/projects/${projectId}/captions?format=srt&draft_id=${randomUUID()}&export_id=${randomUUID()}`);
    expect(both.status).to.equal(422);
    expect((await stranger.client.get(`/api/v1/projects/${projectId}/captions?format=srt&draft_id=${randomUUID()}&export_id=${randomUUID()}`)).status).to.equal(404);

    const counts = async () => {
      const rows = await app.services.orm.em.fork().getConnection().execute<{ n: string }[]>(
        `select (select count(*) from jobs) + (select count(*) from exports) + (select count(*) from edits) + (select count(*) from drafts) + (select count(*) from caption_lines) + (select count(*) from media_files) + (select count(*) from analysis_runs) as n`,
      );
      const projects = await app.services.orm.em.fork().getConnection().execute<{ updated_at: Date }[]>(`select updated_at from projects where id = ?`, [projectId]);
      return `${rows[0]!.n} ${String(projects[0]!.updated_at)}`;
    };
    const before = await counts();
    for (const format of ['fcpxml', 'xmeml', 'mlt', 'edl', 'otio']) await timeline(user, projectId, `format=${format}&source_ref=url`);
    expect(await counts()).to.equal(before);
  });
});
