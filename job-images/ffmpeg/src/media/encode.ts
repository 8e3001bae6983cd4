// How this image encodes: the one table of codecs and qualities per kind of output, the
// encoder and MP4 arguments built from it, and the even sizes 4:2:0 pictures need.

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

/** A picture size to the nearest even number (at least 2): 4:2:0 chroma halves both sides. */
export const even = (value: number): number => Math.max(2, Math.round(value / 2) * 2);
/** The even size at or below `value`, for a crop that must stay inside its source. */
export const evenDown = (value: number): number => Math.max(2, Math.floor(value / 2) * 2);
