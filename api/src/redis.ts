import { Redis } from 'ioredis';
import type { Config } from './config.ts';

/**
 * Redis for sessions, CSRF tokens, rate limits and progress snapshots. Every key and
 * channel carries REDIS_KEY_PREFIX so several deployments (or test runs) share a server.
 */
export function createRedis(config: Pick<Config, 'REDIS_URL' | 'REDIS_KEY_PREFIX'>): Redis {
  return new Redis(config.REDIS_URL, {
    keyPrefix: config.REDIS_KEY_PREFIX,
    lazyConnect: false,
    maxRetriesPerRequest: 2,
    connectTimeout: 2000,
    enableOfflineQueue: true,
  });
}
