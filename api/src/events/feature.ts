import type { Services } from '../app.ts';
import type { ApiRouter } from '../http/router.ts';
import { authorizeProjectStream } from './project-access.ts';
import { registerProjectStream } from './stream.ts';
import { StreamConnections, streamLeaseMs } from './stream-connections.ts';

/** The project stream, wired from the services (the user stream is registered with the media library). */
export function registerEventStreams(router: ApiRouter, services: Services): void {
  const { config } = services;
  registerProjectStream(router, {
    bus: services.bus,
    subscriber: services.subscriber,
    // The same per-user leases as the user stream: one cap over both kinds.
    connections: new StreamConnections(services.redis, streamLeaseMs(config.SSE_KEEPALIVE_SECONDS)),
    sessions: services.accounts.sessions,
    logger: services.logger,
    keepaliveSeconds: config.SSE_KEEPALIVE_SECONDS,
    maxConnectionsPerUser: config.SSE_MAX_CONNECTIONS_PER_USER,
    authorize: authorizeProjectStream,
  });
}
