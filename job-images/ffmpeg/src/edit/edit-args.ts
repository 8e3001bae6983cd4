import { audioEncoderArgs, ENCODER_PRESETS, faststartMp4, videoEncoderArgs } from '../media/encode.ts';
import { secondsText, singleQuoted } from '../media/ffmpeg-text.ts';
import { commonArgs } from '../media/tools.ts';

/**
 * The media edit's media knowledge: which ranges of the source survive, and the exact
 * ffmpeg arguments that keep them. Pure functions, tested as data.
 */

/** A half-open range [startMs, endMs) of source time. */
export interface TimeRange {
  startMs: number;
  endMs: number;
}

/** Kept pieces shorter than this (under a frame at 50 fps) are dropped: concat cannot join empty segments. */
const MIN_KEPT_RANGE_MS = 20;

export const EDIT_OUTPUTS = {
  video: { name: 'edited.mp4', contentType: 'video/mp4' },
  audio: { name: 'edited.m4a', contentType: 'audio/mp4' },
} as const;

export type EditOutputKind = keyof typeof EDIT_OUTPUTS;

/** Overlapping or touching ranges become one; the result is sorted. */
function mergeRanges(ranges: readonly TimeRange[]): TimeRange[] {
  const sorted = [...ranges].filter((range) => range.endMs > range.startMs).sort((a, b) => a.startMs - b.startMs);
  const merged: TimeRange[] = [];
  for (const range of sorted) {
    const last = merged.at(-1);
    if (last && range.startMs <= last.endMs) last.endMs = Math.max(last.endMs, range.endMs);
    else merged.push({ ...range });
  }
  return merged;
}

/**
 * [start, end) minus the cuts, clamped to the real duration (the api skips its bounds
 * check while the duration is unknown). Cuts reaching outside the window only remove
 * what is inside it; overlapping cuts remove their union.
 */
export function keptRanges(window: { startMs?: number | undefined; endMs?: number | undefined }, cuts: readonly TimeRange[], durationMs: number): TimeRange[] {
  const start = Math.min(Math.max(0, window.startMs ?? 0), durationMs);
  const end = Math.min(window.endMs ?? durationMs, durationMs);
  const kept: TimeRange[] = [];
  let cursor = start;
  for (const cut of mergeRanges(cuts)) {
    if (cut.endMs <= cursor) continue;
    if (cut.startMs >= end) break;
    if (cut.startMs > cursor) kept.push({ startMs: cursor, endMs: cut.startMs });
    cursor = Math.max(cursor, cut.endMs);
  }
  if (cursor < end) kept.push({ startMs: cursor, endMs: end });
  return kept.filter((range) => range.endMs - range.startMs >= MIN_KEPT_RANGE_MS);
}

/**
 * Stream copy can only start a piece on a keyframe: each kept range starts at the last
 * keyframe at or before its start (so a little of a cut may stay), ends where asked.
 */
export function snapToKeyframes(ranges: readonly TimeRange[], keyframesMs: readonly number[]): TimeRange[] {
  if (keyframesMs.length === 0) return mergeRanges(ranges);
  const keyframes = [...keyframesMs].sort((a, b) => a - b);
  const snapped = ranges.map((range) => {
    let start = keyframes[0] ?? 0;
    for (const keyframe of keyframes) {
      if (keyframe > range.startMs) break;
      start = keyframe;
    }
    return { startMs: Math.min(start, range.startMs), endMs: range.endMs };
  });
  return mergeRanges(snapped);
}

export const totalMs = (ranges: readonly TimeRange[]): number => ranges.reduce((sum, range) => sum + range.endMs - range.startMs, 0);

/** What the edit's ffmpeg pass needs to know about the source and the wanted output. */
export interface EditPlan {
  ranges: TimeRange[];
  /** ffprobe stream indexes; video null for audio-only output. */
  videoStreamIndex: number | null;
  audioStreamIndex: number | null;
  output: EditOutputKind;
}

/** Whole milliseconds as seconds: the edit's ranges are in ms. */
const seconds = (ms: number): string => secondsText(Math.round(ms) / 1000, 3);

/**
 * The exact re-encode: every kept range trimmed from the one input (trim/atrim with
 * timestamps reset), then joined by one concat filter.
 */
export function editFilterGraph(plan: EditPlan): string {
  const video = plan.videoStreamIndex;
  const audio = plan.audioStreamIndex;
  const chains: string[] = [];
  const pads: string[] = [];
  plan.ranges.forEach((range, index) => {
    const bounds = `start=${seconds(range.startMs)}:end=${seconds(range.endMs)}`;
    if (video !== null) {
      chains.push(`[0:${video}]trim=${bounds},setpts=PTS-STARTPTS[v${index}]`);
      pads.push(`[v${index}]`);
    }
    if (audio !== null) {
      chains.push(`[0:${audio}]atrim=${bounds},asetpts=PTS-STARTPTS[a${index}]`);
      pads.push(`[a${index}]`);
    }
  });
  const outputs = `${video !== null ? '[v]' : ''}${audio !== null ? '[a]' : ''}`;
  chains.push(`${pads.join('')}concat=n=${plan.ranges.length}:v=${video !== null ? 1 : 0}:a=${audio !== null ? 1 : 0}${outputs}`);
  return chains.join(';');
}

export function reencodeArgs(plan: EditPlan, files: { source: string; output: string }): string[] {
  return [
    ...commonArgs,
    '-i', files.source,
    '-filter_complex', editFilterGraph(plan),
    ...(plan.videoStreamIndex !== null ? ['-map', '[v]', ...videoEncoderArgs(ENCODER_PRESETS.edit)] : []),
    ...(plan.audioStreamIndex !== null ? ['-map', '[a]', ...audioEncoderArgs(ENCODER_PRESETS.edit)] : []),
    ...faststartMp4(files.output),
  ];
}

/** The concat demuxer's script: the same source once per kept range, with its in and out points. */
export function concatScript(source: string, ranges: readonly TimeRange[]): string {
  const quoted = singleQuoted(source);
  const entries = ranges.map((range) => `file ${quoted}\ninpoint ${seconds(range.startMs)}\noutpoint ${seconds(range.endMs)}\n`);
  return `ffconcat version 1.0\n${entries.join('')}`;
}

/** fast_mode: no decoding at all, the kept (keyframe-snapped) pieces copied through the concat demuxer. */
export function streamCopyArgs(plan: EditPlan, files: { script: string; output: string }): string[] {
  return [
    ...commonArgs,
    '-f', 'concat', '-safe', '0', '-i', files.script,
    ...(plan.videoStreamIndex !== null ? ['-map', `0:${plan.videoStreamIndex}`] : []),
    ...(plan.audioStreamIndex !== null ? ['-map', `0:${plan.audioStreamIndex}`] : []),
    '-c', 'copy',
    ...faststartMp4(files.output),
  ];
}
