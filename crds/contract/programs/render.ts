// The `render` program's input and result (RenderJob): the export feature resolves a
// project's timeline, cuts, captions, asset edits and export settings into this input;
// the ffmpeg image's program plans and renders it and writes the result; the export
// completion reads that. Every time here is in milliseconds; times named `out*` are on
// the rendered output (after cuts and inserts), `source*` in a source file. The segments'
// and the assets' times are frame edges of `frameRate` (rounded to the ms) as the editing
// core placed them: the program keeps exactly those frames (crds/contract/editing/frame-grid.ts).
import { z } from 'zod';

const ms = z.int().min(0);

/** The output's size: the short side is the resolution's lines, the long side follows the aspect. */
const renderResolutions = ['720p', '1080p'] as const;
const renderAspectRatios = ['16:9', '9:16', '1:1'] as const;
export type RenderResolution = (typeof renderResolutions)[number];
export type RenderAspectRatio = (typeof renderAspectRatios)[number];

export function outputFrameSize(resolution: RenderResolution, aspect: RenderAspectRatio): { width: number; height: number } {
  const short = resolution === '720p' ? 720 : 1080;
  const long = (short * 16) / 9;
  if (aspect === '16:9') return { width: long, height: short };
  if (aspect === '9:16') return { width: short, height: long };
  return { width: short, height: short };
}

/** A stored file the render reads, by media file id. */
const renderSourceSchema = z.object({
  key: z.string().min(1),
  kind: z.enum(['video', 'audio', 'image']),
  /** What the api knew (null while unmeasured); the program probes the file itself. */
  durationMs: ms.nullable(),
  hasAudio: z.boolean(),
});
export type RenderSource = z.infer<typeof renderSourceSchema>;

/**
 * One stretch of a source the output plays, in output order, end to end. The main
 * footage's kept segments and inserted assets alike; an image plays for its length.
 */
const renderSegmentSchema = z.object({
  sourceId: z.string().min(1),
  sourceStartMs: ms,
  sourceEndMs: ms,
  /** Where it starts in the output: the sum of the lengths before it. */
  outStartMs: ms,
  /** An inserted asset (visual_mode insert) rather than the project's own footage. */
  inserted: z.boolean().default(false),
});

const overlayPositions = ['top_left', 'top_right', 'bottom_left', 'bottom_right', 'center', 'custom'] as const;

/** An asset edit placed on the output (overlay, replace or none), clipped to the output. */
const renderAssetSchema = z.object({
  sourceId: z.string().min(1),
  outStartMs: ms,
  outEndMs: ms,
  /** Where in the asset playing starts. */
  assetOffsetMs: ms,
  /** overlay: over the picture; replace: instead of it; none: no picture (audio only). */
  visualMode: z.enum(['overlay', 'replace', 'none']),
  /** mix: with the main audio; replace: instead of it; duck: main lowered under it; mute: the asset silent. */
  audioMode: z.enum(['mix', 'replace', 'duck', 'mute']),
  position: z.enum(overlayPositions),
  sizePercent: z.int().min(0).max(100),
  opacityPercent: z.int().min(0).max(100),
  /** Centre of the overlay as fractions of the frame (position custom). */
  x: z.number().min(0).max(1),
  y: z.number().min(0).max(1),
  flipH: z.boolean(),
  flipV: z.boolean(),
  rotationDeg: z.int().min(-360).max(360),
  volumePercent: z.int().min(0).max(100),
  /** Lower the main audio while the asset plays (audio_duck_main, or audio_mode duck). */
  duckMain: z.boolean(),
});
export type RenderAsset = z.infer<typeof renderAssetSchema>;

/** One caption line on the output, with its words' times for the word-highlight styles. */
const renderCaptionSchema = z.object({
  outStartMs: ms,
  outEndMs: ms,
  text: z.string().min(1),
  /** Empty when the text was edited away from the transcript (no per-word timing then). */
  words: z.array(z.object({ outStartMs: ms, outEndMs: ms, text: z.string().min(1) })).default([]),
});
export type RenderCaption = z.infer<typeof renderCaptionSchema>;

/** Caption styles: the spec names `style` a string; these are the ones rendered. */
export const captionStyles = ['classic', 'bold', 'boxed', 'highlight', 'karaoke'] as const;
export type CaptionStyle = (typeof captionStyles)[number];

const renderSettingsSchema = z.object({
  resolution: z.enum(renderResolutions),
  aspectRatio: z.enum(renderAspectRatios),
  /** `#rrggbb`. */
  letterboxColor: z.string().regex(/^#[0-9a-fA-F]{6}$/),
  flipH: z.boolean(),
  flipV: z.boolean(),
  /** A draft's crop (zoom ≥ 1, pan −1..1 on each axis); null: the whole frame. */
  crop: z.object({ zoom: z.number().min(1).max(10), panX: z.number().min(-1).max(1), panY: z.number().min(-1).max(1) }).nullable(),
  audio: z.object({
    normalize: z.boolean(),
    targetLufs: z.number().min(-70).max(-5),
    noiseReduction: z.boolean(),
    noiseFloorDb: z.number().min(-80).max(-20),
    mainVolumePercent: z.int().min(0).max(100),
  }),
  censorship: z.enum(['none', 'mute', 'bleep']),
  /** Null: no captions burned in. */
  captions: z.object({ style: z.enum(captionStyles), fontSize: z.int().min(8).max(200) }).nullable(),
});
export type RenderSettings = z.infer<typeof renderSettingsSchema>;

const rationalSchema = z.object({ num: z.int().positive(), den: z.int().positive() });

export const renderInputSchema = z.object({
  sources: z.record(z.string(), renderSourceSchema),
  /**
   * The output's frame grid, chosen by the editing core (the main footage's stated rate);
   * absent in a request written before the core chose it: the program then takes the
   * main footage's probed rate by the same rule.
   */
  frameRate: rationalSchema.optional(),
  segments: z.array(renderSegmentSchema).min(1),
  settings: renderSettingsSchema,
  captions: z.array(renderCaptionSchema).default([]),
  /** Output ranges whose audio the censorship setting mutes or bleeps (the censored words). */
  censored: z.array(z.object({ outStartMs: ms, outEndMs: ms })).default([]),
  assets: z.array(renderAssetSchema).default([]),
  /** Burn the service's watermark in (the export's watermark_required). */
  watermark: z.boolean(),
});
/** What the api writes (defaults may be left out). */
export type RenderRequestInput = z.input<typeof renderInputSchema>;
/** What the program reads. */
export type RenderInput = z.infer<typeof renderInputSchema>;

export const renderResultSchema = z.object({
  output_key: z.string().min(1),
  size_bytes: z.int().min(0),
  duration_ms: ms,
  width: z.int().positive(),
  height: z.int().positive(),
  frame_count: z.int().min(0),
  /** smart: whole GOPs copied, only partial GOPs re-encoded; full: everything re-encoded. */
  path: z.enum(['smart', 'full']),
  /** Why a cut-only export did not take the smart path (absent when it did or was never eligible). */
  fallback_reason: z.string().optional(),
  /** Loudness normalisation: whether the second pass ran in linear mode (null without normalize). */
  loudness_linear: z.boolean().nullable().default(null),
});
export type RenderResult = z.infer<typeof renderResultSchema>;

/** Output file name under the job's prefix; fixed so that a retry overwrites. */
export const RENDER_FILES = { output: { name: 'export.mp4', contentType: 'video/mp4' } } as const;
