// Two-pass EBU R128 loudness normalisation of a rendered export: measure the sound, then
// apply loudnorm with the measured values while the picture is copied and both muxed.
import type { RenderSettings } from '../../../../crds/contract/programs/render.ts';
import { audioEncoderArgs, ENCODER_PRESETS, faststartMp4 } from '../media/encode.ts';
import { commonArgsAt } from '../media/tools.ts';
import type { LoudnessMeasurement } from './loudnorm-report.ts';
import { OUTPUT_AUDIO_FORMAT } from './sound.ts';

/** Loudness range and true-peak ceiling of the second loudnorm pass (EBU R128 streaming practice). */
const LOUDNESS = { loudnessRange: 11, truePeakDb: -1.5 } as const;

export interface LoudnessPlan {
  targetLufs: number;
  loudnessRange: number;
  truePeakDb: number;
}

/** Null: no normalisation, the render pass writes the final MP4. */
export function loudnessPlan(audio: RenderSettings['audio']): LoudnessPlan | null {
  return audio.normalize ? { targetLufs: audio.targetLufs, ...LOUDNESS } : null;
}

const loudnormTarget = (loudness: LoudnessPlan): string => `loudnorm=I=${loudness.targetLufs}:TP=${loudness.truePeakDb}:LRA=${loudness.loudnessRange}`;

/** First pass: measure the rendered sound (audio only, fast). loudnorm prints its JSON at info level. */
export function loudnessMeasureArgs(loudness: LoudnessPlan, audioPath: string): string[] {
  return [
    ...commonArgsAt('info'),
    '-i', audioPath,
    '-af', `${loudnormTarget(loudness)}:print_format=json`,
    '-f', 'null', '-',
  ];
}

/**
 * Second pass: the measured values and linear=true, so the whole programme gets one gain
 * (loudnorm falls back to dynamic on its own when that gain would break the true-peak
 * ceiling or the measured range exceeds the target's). The range target is widened to
 * the measured one so that only the peak can force dynamic mode. Then AAC, the picture
 * copied, index at the front.
 */
export function loudnessApplyArgs(
  loudness: LoudnessPlan,
  measured: LoudnessMeasurement | null,
  files: { intermediateVideo: string; intermediateAudio: string; output: string },
): string[] {
  // Silence measures -inf: there is nothing to normalise, the sound is only encoded and muxed.
  let filter = OUTPUT_AUDIO_FORMAT;
  if (measured) {
    const range = Math.min(50, Math.max(loudness.loudnessRange, Math.ceil(Number(measured.input_lra) || 0)));
    filter =
      `loudnorm=I=${loudness.targetLufs}:TP=${loudness.truePeakDb}:LRA=${range}:` +
      `measured_I=${measured.input_i}:measured_TP=${measured.input_tp}:measured_LRA=${measured.input_lra}:measured_thresh=${measured.input_thresh}:` +
      `offset=${measured.target_offset}:linear=true:print_format=json,${filter}`;
  }
  return [
    ...commonArgsAt('info'),
    '-i', files.intermediateVideo,
    '-i', files.intermediateAudio,
    '-map', '0:v:0', '-map', '1:a:0',
    '-af', filter,
    '-c:v', 'copy',
    ...audioEncoderArgs(ENCODER_PRESETS.render),
    ...faststartMp4(files.output),
  ];
}
