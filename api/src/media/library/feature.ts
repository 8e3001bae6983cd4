import type { Services } from '../../app.ts';
import type { ApiRouter } from '../../http/router.ts';
import { registerUserStream } from '../../events/stream.ts';
import { StreamConnections } from '../../events/stream-connections.ts';
import { MediaGroups } from '../../media-groups/groups-service.ts';
import { registerMediaGroupRoutes } from '../../media-groups/routes.ts';
import { PlaybackTokens } from '../playback/playback-tokens.ts';
import { registerPlaybackRoutes } from '../playback/routes.ts';
import { MediaLibrary } from './library-service.ts';
import { registerLibraryRoutes } from './routes.ts';

/** The media library, media groups, playback URLs and the user stream, wired from the services. */
export function registerMediaLibrary(router: ApiRouter, services: Services): void {
  const { config } = services;
  const library = new MediaLibrary();
  registerLibraryRoutes(router, library);
  const groups = new MediaGroups(library);
  registerMediaGroupRoutes(router, groups);
  services.accounts.onAccountDeletion((em, user) => groups.deleteAllOf(em, user.id));
  registerPlaybackRoutes(router, {
    library,
    tokens: new PlaybackTokens(config.SECRET_KEY, services.clock, config.MEDIA_TOKEN_TTL_SECONDS),
    storage: services.storage,
    clock: services.clock,
    baseUrl: () => services.baseUrl,
  });

  registerUserStream(router, {
    bus: services.bus,
    subscriber: services.subscriber,
    // Three missed keepalives and a stream of a vanished replica stops counting.
    connections: new StreamConnections(services.redis, 3 * config.SSE_KEEPALIVE_SECONDS * 1000 + 5000),
    sessions: services.accounts.sessions,
    logger: services.logger,
    keepaliveSeconds: config.SSE_KEEPALIVE_SECONDS,
    maxConnectionsPerUser: config.SSE_MAX_CONNECTIONS_PER_USER,
  });
}
