// The smart render's ffprobe and ffmpeg argument lists, as pure data: re-encoded seams,
// copied GOPs, the sound rendered in one piece, and the mux of both.
import { audioEncoderArgs, ENCODER_PRESETS, faststartMp4 } from '../media/encode.ts';
import { microsecondsText, secondsText, singleQuoted } from '../media/ffmpeg-text.ts';
import type { AudioStreamInfo, Rational, VideoStreamInfo } from '../media/probe.ts';
import { commonArgs } from '../media/tools.ts';
import { OUTPUT_SAMPLE_RATE_HZ } from './frame-grid.ts';
import { ticksToMicros, ticksToSeconds, type SmartPart, type SmartPlan, type SourcePicture } from './smart-plan.ts';
import { CUT_FADE_SECONDS, OUTPUT_AUDIO_FORMAT } from './sound.ts';

/**
 * Seams are x264's ultrafast at the export's CRF: next to copied source GOPs they score
 * about as veryfast at CRF − 3 did (53.1 against 53.4 dB PSNR to the source over 245
 * frames of the bench's 1080p talk) for 2.5× less CPU and 20 % more bytes; re-encoded
 * frames are most of a cut-only export's work (decisions.md, "Smart render").
 */
const SEAM_PRESET = 'ultrafast';
const SEAM_CRF = ENCODER_PRESETS.render.video.crf;

/** Every packet's timestamps and key flag, in stream ticks: the plan is built from these, nothing decoded. */
export function picturePacketsArgs(source: string, videoStreamIndex: number): string[] {
  return ['-v', 'error', '-select_streams', String(videoStreamIndex), '-show_entries', 'packet=pts,dts,duration,flags', '-print_format', 'json=compact=1', source];
}

/** The stream's avcC (hex dump), to learn which parameter-set ids the copied GOPs use. */
export function pictureExtradataArgs(source: string, videoStreamIndex: number): string[] {
  return ['-v', 'error', '-select_streams', String(videoStreamIndex), '-show_entries', 'stream=extradata', '-show_data', '-print_format', 'json', source];
}

/** Output packets of the picture, counted without decoding: the check that the output has the plan's frames. */
export function countPacketsArgs(output: string): string[] {
  return ['-v', 'error', '-select_streams', 'v:0', '-count_packets', '-show_entries', 'stream=nb_read_packets', '-print_format', 'json', output];
}

/** Seconds as ffmpeg reads them, rounded up to the microsecond: a seek there lands on the keyframe itself. */
function seekSeconds(picture: SourcePicture, pts: number): string {
  const micros = Math.ceil(((pts - picture.startTicks) * 1e6 * picture.timeBase.num) / picture.timeBase.den);
  return microsecondsText(Math.max(0, micros));
}

/** x264 names for what ffprobe reports; Constrained Baseline is x264's baseline. */
function x264Profile(profile: string | null): string | null {
  const known: Record<string, string> = { 'Constrained Baseline': 'baseline', Baseline: 'baseline', Main: 'main', High: 'high' };
  return profile === null ? null : (known[profile] ?? null);
}

/**
 * x264 options that make a seam interchangeable with the copied GOPs: same profile and
 * level, same B-frame reordering depth (so DTS keep rising across a join), and parameter
 * sets under ids the source does not use (both kinds stay valid side by side); the
 * source's time base.
 */
export function seamEncoderArgs(video: VideoStreamInfo, reorderDelay: number, parameterSetId: number, timeBase: Rational): string[] {
  const profile = x264Profile(video.profile);
  const level = video.level !== null && video.level >= 10 ? (video.level / 10).toFixed(1) : null;
  // x264 delays decode order by 1 frame with plain B-frames and 2 with a B-pyramid.
  const bFrames = reorderDelay === 0 ? ['-bf', '0'] : reorderDelay === 1 ? ['-bf', '1'] : ['-bf', '3'];
  const x264Params = [`sps-id=${parameterSetId}`, ...(reorderDelay >= 2 ? ['b-pyramid=normal'] : ['b-pyramid=none'])];
  return [
    '-c:v', 'libx264', '-preset', SEAM_PRESET, '-crf', String(SEAM_CRF),
    '-pix_fmt', 'yuv420p',
    ...(profile ? ['-profile:v', profile] : []),
    ...(level ? ['-level:v', level] : []),
    ...bFrames,
    '-x264-params', x264Params.join(':'),
    // The graph's timestamps, untouched: no frame dropped or duplicated, in the source's time base.
    '-fps_mode', 'passthrough', '-enc_time_base', `${timeBase.num}/${timeBase.den}`,
  ];
}

/**
 * Re-encodes many seams in one ffmpeg run, one x264 for all of them (an ffmpeg start and
 * an encoder start per seam cost as much as a short seam's frames). Each part is an input
 * seeked to the keyframe it decodes from, with the source's timestamps (-copyts), trimmed
 * to exactly the frames with start_pts ≤ pts < end_pts; the parts are joined, timed on the
 * output's frame grid (the plan only takes constant-rate sources), and every part starts
 * with a forced IDR frame, where the segment muxer starts its next file. Decoders are
 * single-threaded: a run opens one per part, and x264 has the cores.
 * MPEG-TS keeps the parameter sets in-band at every keyframe, as a concatenation needs.
 */
export function seamsEncodeArgs(options: {
  source: string;
  picture: SourcePicture;
  parts: readonly SmartPart[];
  frameRate: Rational;
  encoder: readonly string[];
  outputPattern: string;
  videoStreamIndex: number;
}): string[] {
  const { source, picture, parts, frameRate, encoder, outputPattern, videoStreamIndex } = options;
  const { timeBase } = picture;
  const inputs = parts.flatMap((part) => ['-threads', '1', '-noaccurate_seek', '-ss', seekSeconds(picture, part.keyframePts), '-i', source]);
  const trims = parts.map((part, index) => `[${index}:${videoStreamIndex}]trim=start_pts=${part.startPts}:end_pts=${part.endPts},setpts=PTS-STARTPTS[seam${index}]`);
  // The joined frames timed by count on the output's frame grid, in source ticks: the mux re-times each part's file anyway.
  const ticksPerFrame = `${timeBase.den * frameRate.den}/${timeBase.num * frameRate.num}`;
  const join = `${parts.map((_, index) => `[seam${index}]`).join('')}concat=n=${parts.length}:v=1:a=0,settb=${timeBase.num}/${timeBase.den},setpts=round(N*${ticksPerFrame})[seams]`;
  const firstFrames: number[] = [];
  let frames = 0;
  for (const part of parts) {
    firstFrames.push(frames);
    frames += part.frames;
  }
  return [
    ...commonArgs,
    ...inputs,
    '-copyts',
    '-filter_complex', [...trims, join].join(';'),
    '-map', '[seams]',
    ...encoder,
    '-force_key_frames', `expr:${firstFrames.map((frame) => `eq(n,${frame})`).join('+')}`,
    '-f', 'segment', '-segment_format', 'mpegts', '-segment_frames', firstFrames.slice(1).join(',') || String(frames + 1),
    outputPattern,
  ];
}

/**
 * Copies runs of GOPs, many in one ffmpeg: each from a clean keyframe, exactly its
 * frames' packets in decode order (the last GOP's up to a split of decode order),
 * parameter sets written in-band, to a file of its own.
 */
export function gopCopiesArgs(source: string, picture: SourcePicture, copies: readonly { part: SmartPart; output: string }[], videoStreamIndex: number): string[] {
  const inputs = copies.flatMap(({ part }) => ['-ss', seekSeconds(picture, part.keyframePts), '-i', source]);
  const outputs = copies.flatMap(({ part, output }, index) => [
    '-map', `${index}:${videoStreamIndex}`, '-c', 'copy', '-frames:v', String(part.frames),
    '-bsf:v', 'h264_mp4toannexb',
    '-f', 'mpegts', output,
  ]);
  return [...commonArgs, ...inputs, ...outputs];
}

/**
 * The concat demuxer's list: each part lasts exactly its frames' span, written as the
 * difference of rounded running totals so that rounding never accumulates over joins.
 */
export function partListText(picture: SourcePicture, parts: readonly SmartPart[], files: readonly string[]): string {
  let elapsedTicks = 0;
  const lines = ['ffconcat version 1.0'];
  parts.forEach((part, index) => {
    const startMicros = Math.round(ticksToSeconds(picture, elapsedTicks) * 1e6);
    elapsedTicks += part.endPts - part.startPts;
    const endMicros = Math.round(ticksToSeconds(picture, elapsedTicks) * 1e6);
    const file = files[index] ?? '';
    lines.push(`file ${singleQuoted(file)}`, `duration ${microsecondsText(endMicros - startMicros)}`);
  });
  return `${lines.join('\n')}\n`;
}

/**
 * The whole output's audio in one graph, as the full render makes it: each kept stretch
 * cut to the samples of its frames' span (counts from rounded running totals, so sound
 * and picture never drift apart), 48 kHz stereo, faded at every cut (not at the
 * output's two ends), joined, and encoded once (one AAC priming, no gap at a join).
 */
export function smartAudioGraph(picture: SourcePicture, plan: SmartPlan, audio: AudioStreamInfo | null, inputIndex: number): string {
  const rate = OUTPUT_SAMPLE_RATE_HZ;
  const sampleAt = (ticks: number): number => Math.round((ticks * picture.timeBase.num * rate) / picture.timeBase.den);
  const count = plan.segments.length;
  // A silent source still gets a sound track, as in the full render.
  if (!audio) return `anullsrc=r=${rate}:cl=stereo,${OUTPUT_AUDIO_FORMAT},atrim=end_sample=${sampleAt(plan.durationTicks)}[audio]`;
  const chains = [`[${inputIndex}:${audio.index}]asplit=${count}${plan.segments.map((_, index) => `[cut${index}]`).join('')}`];
  let elapsedTicks = 0;
  plan.segments.forEach((segment, index) => {
    const samples = sampleAt(elapsedTicks + segment.endPts - segment.startPts) - sampleAt(elapsedTicks);
    elapsedTicks += segment.endPts - segment.startPts;
    const fade = Math.min(Math.round(rate * CUT_FADE_SECONDS), Math.floor(samples / 4));
    const from = secondsText(ticksToMicros(picture, segment.startPts) / 1e6);
    const to = secondsText(ticksToMicros(picture, segment.endPts) / 1e6);
    const fades = [...(index > 0 ? [`afade=t=in:ss=0:ns=${fade}`] : []), ...(index < count - 1 ? [`afade=t=out:ss=${samples - fade}:ns=${fade}`] : [])];
    chains.push([`[cut${index}]atrim=start=${from}:end=${to}`, 'asetpts=PTS-STARTPTS', OUTPUT_AUDIO_FORMAT, `apad=whole_len=${samples}`, `atrim=end_sample=${samples}`, ...fades].join(',') + `[kept${index}]`);
  });
  chains.push(`${plan.segments.map((_, index) => `[kept${index}]`).join('')}concat=n=${count}:v=0:a=1[audio]`);
  return chains.join(';');
}

/**
 * The sound alone, rendered by smartAudioGraph and encoded as the export's AAC (MP4 keeps
 * its priming as an edit), with the native encoder's fast coder: the default two-loop
 * search costs 2.5× the CPU, as much as the seams of a 3-cuts-a-minute talk, for no
 * difference heard at 192 kb/s.
 */
export function smartSoundArgs(source: string | null, audioGraph: string, output: string): string[] {
  return [...commonArgs, ...(source ? ['-i', source] : []), '-filter_complex', audioGraph, '-map', '[audio]', ...audioEncoderArgs(ENCODER_PRESETS.render), '-aac_coder', 'fast', '-f', 'mp4', output];
}

/** The copied and re-encoded picture from the part list and the rendered sound, both copied: MP4 in the source's time scale, index up front. */
export function smartMuxArgs(options: { partList: string; sound: string; timeScale: number | null; output: string }): string[] {
  const { partList, sound, timeScale, output } = options;
  return [
    ...commonArgs,
    '-f', 'concat', '-safe', '0', '-i', partList, '-i', sound,
    '-map', '0:v', '-map', '1:a', '-c', 'copy',
    ...(timeScale ? ['-video_track_timescale', String(timeScale)] : []),
    ...faststartMp4(output),
  ];
}
