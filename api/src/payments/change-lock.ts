import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ChangeLock } from './service.ts';

/** Deletes the lock only while it is still the holder's (an expired one may be another change's by now). */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * A user's plan change held in Redis (`SET NX PX`): no pooled database connection waits on
 * Stripe, and a second change of the same user finds the key and answers at once. The key
 * expires after `ttlMs` should its holder die before releasing it.
 */
export function redisChangeLock(redis: Redis, ttlMs: number): ChangeLock {
  return {
    async acquire(userId) {
      const key = `plan-change:${userId}`;
      const token = randomUUID();
      if ((await redis.set(key, token, 'PX', ttlMs, 'NX')) !== 'OK') return undefined;
      return async () => {
        await redis.eval(RELEASE, 1, key, token);
      };
    },
  };
}
