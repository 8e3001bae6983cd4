// The `media-import` program's input and result (ArtifactJob): the api writes the input
// (from the video host's metadata), the ffmpeg image's program streams the download into
// the bucket and writes the result, the api's produced-media completion reads that.
import { z } from 'zod';
import { producedMediaResultSchema } from './media-edit.ts';

export const mediaImportInputSchema = z.object({
  /**
   * Where the video host serves the file (an MP4 rendition, on the host's download origin).
   * The program follows redirects only within this URL's origin: one elsewhere fails the job.
   */
  downloadUrl: z.url({ protocol: /^https?$/ }),
  /** Larger downloads are stopped: the per-file maximum. */
  maxBytes: z.int().positive(),
});
export type MediaImportInput = z.infer<typeof mediaImportInputSchema>;

/** The imported object and the artifact program's description of it. */
export const mediaImportResultSchema = producedMediaResultSchema;
export type MediaImportResult = z.infer<typeof mediaImportResultSchema>;

/** Output file name under the job's prefix; fixed so that a retry overwrites. */
export const IMPORTED_FILE = { name: 'imported.mp4', contentType: 'video/mp4' } as const;
