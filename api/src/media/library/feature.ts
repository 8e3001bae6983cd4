import type { Services } from '../../app.ts';
import type { ApiRouter } from '../../http/router.ts';
import { PlaybackTokens } from '../playback/playback-tokens.ts';
import { registerPlaybackRoutes } from '../playback/routes.ts';
import type { MediaLibrary } from './library-service.ts';
import { registerLibraryRoutes } from './routes.ts';

/** The media library and its playback URLs, wired from the services. */
export function registerMediaLibrary(router: ApiRouter, services: Pick<Services, 'config' | 'storage' | 'clock' | 'baseUrl'>, library: MediaLibrary): void {
  const { config } = services;
  registerLibraryRoutes(router, library);
  registerPlaybackRoutes(router, {
    library,
    tokens: new PlaybackTokens(config.SECRET_KEY, services.clock, config.MEDIA_TOKEN_TTL_SECONDS),
    storage: services.storage,
    clock: services.clock,
    // Read per request: the public address may be known only once the server listens.
    baseUrl: () => services.baseUrl,
  });
}
