// The proxy task's media knowledge: which videos need a proxy, its size, the sprite
// sheet's layout, and the one ffmpeg invocation that makes both. Pure functions, tested as data.
import { audioEncoderArgs, ENCODER_PRESETS, even, videoEncoderArgs } from '../media/encode.ts';
import type { MediaDescription } from '../media/probe.ts';
import { commonArgs } from '../media/tools.ts';

const PROXY_MAX_HEIGHT_PX = 480;
/** A keyframe every 2 s keeps proxy scrubbing responsive. */
const PROXY_KEYFRAME_SECONDS = 2;
const SPRITE_TILE_WIDTH_PX = 160;
const SPRITE_MAX_TILES = 100;
const SPRITE_MAX_TILES_PER_ROW = 10;

export interface SpriteLayout {
  tile_width_px: number;
  tile_height_px: number;
  tiles_per_row: number;
  total_tiles: number;
  seconds_per_tile: number;
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
