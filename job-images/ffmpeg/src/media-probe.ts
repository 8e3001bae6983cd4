import { z } from 'zod';
import { JobFailure } from '../../lib/job-failure.ts';
import { ffprobeArgs, measureDurationArgs } from './ffmpeg-args.ts';
import { MediaToolError, runFfmpeg, runFfprobe } from './media-tools.ts';
import type { MediaTools } from './media-tools.ts';

/** The part of `ffprobe -print_format json -show_format -show_streams` we rely on. */
const ffprobeStreamSchema = z.object({
  index: z.number().int(),
  codec_type: z.string().optional(),
  codec_name: z.string().optional(),
  width: z.number().int().optional(),
  height: z.number().int().optional(),
  pix_fmt: z.string().optional(),
  sample_aspect_ratio: z.string().optional(),
  channels: z.number().int().optional(),
  duration: z.string().optional(),
  disposition: z.object({ attached_pic: z.number().optional() }).partial().optional(),
  tags: z.record(z.string(), z.string()).optional(),
  side_data_list: z.array(z.object({ rotation: z.number().optional() }).loose()).optional(),
});

const ffprobeOutputSchema = z.object({
  streams: z.array(ffprobeStreamSchema).default([]),
  format: z.object({ format_name: z.string(), duration: z.string().optional() }),
});

export type FfprobeOutput = z.infer<typeof ffprobeOutputSchema>;
type FfprobeStream = z.infer<typeof ffprobeStreamSchema>;

export type MediaKind = 'video' | 'audio' | 'image';

/** What the artifact program and the argument builders know about a source file. */
export interface MediaDescription {
  kind: MediaKind;
  /** Container duration (or the longest stream's); null when the file does not say. */
  durationSeconds: number | null;
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
}

/** Web playback needs all of these; anything else gets a 480p H.264 proxy. */
export const WEB_COMPATIBLE = {
  videoCodecs: ['h264'],
  audioCodecs: ['aac'],
  containers: ['mov', 'mp4'],
  maxHeight: 1080,
  // Browsers decode 8-bit 4:2:0 H.264 only; High 10 or 4:2:2 files play as black.
  pixelFormats: ['yuv420p', 'yuvj420p'],
} as const;

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
  };
}

/** Probes a downloaded source, turning ffprobe's complaints into messages a person can act on. */
export async function probeSource(tools: MediaTools, source: string, key: string, signal: AbortSignal): Promise<MediaDescription> {
  let output: unknown;
  try {
    output = await runFfprobe(tools, ffprobeArgs(source), signal);
  } catch (error) {
    if (!(error instanceof MediaToolError)) throw error;
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
  return describeMedia(parseFfprobeOutput(output));
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
