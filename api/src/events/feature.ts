import type { Services } from '../services.ts';
import { StreamMetrics } from '../ops/metrics.ts';
import type { ApiRouter } from '../http/router.ts';
import { authorizeProjectStream } from './project-access.ts';
import { registerProjectStream, registerUserStream, type StreamDeps } from './stream.ts';
import { StreamConnections, streamLeaseMs } from './stream-connections.ts';

type EventStreamServices = Pick<Services, 'config' | 'bus' | 'subscriber' | 'redis' | 'accounts' | 'logger' | 'metrics'>;

/** The user stream and the project stream, wired from the services. */
export function registerEventStreams(router: ApiRouter, services: EventStreamServices): void {
  const { config } = services;
  const deps: StreamDeps = {
    bus: services.bus,
    subscriber: services.subscriber,
    // One set of per-user leases for both kinds: one cap over all of a user's streams.
    connections: new StreamConnections(services.redis, streamLeaseMs(config.SSE_KEEPALIVE_SECONDS)),
    sessions: services.accounts.sessions,
    logger: services.logger,
    metrics: new StreamMetrics(services.metrics),
    keepaliveSeconds: config.SSE_KEEPALIVE_SECONDS,
    maxConnectionsPerUser: config.SSE_MAX_CONNECTIONS_PER_USER,
  };
  registerUserStream(router, deps);
  registerProjectStream(router, { ...deps, authorize: authorizeProjectStream });
}
