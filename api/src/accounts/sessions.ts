import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../shared/clock.ts';

/** A server-side session, as held in Redis. */
export interface Session {
  /** Hash of the cookie value: what Redis is keyed by, so a leaked store holds no usable cookie. */
  key: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
  rememberMe: boolean;
}

export interface SessionLifetimes {
  /** SESSION_COOKIE_MAX_AGE. */
  sessionSeconds: number;
  /** SESSION_REMEMBER_ME_DAYS, for both the session and its CSRF tokens. */
  rememberMeSeconds: number;
  /** SESSION_TIMEOUT_MINUTES: how long a CSRF token lives without being used. */
  csrfSeconds: number;
}

interface StoredSession {
  user_id: string;
  created_at: number;
  expires_at: number;
  remember_me: boolean;
}

interface StoredCsrf {
  session: string;
  expires_at: number;
}

const hash = (value: string) => createHash('sha256').update(value).digest('base64url');
const newSecret = () => randomBytes(32).toString('base64url');

/**
 * Sessions and CSRF tokens in Redis. Expiry is judged by the service clock (tests move
 * it); Redis TTLs only clean up. Each user has a set of session keys so every session
 * can be ended at once.
 */
export class SessionStore {
  readonly #redis: Redis;
  readonly #clock: Clock;
  readonly #lifetimes: SessionLifetimes;

  constructor(redis: Redis, clock: Clock, lifetimes: SessionLifetimes) {
    this.#redis = redis;
    this.#clock = clock;
    this.#lifetimes = lifetimes;
  }

  /** A new session; the returned `cookie` is the only place its secret exists. */
  async create(userId: string, rememberMe: boolean): Promise<{ cookie: string; session: Session }> {
    const cookie = newSecret();
    const now = this.#clock.now().getTime();
    const lifetime = (rememberMe ? this.#lifetimes.rememberMeSeconds : this.#lifetimes.sessionSeconds) * 1000;
    const session: Session = { key: hash(cookie), userId, createdAt: new Date(now), expiresAt: new Date(now + lifetime), rememberMe };
    const stored: StoredSession = { user_id: userId, created_at: now, expires_at: now + lifetime, remember_me: rememberMe };
    await this.#redis
      .multi()
      .set(sessionKey(session.key), JSON.stringify(stored), 'PX', lifetime)
      .sadd(userSessionsKey(userId), session.key)
      .pexpire(userSessionsKey(userId), this.#lifetimes.rememberMeSeconds * 1000)
      .exec();
    return { cookie, session };
  }

  /** The live session behind a cookie value, or null. */
  async find(cookie: string): Promise<Session | null> {
    const key = hash(cookie);
    const raw = await this.#redis.get(sessionKey(key));
    if (!raw) return null;
    const stored = JSON.parse(raw) as StoredSession;
    if (stored.expires_at <= this.#clock.now().getTime()) {
      await this.#forget(key, stored.user_id);
      return null;
    }
    return {
      key,
      userId: stored.user_id,
      createdAt: new Date(stored.created_at),
      expiresAt: new Date(stored.expires_at),
      rememberMe: stored.remember_me,
    };
  }

  async end(session: Session): Promise<void> {
    await this.#forget(session.key, session.userId);
  }

  /** Ends every session of a user; returns how many were live. */
  async endAll(userId: string): Promise<number> {
    const keys = await this.#redis.smembers(userSessionsKey(userId));
    if (keys.length === 0) return 0;
    const transaction = this.#redis.multi();
    for (const key of keys) transaction.get(sessionKey(key));
    for (const key of keys) transaction.del(sessionKey(key));
    transaction.srem(userSessionsKey(userId), ...keys);
    const results = (await transaction.exec()) ?? [];
    const now = this.#clock.now().getTime();
    return results.slice(0, keys.length).filter(([, raw]) => typeof raw === 'string' && (JSON.parse(raw) as StoredSession).expires_at > now).length;
  }

  /** A fresh CSRF token bound to the session. */
  async issueCsrfToken(session: Session): Promise<string> {
    const token = newSecret();
    await this.#storeCsrf(hash(token), session);
    return token;
  }

  /** Whether the token was issued to this session and is still alive; using it extends its life. */
  async checkCsrfToken(session: Session, token: string | undefined): Promise<boolean> {
    if (!token) return false;
    const key = hash(token);
    const raw = await this.#redis.get(csrfKey(key));
    if (!raw) return false;
    const stored = JSON.parse(raw) as StoredCsrf;
    if (stored.session !== session.key || stored.expires_at <= this.#clock.now().getTime()) return false;
    await this.#storeCsrf(key, session);
    return true;
  }

  async #storeCsrf(key: string, session: Session): Promise<void> {
    const lifetime = (session.rememberMe ? this.#lifetimes.rememberMeSeconds : this.#lifetimes.csrfSeconds) * 1000;
    const expiresAt = Math.min(this.#clock.now().getTime() + lifetime, session.expiresAt.getTime());
    const stored: StoredCsrf = { session: session.key, expires_at: expiresAt };
    await this.#redis.set(csrfKey(key), JSON.stringify(stored), 'PX', Math.max(1, expiresAt - this.#clock.now().getTime()));
  }

  async #forget(key: string, userId: string): Promise<void> {
    await this.#redis.multi().del(sessionKey(key)).srem(userSessionsKey(userId), key).exec();
  }
}

const sessionKey = (key: string) => `session:${key}`;
const userSessionsKey = (userId: string) => `user-sessions:${userId}`;
const csrfKey = (key: string) => `csrf:${key}`;
