// The `proxy` program's input and result (ArtifactJob): the artifact completion asks for
// it (a non-web-compatible video), the ffmpeg image's program reads the input and writes
// the result, the api's proxy completion reads that.
import { z } from 'zod';

export const proxyInputSchema = z.object({
  /** The stored object the proxy is made from (the file's storage key). */
  sourceKey: z.string().min(1),
  contentType: z.string().min(1),
});
export type ProxyInput = z.infer<typeof proxyInputSchema>;

/** How the scrub sprite is tiled: what GET /media/{id}/proxy hands the player. */
const spriteLayoutSchema = z.object({
  tile_width_px: z.int().positive(),
  tile_height_px: z.int().positive(),
  tiles_per_row: z.int().positive(),
  total_tiles: z.int().positive(),
  seconds_per_tile: z.number().positive(),
});

export const proxyResultSchema = z.object({
  proxy_key: z.string().min(1),
  sprite_key: z.string().min(1),
  sprite: spriteLayoutSchema,
});
export type ProxyResult = z.infer<typeof proxyResultSchema>;

/** Output file names under the job's prefix; fixed so that a retry overwrites. */
export const PROXY_FILES = {
  proxy: { name: 'proxy.mp4', contentType: 'video/mp4' },
  sprite: { name: 'sprite.jpg', contentType: 'image/jpeg' },
} as const;
