import type { AccountsService } from '../accounts/accounts-service.ts';
import type { ChannelSubscriber } from './stream-subscriber.ts';
import type { Config } from '../config.ts';
import type { EventBus } from './bus.ts';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { StreamMetrics } from '../ops/metrics.ts';
import { authorizeProjectStream } from './project-access.ts';
import { registerProjectStream, registerUserStream, type StreamDeps } from './stream.ts';
import { StreamBudget, StreamConnections, streamBudgetOf, streamLeaseMs } from './stream-connections.ts';
import type { AppRouter } from '../accounts/guards.ts';

type EventStreamServices = { config: Config; bus: EventBus; subscriber: ChannelSubscriber; redis: Redis; accounts: AccountsService; logger: Logger; metrics: Registry };

/** The user stream and the project stream, wired from the services. */
export function registerEventStreams(router: AppRouter, services: EventStreamServices): void {
  const { config } = services;
  const deps: StreamDeps = {
    bus: services.bus,
    subscriber: services.subscriber,
    // Per-user leases, one cap per kind of stream.
    connections: new StreamConnections(services.redis, streamLeaseMs(config.SSE_KEEPALIVE_SECONDS)),
    budget: new StreamBudget(streamBudgetOf(config.HTTP_MAX_CONNECTIONS, config.SSE_STREAM_SHARE_PERCENT)),
    sessions: services.accounts.sessions,
    apiKeys: services.accounts.apiKeys,
    logger: services.logger,
    metrics: new StreamMetrics(services.metrics),
    keepaliveSeconds: config.SSE_KEEPALIVE_SECONDS,
    maxConnectionsPerUser: config.SSE_MAX_CONNECTIONS_PER_USER,
  };
  registerUserStream(router, deps);
  registerProjectStream(router, { ...deps, authorize: authorizeProjectStream });
}
