import { expect } from 'chai';
import { JobFailure } from '../../job-images/lib/job-failure.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeMedia, keyframeTimes, parseFfprobeOutput, probeKeyframes } from '../../job-images/ffmpeg/src/media/probe.ts';
import { mediaToolsFromEnv } from '../../job-images/ffmpeg/src/media/tools.ts';
import { runFfmpeg } from '../../hack/fixtures/media.ts';

const MOV = 'mov,mp4,m4a,3gp,3g2,mj2';

function h264(overrides: Record<string, unknown> = {}) {
  return { index: 0, codec_type: 'video', codec_name: 'h264', width: 1920, height: 1080, pix_fmt: 'yuv420p', ...overrides };
}
const aac = { index: 1, codec_type: 'audio', codec_name: 'aac', channels: 2 };

function mediaOf(streams: object[], format: { format_name: string; duration?: string } = { format_name: MOV, duration: '12.345' }) {
  return describeMedia(parseFfprobeOutput({ streams, format }));
}

describe('media classification and the web-compatibility rule (media/probe.ts)', () => {
  it('H.264 + AAC in MP4/MOV up to 1080 lines is web-compatible', () => {
    expect(mediaOf([h264(), aac])).to.deep.equal({
      kind: 'video',
      durationSeconds: 12.345,
      streamSeconds: null,
      width: 1920,
      height: 1080,
      hasAudio: true,
      videoCodec: 'h264',
      audioCodec: 'aac',
      container: MOV,
      webCompatible: true,
      videoStreamIndex: 0,
      audioStreamIndex: 1,
      audioChannels: 2,
      startSeconds: 0,
      video: {
        index: 0,
        codec: 'h264',
        profile: null,
        level: null,
        pixelFormat: 'yuv420p',
        storedWidth: 1920,
        storedHeight: 1080,
        frameRate: null,
        averageFrameRate: null,
        timeBase: null,
        hasBFrames: false,
        rotationDeg: 0,
        startSeconds: null,
        frameCount: null,
      },
      audio: { index: 1, codec: 'aac', profile: null, sampleRateHz: null, channels: 2, channelLayout: null, timeBase: null, startSeconds: null },
    });
  });

  it('the stream details an encoder or a stream copy needs: profile, level, pixel format, rates, time base, B-frames', () => {
    const media = describeMedia(
      parseFfprobeOutput({
        streams: [
          h264({ profile: 'High', level: 40, r_frame_rate: '30000/1001', avg_frame_rate: '29970/1000', time_base: '1/30000', has_b_frames: 2, start_time: '0.033' }),
          { ...aac, profile: 'LC', sample_rate: '48000', channel_layout: 'stereo', time_base: '1/48000', start_time: '0.000000' },
        ],
        format: { format_name: MOV, duration: '10', start_time: '0.000000' },
      }),
    );
    expect(media.video).to.include({ profile: 'High', level: 40, pixelFormat: 'yuv420p', hasBFrames: true, startSeconds: 0.033 });
    expect(media.video?.frameRate).to.deep.equal({ num: 30000, den: 1001 });
    expect(media.video?.averageFrameRate).to.deep.equal({ num: 29970, den: 1000 });
    expect(media.video?.timeBase).to.deep.equal({ num: 1, den: 30000 });
    expect(media.audio).to.include({ codec: 'aac', sampleRateHz: 48000, channels: 2, channelLayout: 'stereo' });
    expect(media.audio?.timeBase).to.deep.equal({ num: 1, den: 48000 });
  });

  it('a frame rate of 0/0 is unknown (null), not zero', () => {
    expect(mediaOf([h264({ r_frame_rate: '0/0', avg_frame_rate: '0/0' })]).video).to.include({ frameRate: null, averageFrameRate: null });
  });

  it('H.264 without audio is web-compatible', () => {
    expect(mediaOf([h264()])).to.include({ webCompatible: true, hasAudio: false, audioCodec: null });
  });

  it('more than 1080 lines is not web-compatible', () => {
    expect(mediaOf([h264({ width: 2560, height: 1440 }), aac]).webCompatible).to.equal(false);
  });

  it('VP9/Opus in WebM is not web-compatible', () => {
    const media = mediaOf(
      [h264({ codec_name: 'vp9' }), { ...aac, codec_name: 'opus' }],
      { format_name: 'matroska,webm', duration: '3.0' },
    );
    expect(media).to.include({ kind: 'video', webCompatible: false, container: 'matroska,webm' });
  });

  it('H.264 with MP3 audio, or in Matroska, is not web-compatible', () => {
    expect(mediaOf([h264(), { ...aac, codec_name: 'mp3' }]).webCompatible).to.equal(false);
    expect(mediaOf([h264(), aac], { format_name: 'matroska,webm', duration: '1' }).webCompatible).to.equal(false);
  });

  it('10-bit H.264 is not web-compatible (browsers decode 8-bit 4:2:0 only)', () => {
    expect(mediaOf([h264({ pix_fmt: 'yuv420p10le' }), aac]).webCompatible).to.equal(false);
  });

  it('dimensions are as displayed: rotation swaps them, non-square pixels stretch the width', () => {
    const rotated = mediaOf([h264({ side_data_list: [{ side_data_type: 'Display Matrix', rotation: -90 }] }), aac]);
    expect(rotated).to.include({ width: 1080, height: 1920, webCompatible: false });
    expect(mediaOf([h264({ tags: { rotate: '180' } })])).to.include({ width: 1920, height: 1080 });
    expect(mediaOf([h264({ width: 720, height: 576, sample_aspect_ratio: '16:11' })])).to.include({ width: 1047, height: 576 });
  });

  it('audio streams only, or with cover art, is audio with no dimensions', () => {
    const cover = { index: 1, codec_type: 'video', codec_name: 'mjpeg', width: 500, height: 500, disposition: { attached_pic: 1 } };
    const media = mediaOf([{ ...aac, index: 0, codec_name: 'mp3' }, cover], { format_name: 'mp3', duration: '600.1' });
    expect(media).to.include({
      kind: 'audio',
      width: null,
      height: null,
      videoCodec: null,
      audioCodec: 'mp3',
      webCompatible: null,
      audioStreamIndex: 0,
      videoStreamIndex: null,
    });
  });

  it('a picture in an image demuxer is an image, with no duration', () => {
    const png = mediaOf([h264({ codec_name: 'png', width: 800, height: 600 })], { format_name: 'png_pipe' });
    expect(png).to.include({ kind: 'image', durationSeconds: null, width: 800, height: 600, webCompatible: null, hasAudio: false });
    expect(mediaOf([h264({ codec_name: 'mjpeg' })], { format_name: 'image2', duration: '0.04' }).kind).to.equal('image');
  });

  it('the duration falls back to the longest stream, and is null when nothing says', () => {
    expect(mediaOf([h264({ duration: '4.5' }), { ...aac, duration: '4.6' }], { format_name: MOV }).durationSeconds).to.equal(4.6);
    expect(mediaOf([h264()], { format_name: 'matroska,webm' }).durationSeconds).to.equal(null);
  });

  it('no audio, video or image stream is unsupported content', () => {
    expect(() => mediaOf([{ index: 0, codec_type: 'subtitle', codec_name: 'subrip' }], { format_name: 'srt' }))
      .to.throw(JobFailure, 'Unsupported content: the file has no audio, video or image stream');
  });
});

describe('keyframe times (probeKeyframes)', function () {
  this.timeout(20_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-keyframes-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keyframe times come from the packet flags, from the container start, unreadable times skipped', () => {
    const probe = { packets: [{ pts_time: '1.400000', flags: 'K__' }, { pts_time: '1.440000', flags: '___' }, { pts_time: '3.400000', flags: 'K_' }, { pts_time: 'N/A', flags: 'K_' }] };
    expect(keyframeTimes(probe, 1.4)).to.deep.equal([0, 2]);
  });

  it('lists every keyframe in seconds from the file start, ascending, from packet flags', async () => {
    const path = join(dir, 'gop.mp4');
    // a keyframe every 12 frames at 24 fps: every half second, B-frames on
    await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=160x90:rate=24:duration=3', '-c:v', 'libx264', '-preset', 'ultrafast', '-bf', '2', '-g', '12', '-keyint_min', '12', '-sc_threshold', '0', path]);
    const times = await probeKeyframes(mediaToolsFromEnv(process.env), path);
    expect(times).to.deep.equal([0, 0.5, 1, 1.5, 2, 2.5]);
  });

  it('a file without a picture has no keyframes', async () => {
    const path = join(dir, 'tone.m4a');
    await runFfmpeg(['-f', 'lavfi', '-i', 'sine=duration=1', path]);
    expect(await probeKeyframes(mediaToolsFromEnv(process.env), path)).to.deep.equal([]);
  });
});
