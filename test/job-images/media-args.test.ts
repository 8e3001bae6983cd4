import { expect } from 'chai';
import { artifactPassArgs, firstFrameThumbnailArgs, planArtifacts, thumbnailSize } from '../../job-images/ffmpeg/src/artifact/artifact-args.ts';
import type { ArtifactFiles } from '../../job-images/ffmpeg/src/artifact/artifact-args.ts';
import { audioEncoderArgs, ENCODER_PRESETS, videoEncoderArgs } from '../../job-images/ffmpeg/src/media/encode.ts';
import { ffprobeArgs, measureDurationArgs } from '../../job-images/ffmpeg/src/media/probe.ts';
import type { MediaDescription } from '../../job-images/ffmpeg/src/media/probe.ts';
import { needsProxy, planProxy, proxyPassArgs, proxySize, spriteLayout } from '../../job-images/ffmpeg/src/proxy/proxy-args.ts';
import type { ProxyFiles } from '../../job-images/ffmpeg/src/proxy/proxy-args.ts';

const files: ArtifactFiles = {
  source: '/work/source',
  thumbnail: '/work/thumbnail.jpg',
  audio: '/work/audio.wav',
  packets: '/work/packets.framecrc',
};

const proxyFiles: ProxyFiles = { source: '/work/source', proxy: '/work/proxy.mp4', sprite: '/work/sprite.jpg' };

const common = ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'error', '-progress', 'pipe:3', '-y'];
const audioChain = 'aresample=16000,aformat=sample_fmts=s16:sample_rates=16000:channel_layouts=mono,asplit=2[audio][peaks]';
const audioOutputs = [
  '-map', '[audio]', '-c:a', 'pcm_s16le', '-f', 'wav', '/work/audio.wav',
  '-map', '[peaks]', '-c:a', 'pcm_s16le', '-f', 's16le', 'pipe:1',
];

const webVideo: MediaDescription = {
  kind: 'video',
  durationSeconds: 60,
  streamSeconds: 60,
  width: 1920,
  height: 1080,
  hasAudio: true,
  videoCodec: 'h264',
  audioCodec: 'aac',
  container: 'mov,mp4,m4a,3gp,3g2,mj2',
  webCompatible: true,
  videoStreamIndex: 0,
  audioStreamIndex: 1,
  audioChannels: 2,
  startSeconds: 0,
  // the stream details matter to the render plan, not to these argument lists
  video: null,
  audio: null,
};

const webmVideo: MediaDescription = {
  ...webVideo,
  durationSeconds: 30,
  width: 2560,
  height: 1440,
  videoCodec: 'vp9',
  audioCodec: 'opus',
  container: 'matroska,webm',
  webCompatible: false,
  audioChannels: 6,
};

const audioOnly: MediaDescription = {
  ...webVideo,
  kind: 'audio',
  durationSeconds: 600,
  width: null,
  height: null,
  videoCodec: null,
  audioCodec: 'mp3',
  container: 'mp3',
  webCompatible: null,
  videoStreamIndex: null,
  audioStreamIndex: 0,
};

const image: MediaDescription = {
  ...audioOnly,
  kind: 'image',
  durationSeconds: null,
  width: 800,
  height: 600,
  hasAudio: false,
  videoCodec: 'png',
  audioCodec: null,
  container: 'png_pipe',
  videoStreamIndex: 0,
  audioStreamIndex: null,
  audioChannels: null,
};

describe('ffmpeg arguments (artifact-args, proxy-args, media/encode, media/probe in job-images/ffmpeg/src/)', () => {
  describe('encoder presets (one table for every output this image writes)', () => {
    it('proxy: veryfast CRF 26 Main; edit: veryfast CRF 20 yuv420p; render: High yuv420p, AAC 48 kHz stereo 192k', () => {
      expect(videoEncoderArgs(ENCODER_PRESETS.proxy)).to.deep.equal(['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '26', '-profile:v', 'main']);
      expect(audioEncoderArgs(ENCODER_PRESETS.proxy)).to.deep.equal(['-c:a', 'aac', '-b:a', '128k']);
      expect(videoEncoderArgs(ENCODER_PRESETS.edit)).to.deep.equal(['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p']);
      expect(videoEncoderArgs(ENCODER_PRESETS.render)).to.deep.equal(['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-profile:v', 'high', '-pix_fmt', 'yuv420p']);
      expect(audioEncoderArgs(ENCODER_PRESETS.render)).to.deep.equal(['-c:a', 'aac', '-b:a', '192k', '-ar', '48000', '-ac', '2']);
    });
  });

  describe('sizes', () => {
    it('thumbnails fit in 640×640 keeping the aspect ratio', () => {
      expect(thumbnailSize(1920, 1080)).to.deep.equal({ width: 640, height: 360 });
      expect(thumbnailSize(1080, 1920)).to.deep.equal({ width: 360, height: 640 });
      expect(thumbnailSize(800, 600)).to.deep.equal({ width: 640, height: 480 });
    });

    it('thumbnails are never upscaled, and sizes are even', () => {
      expect(thumbnailSize(320, 240)).to.deep.equal({ width: 320, height: 240 });
      expect(thumbnailSize(321, 241)).to.deep.equal({ width: 322, height: 242 });
    });

    it('the proxy is 480 lines high, or the source height when smaller', () => {
      expect(proxySize(2560, 1440)).to.deep.equal({ width: 854, height: 480 });
      expect(proxySize(1080, 1920)).to.deep.equal({ width: 270, height: 480 });
      expect(proxySize(640, 360)).to.deep.equal({ width: 640, height: 360 });
    });

    it('the sprite has one tile per second up to 100 tiles, 10 per row', () => {
      expect(spriteLayout(1920, 1080, 60)).to.deep.equal({
        tile_width_px: 160,
        tile_height_px: 90,
        tiles_per_row: 10,
        total_tiles: 60,
        seconds_per_tile: 1,
      });
      expect(spriteLayout(1080, 1920, 5)).to.include({ tile_height_px: 284, tiles_per_row: 5, total_tiles: 5 });
    });

    it('a last span shorter than half a tile gets no tile (there is no frame for it)', () => {
      expect(spriteLayout(1920, 1080, 3.008)).to.include({ total_tiles: 3 });
      expect(spriteLayout(1920, 1080, 3.6)).to.include({ total_tiles: 4 });
      expect(spriteLayout(1920, 1080, 0.2)).to.include({ total_tiles: 1 });
    });

    it('long videos get wider sprite spans so the sprite stays within 100 tiles', () => {
      expect(spriteLayout(1920, 1080, 3600)).to.include({ total_tiles: 100, seconds_per_tile: 36 });
      expect(spriteLayout(1920, 1080, 3601)).to.include({ total_tiles: 97, seconds_per_tile: 37 });
    });
  });

  describe('planArtifacts', () => {
    it('web-compatible video gets a thumbnail at 10% and 16 kHz audio, no proxy', () => {
      expect(planArtifacts(webVideo)).to.deep.equal({ thumbnail: { width: 640, height: 360, atSeconds: 6 }, audio: true });
      expect(needsProxy(webVideo)).to.equal(false);
    });

    it('non-web-compatible video gets the same artifacts; its proxy and sprite are left to the proxy task', () => {
      expect(planArtifacts(webmVideo)).to.deep.equal({ thumbnail: { width: 640, height: 360, atSeconds: 3 }, audio: true });
      expect(needsProxy(webmVideo)).to.equal(true);
    });

    it('audio gets only the 16 kHz audio and waveform; images only a thumbnail; neither needs a proxy', () => {
      expect(planArtifacts(audioOnly)).to.deep.equal({ thumbnail: null, audio: true });
      expect(planArtifacts(image)).to.deep.equal({ thumbnail: { width: 640, height: 480, atSeconds: null }, audio: false });
      expect([needsProxy(audioOnly), needsProxy(image)]).to.deep.equal([false, false]);
    });

    it('video without a known duration cannot be planned', () => {
      expect(() => planArtifacts({ ...webVideo, durationSeconds: null })).to.throw(/duration/);
    });
  });

  describe('planProxy', () => {
    it('the proxy task plans a 480p proxy, a sprite and the sound', () => {
      expect(planProxy(webmVideo)).to.deep.equal({
        proxy: { width: 854, height: 480 },
        sprite: { tile_width_px: 160, tile_height_px: 90, tiles_per_row: 10, total_tiles: 30, seconds_per_tile: 1 },
        audio: true,
      });
    });

    it('only video with a known duration gets a proxy', () => {
      expect(() => planProxy(audioOnly)).to.throw(/video/);
      expect(() => planProxy(image)).to.throw(/video/);
      expect(() => planProxy({ ...webmVideo, durationSeconds: null })).to.throw(/duration/);
    });
  });

  describe('argument lists', () => {
    it('ffprobe asks for format and streams as JSON, decoding no picture over 40 megapixels', () => {
      expect(ffprobeArgs('/work/source')).to.deep.equal([
        '-v', 'warning', '-max_pixels', '40000000', '-print_format', 'json', '-show_format', '-show_streams', '/work/source',
      ]);
    });

    it('web-compatible video: one invocation, the thumbnail from a seek, audio decoded once, every packet demuxed into the packet list (its keyframes)', () => {
      expect(artifactPassArgs(webVideo, planArtifacts(webVideo), files)).to.deep.equal([
        ...common,
        '-ss', '6', '-t', '2', '-i', '/work/source',
        '-i', '/work/source',
        '-filter_complex', `[0:0]scale=640:360,setsar=1[thumb];[1:1]${audioChain}`,
        '-map', '[thumb]', '-frames:v', '1', '-update', '1', '-c:v', 'mjpeg', '-q:v', '3', '/work/thumbnail.jpg',
        ...audioOutputs,
        '-map', '1:0', '-c', 'copy', '-f', 'framecrc', '/work/packets.framecrc',
      ]);
    });

    it('web-compatible video without sound: thumbnail and the demux walk only', () => {
      const silent: MediaDescription = { ...webVideo, hasAudio: false, audioCodec: null, audioStreamIndex: null, audioChannels: null };
      expect(artifactPassArgs(silent, planArtifacts(silent), files)).to.deep.equal([
        ...common,
        '-ss', '6', '-t', '2', '-i', '/work/source',
        '-i', '/work/source',
        '-filter_complex', '[0:0]scale=640:360,setsar=1[thumb]',
        '-map', '[thumb]', '-frames:v', '1', '-update', '1', '-c:v', 'mjpeg', '-q:v', '3', '/work/thumbnail.jpg',
        '-map', '1:0', '-c', 'copy', '-f', 'framecrc', '/work/packets.framecrc',
      ]);
    });

    it('non-web-compatible video: like web-compatible, the thumbnail from a seek and no proxy in this pass', () => {
      expect(artifactPassArgs(webmVideo, planArtifacts(webmVideo), files)).to.deep.equal([
        ...common,
        '-ss', '3', '-t', '2', '-i', '/work/source',
        '-i', '/work/source',
        '-filter_complex', `[0:0]scale=640:360,setsar=1[thumb];[1:1]${audioChain}`,
        '-map', '[thumb]', '-frames:v', '1', '-update', '1', '-c:v', 'mjpeg', '-q:v', '3', '/work/thumbnail.jpg',
        ...audioOutputs,
        '-map', '1:0', '-c', 'copy', '-f', 'framecrc', '/work/packets.framecrc',
      ]);
    });

    it('proxy task: one decode split into sprite and faststart 480p proxy; the sound encoded to AAC, surround downmixed to stereo', () => {
      expect(proxyPassArgs(webmVideo, planProxy(webmVideo), proxyFiles)).to.deep.equal([
        ...common,
        '-i', '/work/source',
        '-filter_complex',
        [
          '[0:0]split=2[sprite_src][proxy_src]',
          '[sprite_src]fps=1/1,trim=end_frame=30,scale=160:90,setsar=1,tile=10x3[sprite]',
          '[proxy_src]scale=854:480,setsar=1,format=yuv420p[proxy]',
        ].join(';'),
        '-map', '[sprite]', '-frames:v', '1', '-update', '1', '-c:v', 'mjpeg', '-q:v', '4', '/work/sprite.jpg',
        '-map', '[proxy]', '-map', '0:1',
        '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '26', '-profile:v', 'main',
        '-force_key_frames', 'expr:gte(t,n_forced*2)',
        '-c:a', 'aac', '-b:a', '128k', '-ac', '2',
        '-movflags', '+faststart', '/work/proxy.mp4',
      ]);
    });

    it('proxy task without sound: a silent proxy, stereo sources not remixed', () => {
      const silent: MediaDescription = { ...webmVideo, hasAudio: false, audioCodec: null, audioStreamIndex: null, audioChannels: null };
      const args = proxyPassArgs(silent, planProxy(silent), proxyFiles);
      expect(args.slice(args.indexOf('[proxy]'), args.indexOf('-c:v', args.indexOf('[proxy]')))).to.deep.equal(['[proxy]']);
      expect(args).to.not.include('-c:a');
      const stereo: MediaDescription = { ...webmVideo, audioChannels: 2 };
      const stereoArgs = proxyPassArgs(stereo, planProxy(stereo), proxyFiles);
      expect(stereoArgs).to.include('aac').and.not.include('-ac');
    });

    it('audio only: one decode resampled to 16 kHz mono, split into the WAV and the peaks pipe', () => {
      expect(artifactPassArgs(audioOnly, planArtifacts(audioOnly), files)).to.deep.equal([
        ...common,
        '-i', '/work/source',
        '-filter_complex', `[0:0]${audioChain}`,
        ...audioOutputs,
      ]);
    });

    it('image: its one frame scaled into the thumbnail', () => {
      expect(artifactPassArgs(image, planArtifacts(image), files)).to.deep.equal([
        ...common,
        '-i', '/work/source',
        '-filter_complex', '[0:0]scale=640:480,setsar=1[thumb]',
        '-map', '[thumb]', '-frames:v', '1', '-update', '1', '-c:v', 'mjpeg', '-q:v', '3', '/work/thumbnail.jpg',
      ]);
    });

    it('the fallback thumbnail is the first frame, alone', () => {
      expect(firstFrameThumbnailArgs(webVideo, planArtifacts(webVideo), files)).to.deep.equal([
        ...common,
        '-i', '/work/source',
        '-filter_complex', '[0:0]scale=640:360,setsar=1[thumb]',
        '-map', '[thumb]', '-frames:v', '1', '-update', '1', '-c:v', 'mjpeg', '-q:v', '3', '/work/thumbnail.jpg',
      ]);
    });

    it('the duration measure is a stream copy of the used streams to the null muxer', () => {
      expect(measureDurationArgs({ ...webmVideo, durationSeconds: null }, '/work/source')).to.deep.equal([
        ...common, '-i', '/work/source', '-map', '0:0', '-map', '0:1', '-c', 'copy', '-f', 'null', '-',
      ]);
    });
  });
});
