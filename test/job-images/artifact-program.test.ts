import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { artifactResultSchema, type ArtifactResult } from '../../crds/contract/programs/artifact.ts';
import type { WaveformDocument } from '../../job-images/ffmpeg/src/artifact/waveform.ts';
import {
  makeAudio,
  makeCorruptFile,
  makeEmptyFile,
  makeImage,
  makeSpeechWav,
  makeTruncatedCopy,
  makeVideo,
  probeFile,
  sha256OfFile,
} from '../support/media.ts';
import { recordingFfmpeg, runJobProcess, startJobBucket } from './job-process.ts';
import { runFfmpeg } from '../../hack/fixtures/media.ts';
import type { JobBucket, JobProcessOutcome } from './job-process.ts';

interface ArtifactRun extends JobProcessOutcome {
  result: ArtifactResult;
  prefix: string;
  /** Argument lists of every ffmpeg the program started. */
  ffmpegRuns: string[];
  terminationMessage: string;
}

describe('artifact program, end to end (node job-images/ffmpeg/src/main.ts)', function () {
  this.timeout(60_000);
  let bucket: JobBucket;
  let dir: string;
  let ffmpegWrapper: string;
  const userId = randomUUID();
  /** One job id per upload name: running a name again is a retry of the same job. */
  const jobIds = new Map<string, string>();

  before(async () => {
    bucket = await startJobBucket();
    dir = await mkdtemp(join(tmpdir(), 'cutroom-artifact-test-'));
    // Counts the program's ffmpeg invocations: the efficiency rule is "one pass".
    ffmpegWrapper = await recordingFfmpeg(dir);
  });

  after(async () => {
    await bucket?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Uploads `source` (unless null) as `uploads/<name>` and runs the artifact program on it. */
  async function runArtifact(name: string, source: string | null, contentType: string, extraInput: Record<string, unknown> = {}): Promise<ArtifactRun> {
    const sourceKey = `uploads/${name}`;
    if (source) await bucket.putFile(sourceKey, source, contentType);
    const jobId = jobIds.get(name) ?? randomUUID();
    jobIds.set(name, jobId);
    const prefix = `media/${name}/artifacts/${jobId}`;
    const ffmpegLog = join(dir, `${name}.ffmpeg.log`);
    const terminationLog = join(dir, `${name}.termination-log`);
    await writeFile(ffmpegLog, '');
    await writeFile(terminationLog, '');
    const outcome = await runJobProcess(
      { jobId, program: 'artifact', userId, mediaFileId: jobId, input: { sourceKey, contentType, ...extraInput }, outputPrefix: prefix },
      {
        ...bucket.env,
        FFMPEG_PATH: ffmpegWrapper,
        CUTROOM_TEST_FFMPEG_LOG: ffmpegLog,
        CUTROOM_TERMINATION_LOG: terminationLog,
      },
    );
    return {
      ...outcome,
      result: (outcome.result ?? {}) as unknown as ArtifactResult,
      prefix,
      ffmpegRuns: (await readFile(ffmpegLog, 'utf8')).split('\n').filter(Boolean),
      terminationMessage: await readFile(terminationLog, 'utf8'),
    };
  }

  async function download(key: string | null, name: string): Promise<string> {
    expect(key, `${name} key`).to.be.a('string');
    const path = join(dir, name);
    await bucket.getFile(key as string, path);
    return path;
  }

  async function expectJpeg(key: string | null, name: string, width: number, height: number): Promise<void> {
    const probe = await probeFile(await download(key, name));
    expect(probe.streams[0]).to.include({ codec_name: 'mjpeg', width, height });
  }

  async function expect16kMonoWav(key: string | null, name: string, seconds: number): Promise<void> {
    const probe = await probeFile(await download(key, name));
    expect(probe.format.format_name).to.equal('wav');
    expect(probe.streams[0]).to.include({ codec_name: 'pcm_s16le', sample_rate: '16000', channels: 1 });
    expect(Number(probe.format.duration)).to.be.closeTo(seconds, 0.1);
  }

  async function expectWaveform(run: ArtifactRun, seconds: number): Promise<WaveformDocument> {
    const waveform = (await bucket.getJson(`${run.prefix}/waveform.json`)) as WaveformDocument;
    expect(waveform).to.include({ version: 1, sample_rate_hz: 16000, peaks_per_second: 20, samples_per_peak: 800 });
    expect(waveform.peaks).to.have.length(run.result.waveform_peaks_count ?? -1);
    expect(waveform.peaks.length).to.be.closeTo(seconds * 20, 2);
    for (const peak of waveform.peaks) expect(peak).to.be.within(0, 1);
    return waveform;
  }

  async function expectStoredResult(run: ArtifactRun): Promise<void> {
    // the program's outcome is result.json alone: it must be what the api's contract reads
    expect(artifactResultSchema.parse(await bucket.getJson(`${run.prefix}/result.json`))).to.deep.equal(run.result);
  }

  function expectFailure(run: ArtifactRun, message: string | RegExp): void {
    expect(run.exitCode, run.stderr).to.equal(1);
    expect(run.error, 'error.json').to.not.equal(null);
    const reported = run.error?.message ?? '';
    if (typeof message === 'string') expect(reported).to.equal(message);
    else expect(reported).to.match(message);
    expect(run.terminationMessage).to.equal(reported);
  }

  describe('web-compatible video (H.264/AAC MP4, speech with a pause)', () => {
    let source: string;
    let run: ArtifactRun;
    let seconds: number;
    before(async () => {
      const speech = await makeSpeechWav(dir, 'speech.wav', [
        { say: 'Cutroom cuts the pauses' },
        { silenceSeconds: 1 },
        { say: 'out of your videos' },
      ]);
      source = await makeVideo(dir, 'web.mp4', { seconds: 8, audio: { wav: speech } });
      seconds = Number((await probeFile(source)).format.duration);
      run = await runArtifact('web', source, 'video/mp4');
    });

    it('exits 0 with the probe facts and web_compatible true, no proxy', async () => {
      expect(run.exitCode, run.stderr).to.equal(0);
      expect(run.result).to.deep.include({
        kind: 'video',
        duration_ms: Math.round(seconds * 1000),
        width: 640,
        height: 360,
        has_audio: true,
        video_codec: 'h264',
        audio_codec: 'aac',
        container: 'mov,mp4,m4a,3gp,3g2,mj2',
        web_compatible: true,
        proxy_status: 'not_applicable',
      });
      expect(run.result.artifacts).to.deep.equal({
        waveform_key: `${run.prefix}/waveform.json`,
        thumbnail_key: `${run.prefix}/thumbnail.jpg`,
        audio_key: `${run.prefix}/audio.wav`,
      });
    });

    it('sha256 and size_bytes are those of the stored object', async () => {
      expect(run.result.sha256).to.equal(await sha256OfFile(source));
      expect(run.result.size_bytes).to.equal((await stat(source)).size);
    });

    it('every artifact comes from one ffmpeg invocation', () => {
      expect(run.ffmpegRuns).to.have.length(1);
    });

    it('the thumbnail is a 640×360 JPEG', async () => {
      await expectJpeg(run.result.artifacts.thumbnail_key, 'web-thumbnail.jpg', 640, 360);
    });

    it('the audio artifact is 16 kHz mono 16-bit PCM WAV of the whole duration', async () => {
      await expect16kMonoWav(run.result.artifacts.audio_key, 'web-audio.wav', seconds);
    });

    it('waveform peaks: 20 per second, 0..1, loud in speech and near zero in the pause', async () => {
      const { peaks } = await expectWaveform(run, seconds);
      expect(Math.max(...peaks)).to.be.above(0.2);
      expect(Math.min(...peaks)).to.be.below(0.01);
    });

    it('result.json in S3 is the result, as the contract reads it', async () => {
      await expectStoredResult(run);
    });

    it('stdout: progress lines through download, probe, process and upload up to 100, and nothing else (the result is result.json)', () => {
      expect(run.progress, 'every stdout line is a progress line').to.have.length(run.lines.length);
      const progress = run.progress;
      const percents = progress.map((event) => event.progress);
      expect(percents).to.deep.equal([...percents].sort((a, b) => a - b));
      expect(percents.at(-1)).to.equal(100);
      const steps = [...new Set(progress.map((event) => event.step))];
      expect(steps).to.deep.equal(['download', 'probe', 'process', 'upload']);
      expect(run.lines[0]).to.equal('{"event":"progress","step":"download","progress":0}');
    });

    it('a retry of the same job overwrites the same keys', async () => {
      const again = await runArtifact('web', null, 'video/mp4');
      expect(again.exitCode).to.equal(0);
      expect(again.result).to.deep.equal(run.result);
    });
  });

  describe('non-web-compatible video (VP9/Opus WebM, 720p)', () => {
    let run: ArtifactRun;
    before(async () => {
      run = await runArtifact('webm', await makeVideo(dir, 'hd.webm', { codec: 'vp9', width: 1280, height: 720, seconds: 3 }), 'video/webm');
    });

    it('exits 0 with web_compatible false and proxy_status pending: no proxy or sprite from this program', () => {
      expect(run.exitCode, run.stderr).to.equal(0);
      expect(run.result).to.deep.include({
        kind: 'video',
        width: 1280,
        height: 720,
        video_codec: 'vp9',
        audio_codec: 'opus',
        container: 'matroska,webm',
        web_compatible: false,
        proxy_status: 'pending',
      });
      expect(run.result.artifacts, 'the proxy task makes those').to.have.all.keys('waveform_key', 'thumbnail_key', 'audio_key');
    });

    it('thumbnail, audio and waveform come from one ffmpeg invocation', () => {
      expect(run.ffmpegRuns).to.have.length(1);
    });

    it('thumbnail, 16 kHz audio and waveform are there too', async () => {
      await expectJpeg(run.result.artifacts.thumbnail_key, 'webm-thumbnail.jpg', 640, 360);
      await expect16kMonoWav(run.result.artifacts.audio_key, 'webm-audio.wav', 3);
      await expectWaveform(run, 3);
      await expectStoredResult(run);
    });
  });

  it('attack: a valid MP4 whose streams start late (4 s into the file) is not "truncated": its decoded length is compared with the streams\' own duration', async () => {
    const clip = await makeVideo(dir, 'late-source.mp4', { seconds: 3 });
    const late = join(dir, 'late.mp4');
    await runFfmpeg(['-itsoffset', '4', '-i', clip, '-c', 'copy', late]);
    const probed = await probeFile(late);
    expect(Number(probed.format.duration), 'the container says 7 s (from 0)').to.be.closeTo(7, 0.1);
    const run = await runArtifact('late-start', late, 'video/mp4');
    expect(run.exitCode, run.error?.message ?? run.stderr).to.equal(0);
    expect(run.result.kind).to.equal('video');
  });

  it("attack: a Matroska file whose Segment Duration says 3 s over 20 s of sound records the decoded 20 s (analysis is charged by it)", async () => {
    const honest = join(dir, 'honest.mkv');
    await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc2=s=160x90:r=25:d=20', '-f', 'lavfi', '-i', 'sine=d=20', '-c:v', 'libx264', '-c:a', 'libopus', '-shortest', honest]);
    // the Segment Info Duration element (ID 0x4489, an 8-byte float of milliseconds) made to say 3000
    const bytes = await readFile(honest);
    const at = bytes.indexOf(Buffer.from([0x44, 0x89, 0x88]));
    expect(at, 'a Duration element').to.be.above(0);
    bytes.writeDoubleBE(3000, at + 3);
    const lying = join(dir, 'lying.mkv');
    await writeFile(lying, bytes);
    expect(Number((await probeFile(lying)).format.duration), 'the container says 3 s').to.equal(3);
    const run = await runArtifact('lying-duration', lying, 'video/x-matroska');
    expect(run.exitCode, run.error?.message ?? run.stderr).to.equal(0);
    expect(run.result.duration_ms).to.be.within(19_900, 20_100);
  });

  it('a WebM without a duration (as MediaRecorder writes) gets its duration measured', async () => {
    const run = await runArtifact('live', await makeVideo(dir, 'live.webm', { codec: 'vp9', live: true, audio: 'none', seconds: 2 }), 'video/webm');
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(run.result.duration_ms).to.be.closeTo(2000, 100);
    expect(run.result).to.deep.include({ has_audio: false, proxy_status: 'pending', waveform_peaks_count: null });
    expect(run.result.artifacts).to.include({ waveform_key: null, audio_key: null });
  });

  it('an MP4 whose picture ends before the thumbnail time (a podcast still) gets its first frame as thumbnail', async () => {
    const podcast = await makeVideo(dir, 'podcast.mp4', { seconds: 0.2, audioSeconds: 5 });
    const run = await runArtifact('podcast', podcast, 'video/mp4');
    expect(run.exitCode, run.stderr).to.equal(0);
    expect(run.result.duration_ms).to.be.closeTo(5000, 100);
    expect(run.ffmpegRuns, 'the pass, then the first-frame fallback').to.have.length(2);
    await expectJpeg(run.result.artifacts.thumbnail_key, 'podcast-thumbnail.jpg', 640, 360);
    await expect16kMonoWav(run.result.artifacts.audio_key, 'podcast-audio.wav', 5);
  });

  describe("keyframes: the picture's key packets, read from the pass already made (issue 42 item 1)", () => {
    /** testsrc2 at 30 fps with a keyframe every 30 frames exactly (no scene-cut keyframes), B-frames on. */
    async function gopVideo(name: string, seconds: number, extra: string[], sound = false): Promise<string> {
      const path = join(dir, name);
      await runFfmpeg([
        '-f', 'lavfi', '-i', `testsrc2=size=320x180:rate=30:duration=${seconds}`,
        ...(sound ? ['-f', 'lavfi', '-i', `sine=duration=${seconds}`, '-c:a', 'aac', '-shortest'] : []),
        '-c:v', 'libx264', '-preset', 'veryfast', '-g', '30', '-keyint_min', '30', '-sc_threshold', '0', '-pix_fmt', 'yuv420p',
        '-metadata', `comment=cutroom-test-${randomUUID()}`, ...extra, path,
      ]);
      return path;
    }

    it('an H.264 MP4 with a keyframe every 30 frames at 30 fps lists exactly 0, 1000, 2000, 3000 and 4000 ms, from the one ffmpeg invocation', async () => {
      const run = await runArtifact('gop30', await gopVideo('gop30.mp4', 5, [], true), 'video/mp4');
      expect(run.exitCode, run.stderr).to.equal(0);
      expect(run.result.keyframes_ms).to.deep.equal([0, 1000, 2000, 3000, 4000]);
      expect(run.ffmpegRuns).to.have.length(1);
      await expectStoredResult(run);
    });

    it('an MPEG-TS whose picture starts at 1.47 s lists its keyframes from the container\'s start, the time -ss and trim count: 0, 1000, 2000, 3000', async () => {
      const source = await gopVideo('gop30.ts', 4, ['-f', 'mpegts']);
      expect(Number(((await probeFile(source)).format as { start_time?: string }).start_time)).to.be.above(1);
      const run = await runArtifact('gop30-ts', source, 'video/mp2t');
      expect(run.exitCode, run.stderr).to.equal(0);
      expect(run.result.keyframes_ms).to.deep.equal([0, 1000, 2000, 3000]);
    });

    it('none (null) for sound, for a still, and for an intra-only picture (MJPEG: every frame a keyframe, any cut already on one)', async () => {
      const mjpeg = join(dir, 'intra.avi');
      await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=30:duration=2', '-c:v', 'mjpeg', '-q:v', '5', '-metadata', `comment=cutroom-test-${randomUUID()}`, mjpeg]);
      const runs = {
        sound: await runArtifact('kf-sound', await makeAudio(dir, 'kf-tone.m4a', { seconds: 1 }), 'audio/mp4'),
        still: await runArtifact('kf-still', await makeImage(dir, 'kf-still.png', { width: 64, height: 48 }), 'image/png'),
        intra: await runArtifact('kf-intra', mjpeg, 'video/x-msvideo'),
      };
      for (const [what, run] of Object.entries(runs)) {
        expect(run.exitCode, run.stderr).to.equal(0);
        expect(run.result.keyframes_ms, what).to.equal(null);
      }
      expect(runs.intra.result.kind).to.equal('video');
    });
  });

  describe('audio only (MP3, 48 kHz stereo)', () => {
    let run: ArtifactRun;
    before(async () => {
      run = await runArtifact('mp3', await makeAudio(dir, 'tone.mp3', { seconds: 3, sampleRate: 48_000, channels: 2 }), 'audio/mpeg');
    });

    it('exits 0 as kind audio with no dimensions, thumbnail, proxy or sprite', () => {
      expect(run.exitCode, run.stderr).to.equal(0);
      expect(run.result).to.deep.include({
        kind: 'audio',
        width: null,
        height: null,
        has_audio: true,
        video_codec: null,
        audio_codec: 'mp3',
        container: 'mp3',
        web_compatible: null,
        proxy_status: 'not_applicable',
      });
      expect(run.result.artifacts).to.include({ thumbnail_key: null });
      expect(run.ffmpegRuns).to.have.length(1);
    });

    it('the audio artifact is downmixed and resampled to 16 kHz mono WAV; the waveform follows the level', async () => {
      await expect16kMonoWav(run.result.artifacts.audio_key, 'mp3-audio.wav', 3);
      const { peaks } = await expectWaveform(run, 3);
      // A steady tone makes steady peaks.
      const level = peaks[20] ?? 0;
      expect(level).to.be.above(0.05);
      for (const peak of peaks.slice(2, -2)) expect(peak).to.be.closeTo(level, 0.01);
      await expectStoredResult(run);
    });
  });

  describe('images', () => {
    it('a PNG is kind image with a 640×480 JPEG thumbnail and nothing else', async () => {
      const run = await runArtifact('png', await makeImage(dir, 'still.png', { width: 800, height: 600 }), 'image/png');
      expect(run.exitCode, run.stderr).to.equal(0);
      expect(run.result).to.deep.include({
        kind: 'image',
        duration_ms: null,
        width: 800,
        height: 600,
        has_audio: false,
        video_codec: 'png',
        audio_codec: null,
        container: 'png_pipe',
        web_compatible: null,
        proxy_status: 'not_applicable',
        waveform_peaks_count: null,
      });
      expect(run.result.artifacts).to.deep.equal({
        waveform_key: null,
        thumbnail_key: `${run.prefix}/thumbnail.jpg`,
        audio_key: null,
      });
      await expectJpeg(run.result.artifacts.thumbnail_key, 'png-thumbnail.jpg', 640, 480);
      await expectStoredResult(run);
    });

    it('a portrait JPEG gets a thumbnail that fits 640 high', async () => {
      const run = await runArtifact('jpeg', await makeImage(dir, 'portrait.jpg', { width: 1200, height: 1600 }), 'image/jpeg');
      expect(run.exitCode, run.stderr).to.equal(0);
      expect(run.result).to.deep.include({ kind: 'image', width: 1200, height: 1600, video_codec: 'mjpeg' });
      await expectJpeg(run.result.artifacts.thumbnail_key, 'jpeg-thumbnail.jpg', 480, 640);
    });
  });

  describe('failures: exit code 1, error.json, the same message in the termination log, no result.json', () => {
    it('zero-length object', async () => {
      const run = await runArtifact('empty', await makeEmptyFile(dir, 'empty.mp4'), 'video/mp4');
      expectFailure(run, 'The uploaded object "uploads/empty" is empty (0 bytes)');
      expect(await bucket.exists(`${run.prefix}/result.json`)).to.equal(false);
    });

    it('corrupt media (random bytes)', async () => {
      const run = await runArtifact('corrupt', await makeCorruptFile(dir, 'corrupt.mp4'), 'video/mp4');
      expectFailure(
        run,
        'The file "uploads/corrupt" is corrupt or not a media file ffmpeg can read (Invalid data found when processing input)',
      );
      expect(await bucket.exists(`${run.prefix}/result.json`)).to.equal(false);
    });

    it('truncated upload of an MP4 with its index at the end (moov missing)', async () => {
      const whole = await makeVideo(dir, 'whole.mp4', { seconds: 3 });
      const run = await runArtifact('truncated-moov', await makeTruncatedCopy(whole, dir, 'cut.mp4', 0.6), 'video/mp4');
      expectFailure(
        run,
        'The media file "uploads/truncated-moov" is truncated: its MP4 index (moov atom) is missing, so the upload was probably cut short; upload it again',
      );
    });

    it('attack: a 656 KB PNG declaring a huge picture (740 MB and 14.6 s to decode) is refused from its probe, before any decode: media.too_many_pixels', async () => {
      const big = join(dir, 'huge-picture.png');
      await runFfmpeg(['-f', 'lavfi', '-i', 'color=c=0x336699:s=8000x6000', '-frames:v', '1', '-update', '1', big]);
      expect((await stat(big)).size, 'small on disk').to.be.below(2_000_000);
      const run = await runArtifact('huge-picture', big, 'image/png');
      expectFailure(run, 'The picture is 8000×6000 pixels; at most 40 megapixels can be processed');
      expect(run.error).to.deep.include({ code: 'media.too_many_pixels', params: { width: 8000, height: 6000, max_megapixels: 40 } });
      expect(run.ffmpegRuns, 'nothing decoded it').to.deep.equal([]);
    });

    it('attack: an 8192×8192 H.264 upload (ffprobe cannot open its decoder at all) fails with the megapixel limit, not as "corrupt"', async () => {
      const big = join(dir, 'huge-h264.mp4');
      await runFfmpeg(['-f', 'lavfi', '-i', 'color=c=black:s=8192x8192:r=5:d=0.2', '-c:v', 'libx264', '-preset', 'ultrafast', big]);
      const run = await runArtifact('huge-h264', big, 'video/mp4');
      expectFailure(run, 'The picture is 8192×8192 pixels; at most 40 megapixels can be processed');
      expect(run.error).to.deep.include({ code: 'media.too_many_pixels', params: { width: 8192, height: 8192, max_megapixels: 40 } });
      expect(run.ffmpegRuns, 'nothing decoded it').to.deep.equal([]);
    });

    it('truncated upload of a faststart MP4 (index complete, data cut)', async () => {
      const whole = await makeVideo(dir, 'faststart.mp4', { seconds: 4, faststart: true });
      const run = await runArtifact('truncated', await makeTruncatedCopy(whole, dir, 'cut-faststart.mp4', 0.6), 'video/mp4');
      expectFailure(run, /^The media file "uploads\/truncated" is truncated: its data ends at \d+\.\d s of 4\.0 s; the upload was probably cut short, upload it again$/);
      expect(await bucket.exists(`${run.prefix}/result.json`)).to.equal(false);
    });

    it('with storeKey, the bytes it hashed are the bytes it stores there (the served object is written by the job, not the client)', async () => {
      const image = await makeImage(dir, 'staged.png');
      const storeKey = `media/staged/source`;
      const run = await runArtifact('staged', image, 'image/png', { storeKey, expectedSizeBytes: (await stat(image)).size });
      expect(run.exitCode, run.stderr).to.equal(0);
      const stored = await download(storeKey, 'staged-stored.png');
      const digest = createHash('sha256').update(await readFile(stored)).digest('hex');
      expect(digest).to.equal(run.result.sha256);
      expect(digest).to.equal(createHash('sha256').update(await readFile(image)).digest('hex'));
    });

    it('an upload whose staging object changed after confirm (another size than charged) → upload.changed, nothing stored', async () => {
      const image = await makeImage(dir, 'changed.png');
      const storeKey = `media/changed/source`;
      const run = await runArtifact('changed', image, 'image/png', { storeKey, expectedSizeBytes: (await stat(image)).size + 1 });
      expectFailure(run, /changed after it was confirmed/);
      expect(run.error?.code).to.equal('upload.changed');
      expect(await bucket.exists(storeKey), 'the served key is never written').to.equal(false);
    });

    it('missing object', async () => {
      const run = await runArtifact('missing', null, 'video/mp4');
      expectFailure(run, 'The source object "uploads/missing" does not exist in bucket "job-images-test"');
    });

    it('unsupported content type', async () => {
      const document = join(dir, 'brief.pdf');
      await writeFile(document, '%PDF-1.4\n');
      const run = await runArtifact('pdf', document, 'application/pdf');
      expectFailure(run, 'Unsupported content type "application/pdf": upload a video, audio or image file');
      expect(run.ffmpegRuns).to.have.length(0);
    });

    it('unsupported content: a subtitle file with no audio, video or image stream', async () => {
      const subtitles = join(dir, 'captions.srt');
      await writeFile(subtitles, '1\n00:00:00,000 --> 00:00:01,000\nHello\n\n2\n00:00:01,500 --> 00:00:02,000\nWorld\n');
      const run = await runArtifact('srt', subtitles, 'video/mp4');
      expectFailure(run, 'Unsupported content: the file has no audio, video or image stream');
    });
  });
});
