import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { SignJWT, jwtVerify } from 'jose';
import type { Clock } from '../shared/clock.ts';

/** What an e-mailed token lets its holder do, and for how long. */
export const TOKEN_LIFETIME_SECONDS = {
  'verify-email': 24 * 3600,
  'reset-password': 3600,
  'change-email': 24 * 3600,
} as const;

export type TokenPurpose = keyof typeof TOKEN_LIFETIME_SECONDS;

export interface EmailTokenClaims {
  purpose: TokenPurpose;
  /** The user the token was issued to. */
  userId: string;
  /** The address the link was mailed to (for change-email, the new address). */
  email: string;
  /** Unique per token, so once-only tokens can be marked used. */
  tokenId: string;
  expiresAt: Date;
}

export class InvalidToken extends Error {}

/** A once-only token presented a second time. */
export class UsedToken extends Error {}

const ISSUER = 'cutroom';

/**
 * Signed JWTs (HS256 with SECRET_KEY) for verification, reset and e-mail-change links.
 * Once-only tokens are marked used in Redis until they would have expired anyway.
 */
export class EmailTokens {
  readonly #key: Uint8Array;
  readonly #clock: Clock;
  readonly #redis: Redis;

  constructor(secretKey: string, clock: Clock, redis: Redis) {
    this.#key = new TextEncoder().encode(secretKey);
    this.#clock = clock;
    this.#redis = redis;
  }

  async issue(purpose: TokenPurpose, userId: string, email: string): Promise<string> {
    const now = Math.floor(this.#clock.now().getTime() / 1000);
    return new SignJWT({ email })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(purpose)
      .setSubject(userId)
      .setJti(randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + TOKEN_LIFETIME_SECONDS[purpose])
      .sign(this.#key);
  }

  /** The token's claims if it is genuine, meant for `purpose` and unexpired by the service clock. */
  async read(token: string, purpose: TokenPurpose): Promise<EmailTokenClaims> {
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        issuer: ISSUER,
        audience: purpose,
        algorithms: ['HS256'],
        currentDate: this.#clock.now(),
        requiredClaims: ['sub', 'jti', 'exp'],
      });
      if (typeof payload.email !== 'string') throw new InvalidToken('token without email');
      return { purpose, userId: payload.sub!, email: payload.email, tokenId: payload.jti!, expiresAt: new Date(payload.exp! * 1000) };
    } catch (error) {
      throw new InvalidToken('invalid or expired token', { cause: error });
    }
  }

  /** Marks a token read by `read` as used; UsedToken if it already was (atomic across replicas). */
  async markUsed(claims: EmailTokenClaims): Promise<void> {
    const remaining = Math.max(1000, claims.expiresAt.getTime() - this.#clock.now().getTime());
    const fresh = await this.#redis.set(`used-token:${claims.tokenId}`, '1', 'PX', remaining, 'NX');
    if (fresh !== 'OK') throw new UsedToken('token already used');
  }
}
