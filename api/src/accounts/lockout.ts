import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../shared/clock.ts';

export interface LockoutPolicy {
  /** LOGIN_MAX_ATTEMPTS: failures allowed within the window; one more locks. */
  maxAttempts: number;
  windowSeconds: number;
  baseSeconds: number;
  maxSeconds: number;
}

/** Rounds are forgotten after a day without failures, as well as on success. */
const FORGET_ROUNDS_AFTER_MS = 86_400_000;

/**
 * Records one failure for one subject (an IP or an account) at `now`. Failures live in
 * a sorted set by time, so "within the window" is exact; the lockout state (round,
 * locked_until) lives in a hash. Returns locked_until in ms, or 0 when not locked.
 */
const RECORD_FAILURE = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local max_attempts = tonumber(ARGV[3])
local base = tonumber(ARGV[4])
local cap = tonumber(ARGV[5])
local forget = tonumber(ARGV[6])
local state = redis.call('HMGET', KEYS[2], 'round', 'locked_until', 'last_failure')
local round = tonumber(state[1]) or 0
local locked_until = tonumber(state[2]) or 0
local last_failure = tonumber(state[3]) or now
if locked_until > now then return locked_until end
if now - last_failure > forget then round = 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZADD', KEYS[1], now, ARGV[7])
local failures = redis.call('ZCARD', KEYS[1])
locked_until = 0
if failures > max_attempts then
  locked_until = now + math.min(base * (2 ^ round), cap)
  round = round + 1
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[2], 'round', round, 'locked_until', locked_until, 'last_failure', now)
local keep = math.ceil((forget + window + cap) / 1000)
redis.call('EXPIRE', KEYS[1], keep)
redis.call('EXPIRE', KEYS[2], keep)
return locked_until
`;

/**
 * Login lockout, counted per IP and per account (spec, Authentication rule 5): more
 * than maxAttempts failures within the window locks for base × 2^round seconds, capped.
 * Time comes from the service clock so tests drive it.
 */
export class LoginLockout {
  readonly #redis: Redis;
  readonly #clock: Clock;
  readonly #policy: LockoutPolicy;

  constructor(redis: Redis, clock: Clock, policy: LockoutPolicy) {
    this.#redis = redis;
    this.#clock = clock;
    this.#policy = policy;
  }

  /** Seconds until the longest lock among the subjects ends, or 0. */
  async secondsLocked(subjects: readonly string[]): Promise<number> {
    const now = this.#clock.now().getTime();
    const values = await Promise.all(subjects.map((subject) => this.#redis.hget(stateKey(subject), 'locked_until')));
    const until = Math.max(0, ...values.map((value) => Number(value ?? 0)));
    return until > now ? Math.ceil((until - now) / 1000) : 0;
  }

  /** Counts a failure against every subject; returns the seconds locked as a result, or 0. */
  async recordFailure(subjects: readonly string[]): Promise<number> {
    const now = this.#clock.now().getTime();
    const { windowSeconds, maxAttempts, baseSeconds, maxSeconds } = this.#policy;
    const results = await Promise.all(
      subjects.map((subject) =>
        this.#redis.eval(
          RECORD_FAILURE,
          2,
          failuresKey(subject),
          stateKey(subject),
          now,
          windowSeconds * 1000,
          maxAttempts,
          baseSeconds * 1000,
          maxSeconds * 1000,
          FORGET_ROUNDS_AFTER_MS,
          `${now}:${randomUUID()}`,
        ),
      ),
    );
    const until = Math.max(0, ...results.map(Number));
    return until > now ? Math.ceil((until - now) / 1000) : 0;
  }

  /** A successful login clears the lockout state of every subject. */
  async clear(subjects: readonly string[]): Promise<void> {
    if (subjects.length) await this.#redis.del(...subjects.flatMap((subject) => [failuresKey(subject), stateKey(subject)]));
  }
}

const failuresKey = (subject: string) => `login-failures:${subject}`;
const stateKey = (subject: string) => `login-lockout:${subject}`;
