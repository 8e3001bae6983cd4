import { z } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireAuth, type AppRouter } from '../../accounts/guards.ts';
import { Conflict, NotFound, Unauthenticated } from '../../shared/errors.ts';
import type { ObjectStorage } from '../../storage/storage.ts';
import type { Clock } from '../../shared/clock.ts';
import { MediaFile, type MediaFileRow } from '../entities.ts';
import type { MediaLibrary } from '../library/library-service.ts';
import { MediaItemParams } from '../library/routes.ts';
import type { PlaybackObject, PlaybackTokens } from './playback-tokens.ts';

/** Sprites never change under their key, so clients may keep the object for good (set on the store's response). */
const SPRITE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** Every redirect: it points at a presigned URL that expires in minutes, so it must never be reused. */
const REDIRECT_CACHE_CONTROL = 'private, no-store';
/** The presigned GET outlives its token a little, so a redirect followed late still works. */
const PRESIGN_GRACE_SECONDS = 60;

const SpriteSchema = z.object({
  url: z.string(),
  expires_in: z.number().int(),
  tile_width_px: z.number().int(),
  tile_height_px: z.number().int(),
  tiles_per_row: z.number().int(),
  total_tiles: z.number().int(),
  seconds_per_tile: z.number(),
});

const ThumbnailSchema = z
  .object({
    url: z.string().describe('An api address carrying a signed token, the same within a token window (cacheable); it redirects to the image.'),
    expires_in: z.number().int(),
  })
  .describe('The JPEG thumbnail the artifact task made; null before it exists.');

const PlaybackSchema = z
  .object({
    url: z.string().describe('An api address carrying a signed token; it redirects to the object store.'),
    expires_in: z.number().int(),
    sprite: SpriteSchema.nullable(),
    thumbnail: ThumbnailSchema.nullable(),
  })
  .meta({ id: 'MediaPlayback' });

export interface PlaybackDeps {
  library: MediaLibrary;
  tokens: PlaybackTokens;
  storage: ObjectStorage;
  clock: Clock;
  baseUrl: () => string;
}

/** GET /media/{media_item_id}/proxy (signed playback URLs) and the token endpoint they point at. */
export function registerPlaybackRoutes(router: AppRouter, deps: PlaybackDeps): void {
  const { tokens } = deps;
  const playUrl = async (fileId: string, object: PlaybackObject) =>
    `${deps.baseUrl()}/api/v1/media/play/${await tokens.issue(fileId, object)}`;

  router.add({
    method: 'get',
    path: '/api/v1/media/{media_item_id}/proxy',
    summary: 'Short-lived playback URLs: the 480p proxy when ready (else the source), the scrub sprite once it exists, and the thumbnail (a URL stable within a token window, cacheable).',
    tags: ['media'],
    access: 'session',
    scope: 'read',
    params: MediaItemParams,
    responses: {
      200: { description: 'Playback URLs', schema: PlaybackSchema },
      404: { description: 'No such item of yours' },
      409: { description: 'The upload is not finished yet, or the file is still being processed (ask again after media_ready)' },
    },
    handler: async (ctx, { params, caller, em }) => {
      const item = await deps.library.findOwned(em, caller.user.id, params.media_item_id);
      const file = await em.findOneOrFail(MediaFile, item.file.id);
      // while processing, the served key is not written yet (the artifact job writes it): a URL now would redirect to nothing
      if (file.status === 'PROCESSING') throw Conflict('playback.processing');
      if (file.status !== 'UPLOADED') throw Conflict('playback.not_ready');
      const played: PlaybackObject = file.proxyStatus === 'ready' && file.proxyKey ? 'proxy' : 'source';
      const layout = spriteLayout(file);
      const thumbnail = file.thumbnailKey ? await tokens.issueCacheable(file.id, 'thumbnail') : null;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = {
        url: await playUrl(file.id, played),
        expires_in: tokens.ttlSeconds,
        sprite: layout ? { url: await playUrl(file.id, 'sprite'), expires_in: tokens.ttlSeconds, ...layout } : null,
        thumbnail: thumbnail ? { url: `${deps.baseUrl()}/api/v1/media/play/${thumbnail.token}`, expires_in: thumbnail.expiresIn } : null,
      };
    },
  });

  router.add({
    method: 'get',
    path: '/api/v1/media/play/{token}',
    summary: 'Follows a playback URL: 302 to a presigned GET of the object (Range requests are passed on). 401 once the token expired.',
    tags: ['media'],
    access: 'public',
    params: z.object({ token: z.string().min(1).max(2048) }),
    responses: { 302: { description: 'Redirect to the object store' }, 401: { description: 'Invalid or expired token' }, 409: { description: 'The file is being processed again (no object to serve now)' } },
    handler: async (ctx, { params, em }) => {
      const claims = await tokens.read(params.token).catch(() => {
        throw Unauthenticated('playback.token_invalid');
      });
      const { key, contentType } = await playedObject(em, claims.fileId, claims.object);
      const remaining = Math.max(1, Math.ceil((claims.expiresAt.getTime() - deps.clock.now().getTime()) / 1000));
      // sprites and thumbnails never change under their key (a new artifact job writes new keys)
      const immutable = claims.object === 'sprite' || claims.object === 'thumbnail';
      const url = await deps.storage.presignGet(key, remaining + PRESIGN_GRACE_SECONDS, {
        contentType,
        disposition: 'inline',
        ...(immutable ? { cacheControl: SPRITE_CACHE_CONTROL } : {}),
      });
      // a thumbnail's URL is the same for a token window: its redirect may be kept while the presigned URL it names lives
      ctx.set('Cache-Control', claims.object === 'thumbnail' ? `private, max-age=${remaining}` : REDIRECT_CACHE_CONTROL);
      ctx.status = 302;
      ctx.redirect(url);
    },
  });
}

/**
 * The object a playback token names and the type it is served as: the upload's allow-listed
 * type (or what our jobs wrote), never the Content-Type an upload request stored with it.
 */
async function playedObject(em: EntityManager, fileId: string, object: PlaybackObject): Promise<{ key: string; contentType: string }> {
  const file = await em.findOne(MediaFile, fileId);
  if (file && file.status !== 'UPLOADED') throw Conflict('playback.processing');
  const played = file && {
    source: { key: file.storageKey, contentType: file.contentType },
    proxy: { key: file.proxyKey, contentType: 'video/mp4' },
    sprite: { key: file.spriteKey, contentType: 'image/jpeg' },
    thumbnail: { key: file.thumbnailKey, contentType: 'image/jpeg' },
  }[object];
  if (!played?.key) throw NotFound('library.item_not_found');
  return { key: played.key, contentType: played.contentType };
}

function spriteLayout(file: MediaFileRow): Omit<z.infer<typeof SpriteSchema>, 'url' | 'expires_in'> | null {
  const sprite = file.sprite;
  if (!file.spriteKey || !sprite) return null;
  const field = (name: string) => Number(sprite[name] ?? 0);
  return {
    tile_width_px: field('tile_width_px'),
    tile_height_px: field('tile_height_px'),
    tiles_per_row: field('tiles_per_row'),
    total_tiles: field('total_tiles'),
    seconds_per_tile: field('seconds_per_tile'),
  };
}
