// The artifact program's media knowledge: which artifacts a source gets, at what size,
// and the one ffmpeg invocation that makes them all. Pure functions, tested as data.
import { even } from '../media/encode.ts';
import { secondsText } from '../media/ffmpeg-text.ts';
import type { MediaDescription } from '../media/probe.ts';
import { commonArgs } from '../media/tools.ts';

/** Thumbnails fit inside this square, never upscaled. */
const THUMBNAIL_BOX_PX = 640;
/** The thumbnail is the frame at this fraction of the duration (past intros and fades). */
const THUMBNAIL_AT_FRACTION = 0.1;
/**
 * How much picture after the seek point the thumbnail input reads: ffmpeg keeps
 * decoding an input after `-frames:v 1` is satisfied, so the input itself must end.
 * Long enough for a frame to exist in variable-frame-rate screen recordings.
 */
const THUMBNAIL_WINDOW_SECONDS = 2;
/** What the speech recognizer wants: 16 kHz mono 16-bit PCM. */
export const AUDIO_SAMPLE_RATE_HZ = 16_000;

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
  /** The picture's packet list (ffmpeg's framecrc: times and flags), for its keyframes (keyframe-list.ts). */
  packets: string;
}

export function thumbnailSize(width: number, height: number): { width: number; height: number } {
  const scale = Math.min(1, THUMBNAIL_BOX_PX / Math.max(width, height));
  return { width: even(width * scale), height: even(height * scale) };
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
 * (input seeking, a short window), while a stream copy walks every packet, so a truncated
 * file reports "partial file"; the copy goes to the framecrc muxer, whose line per packet
 * (times and flags) gives the keyframes without a decode or another read. Audio samples
 * go to the WAV and, raw, to stdout for the waveform.
 */
export function artifactPassArgs(media: MediaDescription, plan: ArtifactPlan, files: ArtifactFiles): string[] {
  const chains: string[] = [];
  const outputs: string[] = [];
  const seekThumbnail = media.kind === 'video' && plan.thumbnail !== null;
  const inputs = seekThumbnail
    ? ['-ss', secondsText(plan.thumbnail?.atSeconds ?? 0, 3), '-t', String(THUMBNAIL_WINDOW_SECONDS), '-i', files.source, '-i', files.source]
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
    outputs.push('-map', `${main}:${media.videoStreamIndex}`, '-c', 'copy', '-f', 'framecrc', files.packets);
  }
  return [...commonArgs, ...inputs, '-filter_complex', chains.join(';'), ...outputs];
}
