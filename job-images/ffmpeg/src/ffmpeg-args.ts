import type { MediaDescription } from './media-probe.ts';

/**
 * All of the ffmpeg image's media knowledge: which artifacts a source gets, at what
 * size, and the exact ffprobe/ffmpeg argument lists. Pure functions, tested as data.
 */

/** Thumbnails fit inside this square, never upscaled. */
export const THUMBNAIL_BOX_PX = 640;
/** The thumbnail is the frame at this fraction of the duration (past intros and fades). */
export const THUMBNAIL_AT_FRACTION = 0.1;
/**
 * How much picture after the seek point the thumbnail input reads: ffmpeg keeps
 * decoding an input after `-frames:v 1` is satisfied, so the input itself must end.
 * Long enough for a frame to exist in variable-frame-rate screen recordings.
 */
export const THUMBNAIL_WINDOW_SECONDS = 2;
export const PROXY_MAX_HEIGHT_PX = 480;
/** A keyframe every 2 s keeps proxy scrubbing responsive. */
export const PROXY_KEYFRAME_SECONDS = 2;
/** What the speech recognizer wants: 16 kHz mono 16-bit PCM. */
export const AUDIO_SAMPLE_RATE_HZ = 16_000;
export const SPRITE_TILE_WIDTH_PX = 160;
export const SPRITE_MAX_TILES = 100;
export const SPRITE_MAX_TILES_PER_ROW = 10;

/** ffmpeg writes `-progress` key=value blocks to this file descriptor. */
export const PROGRESS_FD = 3;

export interface SpriteLayout {
  tile_width_px: number;
  tile_height_px: number;
  tiles_per_row: number;
  total_tiles: number;
  seconds_per_tile: number;
}

export interface ArtifactPlan {
  /** `atSeconds` is null for images (their only frame). */
  thumbnail: { width: number; height: number; atSeconds: number | null } | null;
  /** 16 kHz mono WAV plus the same samples on stdout for the waveform peaks. */
  audio: boolean;
}

export interface ArtifactFiles {
  source: string;
  thumbnail: string;
  audio: string;
}

/** What the proxy task makes of a video: a 480p proxy (with the sound, if any) and the sprite sheet. */
export interface ProxyPlan {
  proxy: { width: number; height: number };
  sprite: SpriteLayout;
  audio: boolean;
}

export interface ProxyFiles {
  source: string;
  proxy: string;
  sprite: string;
}

const even = (value: number): number => Math.max(2, Math.round(value / 2) * 2);

/** Seconds with millisecond precision, the way ffmpeg options and expressions read them. */
const secondsArg = (value: number): string => String(Math.round(value * 1000) / 1000);

export function thumbnailSize(width: number, height: number): { width: number; height: number } {
  const scale = Math.min(1, THUMBNAIL_BOX_PX / Math.max(width, height));
  return { width: even(width * scale), height: even(height * scale) };
}

export function proxySize(width: number, height: number): { width: number; height: number } {
  const proxyHeight = even(Math.min(PROXY_MAX_HEIGHT_PX, height));
  return { width: even((width * proxyHeight) / height), height: proxyHeight };
}

/**
 * Tile i is the frame at i × seconds_per_tile: one per second for short clips, wider
 * spans so that long ones stay within SPRITE_MAX_TILES. A last span shorter than half
 * a tile gets no tile, as the fps filter (nearest rounding) makes no frame for it.
 */
export function spriteLayout(width: number, height: number, durationSeconds: number): SpriteLayout {
  const secondsPerTile = Math.max(1, Math.ceil(durationSeconds / SPRITE_MAX_TILES));
  const totalTiles = Math.max(1, Math.ceil(durationSeconds / secondsPerTile - 0.5));
  return {
    tile_width_px: SPRITE_TILE_WIDTH_PX,
    tile_height_px: even((SPRITE_TILE_WIDTH_PX * height) / width),
    tiles_per_row: Math.min(SPRITE_MAX_TILES_PER_ROW, totalTiles),
    total_tiles: totalTiles,
    seconds_per_tile: secondsPerTile,
  };
}

/** Which artifacts a source gets. Video needs a known duration (measure it first when the container omits it). */
export function planArtifacts(media: MediaDescription): ArtifactPlan {
  const hasPicture = media.kind !== 'audio' && media.width !== null && media.height !== null;
  if (media.kind === 'video' && media.durationSeconds === null) throw new Error('planArtifacts needs the video duration');
  const duration = media.durationSeconds ?? 0;
  return {
    thumbnail: hasPicture
      ? { ...thumbnailSize(media.width ?? 0, media.height ?? 0), atSeconds: media.kind === 'video' ? duration * THUMBNAIL_AT_FRACTION : null }
      : null,
    audio: media.hasAudio,
  };
}

/** Browsers cannot play it as uploaded: the separate proxy task makes a 480p proxy and a sprite. */
export function needsProxy(media: MediaDescription): boolean {
  return media.kind === 'video' && media.webCompatible === false;
}

/** The proxy task's plan; any video gets one (the task is only started for those that need it). */
export function planProxy(media: MediaDescription): ProxyPlan {
  if (media.kind !== 'video' || media.width === null || media.height === null) throw new Error('planProxy needs a video');
  if (media.durationSeconds === null) throw new Error('planProxy needs the video duration');
  return {
    proxy: proxySize(media.width, media.height),
    sprite: spriteLayout(media.width, media.height, media.durationSeconds),
    audio: media.hasAudio,
  };
}

export function ffprobeArgs(source: string): string[] {
  return ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', source];
}

/** Every packet's time and flags (K = keyframe) of one stream: keyframes without decoding. */
export function keyframeProbeArgs(source: string, streamIndex: number): string[] {
  return ['-v', 'error', '-select_streams', String(streamIndex), '-show_entries', 'packet=pts_time,dts_time,flags', '-print_format', 'json=compact=1', source];
}

/** Every ffmpeg run of this image: no stdin, progress on PROGRESS_FD, overwrite; errors only unless a filter reports at info. */
export function commonArgsAt(logLevel: 'error' | 'info'): string[] {
  return ['-hide_banner', '-nostdin', '-nostats', '-loglevel', logLevel, '-progress', `pipe:${PROGRESS_FD}`, '-y'];
}

export const commonArgs: readonly string[] = commonArgsAt('error');

/** One encoder setting per kind of output this image writes: the only place codecs and qualities are chosen. */
export interface EncoderPreset {
  video: { codec: 'libx264'; preset: string; crf: number; profile?: string; pixelFormat?: string };
  audio: { codec: 'aac'; bitrate: string; sampleRateHz?: number; channels?: number };
}

export const ENCODER_PRESETS = {
  /** 480p browser proxy: small, Main profile for old phones; the pixel format is set in its graph. */
  proxy: { video: { codec: 'libx264', preset: 'veryfast', crf: 26, profile: 'main' }, audio: { codec: 'aac', bitrate: '128k' } },
  /** A media edit's re-encode: near-transparent, so a later render loses little. */
  edit: { video: { codec: 'libx264', preset: 'veryfast', crf: 20, pixelFormat: 'yuv420p' }, audio: { codec: 'aac', bitrate: '192k' } },
  /** The export: High profile 8-bit 4:2:0 plays everywhere; 48 kHz stereo like every platform's upload spec. */
  render: {
    video: { codec: 'libx264', preset: 'veryfast', crf: 20, profile: 'high', pixelFormat: 'yuv420p' },
    audio: { codec: 'aac', bitrate: '192k', sampleRateHz: 48_000, channels: 2 },
  },
} as const satisfies Record<string, EncoderPreset>;

export function videoEncoderArgs(preset: EncoderPreset): string[] {
  const { codec, preset: speed, crf, profile, pixelFormat } = preset.video;
  return ['-c:v', codec, '-preset', speed, '-crf', String(crf), ...(profile ? ['-profile:v', profile] : []), ...(pixelFormat ? ['-pix_fmt', pixelFormat] : [])];
}

export function audioEncoderArgs(preset: EncoderPreset): string[] {
  const { codec, bitrate, sampleRateHz, channels } = preset.audio;
  return ['-c:a', codec, '-b:a', bitrate, ...(sampleRateHz ? ['-ar', String(sampleRateHz)] : []), ...(channels ? ['-ac', String(channels)] : [])];
}

/** MP4 with its index at the front, so playback starts before the download ends. */
export function faststartMp4(output: string): string[] {
  return ['-movflags', '+faststart', '-f', 'mp4', output];
}

/** A demux-only pass (no decoding) whose progress tells the duration a container left out. */
export function measureDurationArgs(media: MediaDescription, source: string): string[] {
  const maps = [media.videoStreamIndex, media.audioStreamIndex].flatMap((index) => (index === null ? [] : ['-map', `0:${index}`]));
  return [...commonArgs, '-i', source, ...maps, '-c', 'copy', '-f', 'null', '-'];
}

const audioChain = `aresample=${AUDIO_SAMPLE_RATE_HZ},aformat=sample_fmts=s16:sample_rates=${AUDIO_SAMPLE_RATE_HZ}:channel_layouts=mono,asplit=2[audio][peaks]`;

const thumbnailChain = (size: { width: number; height: number }): string => `scale=${size.width}:${size.height},setsar=1[thumb]`;

/**
 * The thumbnail from the first frame, for the rare video whose picture ends before
 * the thumbnail time (a podcast MP4 with a short still-image track).
 */
export function firstFrameThumbnailArgs(media: MediaDescription, plan: ArtifactPlan, files: ArtifactFiles): string[] {
  if (!plan.thumbnail) throw new Error('firstFrameThumbnailArgs needs a planned thumbnail');
  return [
    ...commonArgs,
    '-i', files.source,
    '-filter_complex', `[0:${media.videoStreamIndex}]${thumbnailChain(plan.thumbnail)}`,
    ...thumbnailOutput(files),
  ];
}

const thumbnailOutput = (files: ArtifactFiles): string[] =>
  ['-map', '[thumb]', '-frames:v', '1', '-update', '1', '-c:v', 'mjpeg', '-q:v', '3', files.thumbnail];

/**
 * The single ffmpeg invocation that makes every artifact of a source, each stream
 * decoded once. Video is read twice but its picture decoded only around the thumbnail
 * (input seeking, a short window), while a stream copy to the null muxer still walks
 * every packet, so a truncated file reports "partial file". Audio samples go to the
 * WAV and, raw, to stdout for the waveform.
 */
export function artifactPassArgs(media: MediaDescription, plan: ArtifactPlan, files: ArtifactFiles): string[] {
  const chains: string[] = [];
  const outputs: string[] = [];
  const seekThumbnail = media.kind === 'video' && plan.thumbnail !== null;
  const inputs = seekThumbnail
    ? ['-ss', secondsArg(plan.thumbnail?.atSeconds ?? 0), '-t', String(THUMBNAIL_WINDOW_SECONDS), '-i', files.source, '-i', files.source]
    : ['-i', files.source];
  const main = seekThumbnail ? 1 : 0;

  if (plan.thumbnail) chains.push(`[0:${media.videoStreamIndex}]${thumbnailChain(plan.thumbnail)}`);
  if (plan.audio) chains.push(`[${main}:${media.audioStreamIndex}]${audioChain}`);

  if (plan.thumbnail) outputs.push(...thumbnailOutput(files));
  if (plan.audio) {
    outputs.push('-map', '[audio]', '-c:a', 'pcm_s16le', '-f', 'wav', files.audio);
    outputs.push('-map', '[peaks]', '-c:a', 'pcm_s16le', '-f', 's16le', 'pipe:1');
  }
  if (seekThumbnail) {
    outputs.push('-map', `${main}:${media.videoStreamIndex}`, '-c', 'copy', '-f', 'null', '-');
  }
  return [...commonArgs, ...inputs, '-filter_complex', chains.join(';'), ...outputs];
}

/**
 * The proxy task's single ffmpeg invocation: the picture decoded once and split into
 * the sprite sheet and the 480p H.264 proxy (faststart, a keyframe every 2 s); the
 * sound goes straight to the proxy's AAC, surround downmixed to stereo.
 */
export function proxyPassArgs(media: MediaDescription, plan: ProxyPlan, files: ProxyFiles): string[] {
  const { sprite, proxy } = plan;
  const rows = Math.ceil(sprite.total_tiles / sprite.tiles_per_row);
  const chains = [
    `[0:${media.videoStreamIndex}]split=2[sprite_src][proxy_src]`,
    `[sprite_src]fps=1/${sprite.seconds_per_tile},trim=end_frame=${sprite.total_tiles},` +
      `scale=${sprite.tile_width_px}:${sprite.tile_height_px},setsar=1,tile=${sprite.tiles_per_row}x${rows}[sprite]`,
    `[proxy_src]scale=${proxy.width}:${proxy.height},setsar=1,format=yuv420p[proxy]`,
  ];
  return [
    ...commonArgs,
    '-i', files.source,
    '-filter_complex', chains.join(';'),
    '-map', '[sprite]', '-frames:v', '1', '-update', '1', '-c:v', 'mjpeg', '-q:v', '4', files.sprite,
    '-map', '[proxy]',
    ...(plan.audio ? ['-map', `0:${media.audioStreamIndex}`] : []),
    ...videoEncoderArgs(ENCODER_PRESETS.proxy),
    '-force_key_frames', `expr:gte(t,n_forced*${PROXY_KEYFRAME_SECONDS})`,
    ...(plan.audio ? [...audioEncoderArgs(ENCODER_PRESETS.proxy), ...((media.audioChannels ?? 2) > 2 ? ['-ac', '2'] : [])] : []),
    '-movflags', '+faststart', files.proxy,
  ];
}
