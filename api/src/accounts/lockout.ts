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
 * How long a reserved attempt holds its place if it is never settled (a crashed
 * process). A bcrypt comparison takes ~0.2 s at cost 12, so 30 s is two orders of
 * magnitude of queueing; short enough that stranded places free themselves soon. A
 * place lost to this timeout only loosens the bound on comparisons in flight: a
 * success is still refused once a lock is set.
 */
export const RESERVATION_MS = 30_000;

/**
 * Every script takes three keys per subject (an IP or an account): its failures (a
 * sorted set by time, so "within the window" is exact), its lockout state (a hash of
 * round, locked_until, last_failure) and its attempts in flight (a sorted set of
 * reservation ids by expiry). Times are the service clock's, passed in ARGV[1].
 */

/**
 * Reserves one comparison against every subject, or none: refused while any subject is
 * locked ({'locked', until}) or while its failures plus the attempts in flight, this one
 * included, would exceed max_attempts + 1 ({'busy', 0}), so concurrent guesses can never
 * compare more than a sequential attacker could.
 */
const RESERVE = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local places = tonumber(ARGV[3]) + 1
local expires = now + tonumber(ARGV[4])
local id = ARGV[5]
local keep_ms = tonumber(ARGV[6])
local locked_until = 0
local busy = false
for i = 1, #KEYS, 3 do
  local until_ms = tonumber(redis.call('HGET', KEYS[i + 1], 'locked_until')) or 0
  if until_ms > now then locked_until = math.max(locked_until, until_ms) end
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  redis.call('ZREMRANGEBYSCORE', KEYS[i + 2], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) + redis.call('ZCARD', KEYS[i + 2]) + 1 > places then busy = true end
end
if locked_until > 0 then return {'locked', locked_until} end
if busy then return {'busy', 0} end
for i = 1, #KEYS, 3 do
  redis.call('ZADD', KEYS[i + 2], expires, id)
  redis.call('PEXPIRE', KEYS[i + 2], keep_ms)
end
return {'reserved', 0}
`;

/**
 * Turns the reservation into a failure of every subject not locked meanwhile (a locked
 * subject does not count it, as a locked attempt is not counted). More than
 * max_attempts failures within the window locks for base × 2^round, capped. Returns
 * the latest locked_until in ms, or 0.
 */
const RECORD_FAILURE = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local max_attempts = tonumber(ARGV[3])
local base = tonumber(ARGV[4])
local cap = tonumber(ARGV[5])
local forget = tonumber(ARGV[6])
local id = ARGV[7]
local keep = math.ceil((forget + window + cap) / 1000)
local result = 0
for i = 1, #KEYS, 3 do
  redis.call('ZREM', KEYS[i + 2], id)
  local state = redis.call('HMGET', KEYS[i + 1], 'round', 'locked_until', 'last_failure')
  local round = tonumber(state[1]) or 0
  local locked_until = tonumber(state[2]) or 0
  local last_failure = tonumber(state[3]) or now
  if locked_until <= now then
    if now - last_failure > forget then round = 0 end
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
    redis.call('ZADD', KEYS[i], now, id)
    locked_until = 0
    if redis.call('ZCARD', KEYS[i]) > max_attempts then
      locked_until = now + math.min(base * (2 ^ round), cap)
      round = round + 1
      redis.call('DEL', KEYS[i])
    end
    redis.call('HSET', KEYS[i + 1], 'round', round, 'locked_until', locked_until, 'last_failure', now)
    redis.call('EXPIRE', KEYS[i], keep)
    redis.call('EXPIRE', KEYS[i + 1], keep)
  end
  result = math.max(result, locked_until)
end
return result
`;

/**
 * Settles a reservation whose password was right: refused (returns locked_until) when
 * any subject was locked meanwhile by a concurrent failure; otherwise, when ARGV[3] is
 * '1' (the login succeeds), clears failures and lockout state of every subject. Other
 * attempts still in flight keep their places either way.
 */
const SETTLE_MATCH = `
local now = tonumber(ARGV[1])
local id = ARGV[2]
local locked_until = 0
for i = 1, #KEYS, 3 do
  redis.call('ZREM', KEYS[i + 2], id)
  local until_ms = tonumber(redis.call('HGET', KEYS[i + 1], 'locked_until')) or 0
  if until_ms > now then locked_until = math.max(locked_until, until_ms) end
end
if locked_until > 0 then return locked_until end
if ARGV[3] == '1' then
  for i = 1, #KEYS, 3 do redis.call('DEL', KEYS[i], KEYS[i + 1]) end
end
return 0
`;

/** Drops a reservation without counting it (the attempt ended some other way). */
const RELEASE = `
for i = 1, #KEYS, 3 do redis.call('ZREM', KEYS[i + 2], ARGV[1]) end
return 0
`;

/** The outcome of asking to compare a password: a reservation, or a refusal with Retry-After seconds. */
export type AttemptReservation =
  | { reserved: true; attempt: LoginAttempt }
  /** `locked`: a lockout runs; otherwise enough attempts are in flight to reach one. */
  | { reserved: false; locked: boolean; retryAfterSeconds: number };

/** A reserved login attempt: settle it exactly once with `failed`, `matched` or `release`. */
export interface LoginAttempt {
  readonly subjects: readonly string[];
  readonly id: string;
}

/**
 * Login lockout, counted per IP and per account (spec, Authentication rule 5): more
 * than maxAttempts failures within the window locks for base × 2^round seconds, capped.
 * Check and count are atomic (Redis scripts), so concurrent guesses get no more
 * comparisons than sequential ones: an attempt reserves its place before the password
 * is compared and settles it after. Time comes from the service clock so tests drive it.
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

  /**
   * Reserves a comparison against every subject. Refused while one is locked (for the
   * rest of the lock) or while enough attempts are in flight to reach a lock (1 s:
   * they settle within about a comparison's time).
   */
  async reserve(subjects: readonly string[]): Promise<AttemptReservation> {
    const now = this.#now();
    const id = randomUUID();
    const [outcome, until] = (await this.#run(RESERVE, subjects, now, this.#policy.windowSeconds * 1000, this.#policy.maxAttempts, RESERVATION_MS, id, RESERVATION_MS * 2)) as [string, number];
    if (outcome === 'reserved') return { reserved: true, attempt: { subjects, id } };
    const locked = outcome === 'locked';
    return { reserved: false, locked, retryAfterSeconds: locked ? this.#secondsUntil(until, now) : 1 };
  }

  /** The password was wrong: counts a failure against every subject; returns the seconds locked as a result, or 0. */
  async failed(attempt: LoginAttempt): Promise<number> {
    const now = this.#now();
    const { windowSeconds, maxAttempts, baseSeconds, maxSeconds } = this.#policy;
    const until = await this.#run(RECORD_FAILURE, attempt.subjects, now, windowSeconds * 1000, maxAttempts, baseSeconds * 1000, maxSeconds * 1000, FORGET_ROUNDS_AFTER_MS, attempt.id);
    return this.#secondsUntil(Number(until), now);
  }

  /**
   * The password was right. Returns the seconds of a lock set meanwhile by a concurrent
   * failure (the attempt must then be refused), or 0; with `clear` (the login succeeds)
   * it also clears the lockout state of every subject, as the spec says.
   */
  async matched(attempt: LoginAttempt, options: { clear: boolean }): Promise<number> {
    const now = this.#now();
    const until = await this.#run(SETTLE_MATCH, attempt.subjects, now, attempt.id, options.clear ? '1' : '0');
    return this.#secondsUntil(Number(until), now);
  }

  /** Gives the place back without counting anything. */
  async release(attempt: LoginAttempt): Promise<void> {
    await this.#run(RELEASE, attempt.subjects, attempt.id);
  }

  /** Forgets failures and lockouts of the subjects (a password reset); attempts in flight keep their places. */
  async clear(subjects: readonly string[]): Promise<void> {
    if (subjects.length) await this.#redis.del(...subjects.flatMap((subject) => [failuresKey(subject), stateKey(subject)]));
  }

  #run(script: string, subjects: readonly string[], ...args: (string | number)[]): Promise<unknown> {
    const keys = subjects.flatMap((subject) => [failuresKey(subject), stateKey(subject), inFlightKey(subject)]);
    return this.#redis.eval(script, keys.length, ...keys, ...args);
  }

  #now(): number {
    return this.#clock.now().getTime();
  }

  #secondsUntil(until: number, now: number): number {
    return until > now ? Math.ceil((until - now) / 1000) : 0;
  }
}

const failuresKey = (subject: string) => `login-failures:${subject}`;
const stateKey = (subject: string) => `login-lockout:${subject}`;
const inFlightKey = (subject: string) => `login-in-flight:${subject}`;
