import type { Clock } from '../../shared/clock.ts';
import type { Config } from '../../config.ts';
import type { ObjectStorage } from '../../storage/storage.ts';
import type { MediaLibrary } from '../library/library-service.ts';
import { PlaybackTokens } from './playback-tokens.ts';
import { registerPlaybackRoutes } from './routes.ts';
import type { AppRouter } from '../../accounts/guards.ts';

/** Playback URLs of the library's items (proxy, sprite, thumbnails), wired from the services. */
export function registerPlayback(router: AppRouter, services: { config: Config; storage: ObjectStorage; clock: Clock; baseUrl: string }, library: MediaLibrary): void {
  const { config } = services;
  registerPlaybackRoutes(router, {
    library,
    tokens: new PlaybackTokens(config.SECRET_KEY, services.clock, config.MEDIA_TOKEN_TTL_SECONDS),
    storage: services.storage,
    clock: services.clock,
    // Read per request: the public address may be known only once the server listens.
    baseUrl: () => services.baseUrl,
  });
}
