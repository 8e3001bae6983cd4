// What this image knows about a source file: the ffprobe (and demux-only ffmpeg) runs
// that ask, and the one probe model every program reads their answers into.
import { z } from 'zod';
import { JobFailure } from '../../../lib/job-failure.ts';
import { commonArgs, MediaToolError, runFfmpeg, runFfprobe } from './tools.ts';
import type { MediaTools } from './tools.ts';

/** The part of `ffprobe -print_format json -show_format -show_streams` we rely on. */
const ffprobeStreamSchema = z.object({
  index: z.number().int(),
  codec_type: z.string().optional(),
  codec_name: z.string().optional(),
  profile: z.string().optional(),
  level: z.number().int().optional(),
  width: z.number().int().optional(),
  height: z.number().int().optional(),
  pix_fmt: z.string().optional(),
  sample_aspect_ratio: z.string().optional(),
  channels: z.number().int().optional(),
  channel_layout: z.string().optional(),
  sample_rate: z.string().optional(),
  r_frame_rate: z.string().optional(),
  avg_frame_rate: z.string().optional(),
  time_base: z.string().optional(),
  has_b_frames: z.number().int().optional(),
  start_time: z.string().optional(),
  nb_frames: z.string().optional(),
  duration: z.string().optional(),
  disposition: z.object({ attached_pic: z.number().optional() }).partial().optional(),
  tags: z.record(z.string(), z.string()).optional(),
  side_data_list: z.array(z.object({ rotation: z.number().optional() }).loose()).optional(),
});

const ffprobeOutputSchema = z.object({
  streams: z.array(ffprobeStreamSchema).default([]),
  format: z.object({ format_name: z.string(), duration: z.string().optional(), start_time: z.string().optional() }),
});

export type FfprobeOutput = z.infer<typeof ffprobeOutputSchema>;
type FfprobeStream = z.infer<typeof ffprobeStreamSchema>;

export type MediaKind = 'video' | 'audio' | 'image';

/** An exact ratio as ffprobe writes it ("30000/1001"), for frame rates and time bases. */
export interface Rational {
  num: number;
  den: number;
}

/** The picture stream as an encoder or a stream copy needs to know it. */
export interface VideoStreamInfo {
  index: number;
  codec: string | null;
  /** e.g. "High", "Main", "Constrained Baseline". */
  profile: string | null;
  /** H.264 level × 10 as ffprobe reports it (e.g. 40 for 4.0). */
  level: number | null;
  pixelFormat: string | null;
  /** Stored (coded) size, before rotation and pixel aspect ratio. */
  storedWidth: number;
  storedHeight: number;
  /** The stream's base frame rate (r_frame_rate); null when ffprobe says 0/0. */
  frameRate: Rational | null;
  /** Frames over duration (avg_frame_rate); differs from frameRate in variable-rate files. */
  averageFrameRate: Rational | null;
  timeBase: Rational | null;
  hasBFrames: boolean;
  /** Display rotation in degrees (side data or the rotate tag). */
  rotationDeg: number;
  /** The stream's first timestamp in seconds (ffprobe start_time), null when not said. */
  startSeconds: number | null;
  /** Frames the container counts (nb_frames; MP4 does, Matroska does not). */
  frameCount: number | null;
}

export interface AudioStreamInfo {
  index: number;
  codec: string | null;
  profile: string | null;
  sampleRateHz: number | null;
  channels: number | null;
  channelLayout: string | null;
  timeBase: Rational | null;
  startSeconds: number | null;
}

/** What the artifact program and the argument builders know about a source file. */
export interface MediaDescription {
  kind: MediaKind;
  /** Container duration (or the longest stream's); null when the file does not say. */
  durationSeconds: number | null;
  /**
   * How long the picture and sound streams themselves say they play (the longest of their own
   * durations), null when they do not say: what a full decode yields. It differs from
   * `durationSeconds` when the streams start late (an MP4's container duration runs from 0).
   */
  streamSeconds: number | null;
  /** Displayed size: rotation and non-square pixels applied; null for audio. */
  width: number | null;
  height: number | null;
  hasAudio: boolean;
  videoCodec: string | null;
  audioCodec: string | null;
  /** ffprobe's demuxer name, e.g. "mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "mp3", "png_pipe". */
  container: string;
  /** Null for audio and images: the rule is about what a browser's <video> plays. */
  webCompatible: boolean | null;
  /** ffprobe stream indexes of the picture and the sound we work from. */
  videoStreamIndex: number | null;
  audioStreamIndex: number | null;
  audioChannels: number | null;
  /** The container's first timestamp (format start_time); ffmpeg's -ss and trim count from it. */
  startSeconds: number;
  /** Null for audio-only files. */
  video: VideoStreamInfo | null;
  /** Null when the file has no sound (or is an image). */
  audio: AudioStreamInfo | null;
}

/** The one probe model of this image: what every program knows about a source file. */
export type MediaProbe = MediaDescription;

/** Web playback needs all of these; anything else gets a 480p H.264 proxy. */
const WEB_COMPATIBLE = {
  videoCodecs: ['h264'],
  audioCodecs: ['aac'],
  containers: ['mov', 'mp4'],
  maxHeight: 1080,
  // Browsers decode 8-bit 4:2:0 H.264 only; High 10 or 4:2:2 files play as black.
  pixelFormats: ['yuv420p', 'yuvj420p'],
} as const;

/**
 * ffprobe decodes a frame to learn a stream's parameters: `-max_pixels` keeps it from
 * decoding a picture over the limit (a 598 KB PNG of 16000×12000 took 614 MB and 2.6 s to
 * probe; capped, 55 MB and 0.2 s), and its warning names the size.
 */
export function ffprobeArgs(source: string): string[] {
  return ['-v', 'warning', '-max_pixels', String(MAX_PICTURE_PIXELS), '-print_format', 'json', '-show_format', '-show_streams', source];
}

/** libavutil's words for a picture over `-max_pixels`. */
const OVERSIZED_PICTURE = /Picture size (\d+)x(\d+) exceeds specified max pixel count/;

/** Every packet's time and flags (K = keyframe) of one stream: keyframes without decoding. */
function keyframeProbeArgs(source: string, streamIndex: number): string[] {
  return ['-v', 'error', '-select_streams', String(streamIndex), '-show_entries', 'packet=pts_time,dts_time,flags', '-print_format', 'json=compact=1', source];
}

/** A demux-only pass (no decoding) whose progress tells the duration a container left out. */
export function measureDurationArgs(media: MediaDescription, source: string): string[] {
  const maps = [media.videoStreamIndex, media.audioStreamIndex].flatMap((index) => (index === null ? [] : ['-map', `0:${index}`]));
  return [...commonArgs, '-i', source, ...maps, '-c', 'copy', '-f', 'null', '-'];
}

export function parseFfprobeOutput(json: unknown): FfprobeOutput {
  const parsed = ffprobeOutputSchema.safeParse(json);
  if (!parsed.success) throw new Error(`unexpected ffprobe output: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

function seconds(value: string | undefined): number | null {
  if (value === undefined) return null;
  const number = Number(value);
  return Number.isFinite(number) && number > 0 ? number : null;
}

/** "30000/1001" → {30000, 1001}; "0/0" and garbage → null. */
function parseRational(value: string | undefined): Rational | null {
  if (value === undefined) return null;
  const [num, den] = value.split('/').map(Number);
  if (num === undefined || den === undefined || !Number.isInteger(num) || !Number.isInteger(den) || num <= 0 || den <= 0) return null;
  return { num, den };
}

/**
 * Largest picture any program decodes (40 megapixels, e.g. 8000×5000): a frame is decoded
 * whole, so a small file declaring a huge picture (a 656 KB PNG took 740 MB and 14.6 s)
 * is refused from its probe, before anything decodes it.
 */
export const MAX_PICTURE_PIXELS = 40_000_000;

function checkPictureSize(width: number, height: number): void {
  if (width * height <= MAX_PICTURE_PIXELS) return;
  throw new JobFailure(`The picture is ${width}×${height} pixels; at most ${MAX_PICTURE_PIXELS / 1_000_000} megapixels can be processed`, {
    code: 'media.too_many_pixels',
    params: { width, height, max_megapixels: MAX_PICTURE_PIXELS / 1_000_000 },
  });
}

function optionalSeconds(value: string | undefined): number | null {
  if (value === undefined) return null;
  const number = Number(value);
  return Number.isFinite(number) ? number : null;
}

function videoStreamInfo(stream: FfprobeStream): VideoStreamInfo {
  return {
    index: stream.index,
    codec: stream.codec_name ?? null,
    profile: stream.profile ?? null,
    level: stream.level !== undefined && stream.level > 0 ? stream.level : null,
    pixelFormat: stream.pix_fmt ?? null,
    storedWidth: stream.width ?? 0,
    storedHeight: stream.height ?? 0,
    frameRate: parseRational(stream.r_frame_rate),
    averageFrameRate: parseRational(stream.avg_frame_rate),
    timeBase: parseRational(stream.time_base),
    hasBFrames: (stream.has_b_frames ?? 0) > 0,
    rotationDeg: rotationDegrees(stream),
    startSeconds: optionalSeconds(stream.start_time),
    frameCount: stream.nb_frames !== undefined && /^\d+$/.test(stream.nb_frames) ? Number(stream.nb_frames) : null,
  };
}

function audioStreamInfo(stream: FfprobeStream): AudioStreamInfo {
  const sampleRate = Number(stream.sample_rate);
  return {
    index: stream.index,
    codec: stream.codec_name ?? null,
    profile: stream.profile ?? null,
    sampleRateHz: Number.isInteger(sampleRate) && sampleRate > 0 ? sampleRate : null,
    channels: stream.channels ?? null,
    channelLayout: stream.channel_layout ?? null,
    timeBase: parseRational(stream.time_base),
    startSeconds: optionalSeconds(stream.start_time),
  };
}

function isImageContainer(formatName: string): boolean {
  return formatName === 'image2' || formatName.endsWith('_pipe');
}

function rotationDegrees(stream: FfprobeStream): number {
  const fromSideData = stream.side_data_list?.find((entry) => entry.rotation !== undefined)?.rotation;
  const degrees = fromSideData ?? Number(stream.tags?.rotate ?? 0);
  return Number.isFinite(degrees) ? degrees : 0;
}

/** Width and height as a viewer sees them: pixel aspect ratio applied, then rotation. */
function displaySize(stream: FfprobeStream): { width: number; height: number } | null {
  if (!stream.width || !stream.height) return null;
  const [num, den] = (stream.sample_aspect_ratio ?? '1:1').split(':').map(Number);
  const sar = num && den ? num / den : 1;
  const width = Math.round(stream.width * sar);
  const quarterTurns = Math.round(rotationDegrees(stream) / 90);
  return quarterTurns % 2 === 0 ? { width, height: stream.height } : { width: stream.height, height: width };
}

/** Classifies a probed file and applies the web-compatibility rule. */
export function describeMedia(probe: FfprobeOutput): MediaDescription {
  const container = probe.format.format_name;
  const video = probe.streams.find((stream) => stream.codec_type === 'video' && !stream.disposition?.attached_pic);
  const audio = probe.streams.find((stream) => stream.codec_type === 'audio');
  if (!video && !audio) throw new JobFailure('Unsupported content: the file has no audio, video or image stream', { code: 'media.no_streams' });
  const kind: MediaKind = !video ? 'audio' : isImageContainer(container) ? 'image' : 'video';
  const size = video ? displaySize(video) : null;
  if (video && !size) throw new JobFailure('The media file is unreadable: its picture has no dimensions', { code: 'media.no_dimensions' });
  const streamSeconds = probe.streams.map((stream) => seconds(stream.duration) ?? 0);
  const durationSeconds = kind === 'image' ? null : seconds(probe.format.duration) ?? (Math.max(0, ...streamSeconds) || null);
  const playedSeconds = [video, audio].flatMap((stream) => (stream ? [seconds(stream.duration) ?? 0] : []));
  const ownSeconds = kind === 'image' ? null : Math.max(0, ...playedSeconds) || null;
  if (video && size) checkPictureSize(video.width ?? 0, video.height ?? 0);
  const hasAudio = kind !== 'image' && audio !== undefined;
  const videoCodec = video?.codec_name ?? null;
  const audioCodec = hasAudio ? (audio?.codec_name ?? null) : null;
  const webCompatible =
    kind !== 'video'
      ? null
      : (WEB_COMPATIBLE.videoCodecs as readonly string[]).includes(videoCodec ?? '') &&
        (audioCodec === null || (WEB_COMPATIBLE.audioCodecs as readonly string[]).includes(audioCodec)) &&
        container.split(',').some((name) => (WEB_COMPATIBLE.containers as readonly string[]).includes(name)) &&
        (WEB_COMPATIBLE.pixelFormats as readonly string[]).includes(video?.pix_fmt ?? '') &&
        (size?.height ?? Infinity) <= WEB_COMPATIBLE.maxHeight;
  return {
    kind,
    durationSeconds,
    streamSeconds: ownSeconds,
    width: size?.width ?? null,
    height: size?.height ?? null,
    hasAudio,
    videoCodec,
    audioCodec,
    container,
    webCompatible,
    videoStreamIndex: video?.index ?? null,
    audioStreamIndex: hasAudio ? (audio?.index ?? null) : null,
    audioChannels: hasAudio ? (audio?.channels ?? null) : null,
    startSeconds: optionalSeconds(probe.format.start_time) ?? 0,
    video: video ? videoStreamInfo(video) : null,
    audio: hasAudio && audio ? audioStreamInfo(audio) : null,
  };
}

/** Probes a downloaded source, turning ffprobe's complaints into messages a person can act on. */
export async function probeSource(tools: MediaTools, source: string, key: string, signal: AbortSignal): Promise<MediaDescription> {
  let output: unknown;
  let oversized: { width: number; height: number } | undefined;
  try {
    output = await runFfprobe(tools, ffprobeArgs(source), signal, (line) => {
      const match = OVERSIZED_PICTURE.exec(line);
      if (match) oversized ??= { width: Number(match[1]), height: Number(match[2]) };
    });
  } catch (error) {
    if (!(error instanceof MediaToolError)) throw error;
    // a decoder that cannot open a picture over the cap (H.264) fails the whole probe: the size is still the reason
    if (oversized) checkPictureSize(oversized.width, oversized.height);
    const stderr = error.stderrTail.join('\n');
    if (stderr.includes('moov atom not found')) {
      throw new JobFailure(
        `The media file "${key}" is truncated: its MP4 index (moov atom) is missing, so the upload was probably cut short; upload it again`,
        { code: 'media.truncated' },
      );
    }
    const reason = (error.stderrTail.at(-1) ?? 'unknown format').replace(`${source}: `, '');
    throw new JobFailure(`The file "${key}" is corrupt or not a media file ffmpeg can read (${reason})`, { code: 'media.corrupt' });
  }
  // refused from the probe: nothing has decoded the picture, and nothing will
  if (oversized) checkPictureSize(oversized.width, oversized.height);
  return describeMedia(parseFfprobeOutput(output));
}

/** Probes a file the image made or already read (its output, a checked source): ffprobe's failures pass as they are. */
export async function describeFile(tools: MediaTools, path: string, signal?: AbortSignal): Promise<MediaDescription> {
  return describeMedia(parseFfprobeOutput(await runFfprobe(tools, ffprobeArgs(path), signal)));
}

/** Browser recordings (MediaRecorder WebM) carry no duration; a demux-only pass measures it. */
export async function withDuration(
  tools: MediaTools,
  media: MediaDescription,
  source: string,
  key: string,
  signal: AbortSignal,
): Promise<MediaDescription> {
  if (media.kind === 'image' || media.durationSeconds !== null) return media;
  try {
    const { outSeconds } = await runFfmpeg(tools, measureDurationArgs(media, source), { signal });
    if (outSeconds && outSeconds > 0) return { ...media, durationSeconds: outSeconds };
  } catch (error) {
    if (!(error instanceof MediaToolError)) throw error;
  }
  throw new JobFailure(`The media file "${key}" is unreadable: it has no measurable duration`, { code: 'media.no_duration' });
}

const keyframePacketsSchema = z.object({
  packets: z.array(z.object({ pts_time: z.string().optional(), dts_time: z.string().optional(), flags: z.string().optional() })).default([]),
});

/** Keyframe times (seconds from the container's start, ascending, unique) from keyframeProbeArgs' answer. */
export function keyframeTimes(json: unknown, containerStartSeconds = 0): number[] {
  const { packets } = keyframePacketsSchema.parse(json);
  const times = packets
    .filter((packet) => packet.flags?.startsWith('K'))
    .map((packet) => optionalSeconds(packet.pts_time) ?? optionalSeconds(packet.dts_time))
    .filter((time): time is number => time !== null)
    .map((time) => Math.round((time - containerStartSeconds) * 1e6) / 1e6);
  return [...new Set(times)].sort((a, b) => a - b);
}

/**
 * The keyframe times of a file's picture, in seconds from the container's start (the
 * timeline ffmpeg's -ss and trim use), ascending. Read from packet flags, so nothing
 * is decoded: fast even for long files. Pass the probe when you have it.
 */
export async function probeKeyframes(tools: MediaTools, path: string, signal?: AbortSignal, media?: MediaProbe): Promise<number[]> {
  const probed = media ?? (await describeFile(tools, path, signal));
  if (probed.videoStreamIndex === null) return [];
  return keyframeTimes(await runFfprobe(tools, keyframeProbeArgs(path, probed.videoStreamIndex), signal), probed.startSeconds);
}
