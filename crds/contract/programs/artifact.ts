// The `artifact` program's input and result (ArtifactJob): the api writes the input, the
// ffmpeg image's program reads it and writes the result, the api's completion reads that.
import { z } from 'zod';

export const artifactInputSchema = z.object({
  /** The object the program reads: an upload's staging key, or a job's output. */
  sourceKey: z.string().min(1),
  contentType: z.string().min(1),
  /**
   * Where the program writes the bytes it read and hashed, when that is another key than
   * `sourceKey`: the object the service serves, which no client URL can reach.
   */
  storeKey: z.string().min(1).optional(),
  /** The size charged at confirm or complete; bytes of another size fail `upload.changed`. */
  expectedSizeBytes: z.int().min(0).optional(),
});
export type ArtifactInput = z.infer<typeof artifactInputSchema>;

const mediaKinds = ['video', 'audio', 'image'] as const;

/**
 * The most keyframe times an artifact result lists (keyframes_ms): 11 hours of 2-second GOPs,
 * 5.5 hours of 1-second ones. A list this long may be cut short: past its last entry the
 * keyframes are unknown, and a cut there stays where the pause rule placed it.
 */
export const MAX_KEYFRAMES_LISTED = 20_000;

export const artifactResultSchema = z.object({
  /** Of the bytes the program itself read (and, with `storeKey`, wrote). */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size_bytes: z.int().min(0),
  kind: z.enum(mediaKinds),
  /** Null for images. */
  duration_ms: z.int().min(0).nullable(),
  width: z.int().positive().nullable(),
  height: z.int().positive().nullable(),
  has_audio: z.boolean(),
  video_codec: z.string().nullable(),
  audio_codec: z.string().nullable(),
  container: z.string(),
  /** The picture's base frame rate as a rational (24000/1001 stays 24000/1001); absent for audio, images and rate-less streams. */
  frame_rate: z.object({ num: z.int().positive(), den: z.int().positive() }).nullable().optional(),
  /** Null for audio and images. */
  web_compatible: z.boolean().nullable().optional(),
  /** `pending`: non-web-compatible video, whose proxy and sprite the separate `proxy` task makes. */
  proxy_status: z.enum(['pending', 'not_applicable']),
  artifacts: z.object({
    waveform_key: z.string().nullable(),
    thumbnail_key: z.string().nullable(),
    audio_key: z.string().nullable(),
  }),
  waveform_peaks_count: z.int().min(0).nullable().optional(),
  /**
   * The picture's key packets' presentation times, ms from the container's start (the time
   * ffmpeg's -ss and trim count), ascending, at most MAX_KEYFRAMES_LISTED (the first ones).
   * Null for audio and images, and for a picture whose every frame is a keyframe (any cut
   * already falls on one); absent from results written before it was recorded.
   */
  keyframes_ms: z.array(z.int().min(0)).max(MAX_KEYFRAMES_LISTED).nullable().optional(),
});
export type ArtifactResult = z.infer<typeof artifactResultSchema>;

/** Output file names under the job's prefix; fixed so that a retry overwrites. */
export const ARTIFACT_FILES = {
  waveform: { name: 'waveform.json', contentType: 'application/json' },
  thumbnail: { name: 'thumbnail.jpg', contentType: 'image/jpeg' },
  audio: { name: 'audio.wav', contentType: 'audio/wav' },
} as const;
