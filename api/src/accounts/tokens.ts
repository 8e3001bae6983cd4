import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../shared/clock.ts';

/** What an e-mailed token lets its holder do, and for how long. */
const TOKEN_LIFETIME_SECONDS = {
  'verify-email': 24 * 3600,
  'reset-password': 3600,
  'change-email': 24 * 3600,
} as const;

export type TokenPurpose = keyof typeof TOKEN_LIFETIME_SECONDS;

/** Links that work once, and only the newest of their purpose for their user. */
const SINGLE_USE: readonly TokenPurpose[] = ['reset-password', 'change-email'];

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
 * Takes a single-use token: 'used' if it was taken before, 'superseded' unless it is
 * still its user's newest link of its purpose (a newer link, a password or an address
 * change replaced it), else marks it used and forgets it as the newest. Atomic, so two
 * replicas cannot both take one token, nor an old and a new link both work.
 */
const TAKE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'used' end
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 'superseded' end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
redis.call('DEL', KEYS[2])
return 'ok'
`;

/**
 * Signed JWTs (HS256 with SECRET_KEY) for verification, reset and e-mail-change links.
 * Reset and e-mail-change tokens work once, and only the newest one issued to a user for
 * that purpose: Redis keeps the newest one's id, and the used ones until they would have
 * expired anyway.
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
    const tokenId = randomUUID();
    // Issuing a single-use link replaces the user's earlier ones of the same purpose.
    if (SINGLE_USE.includes(purpose)) await this.#redis.set(newestKey(purpose, userId), tokenId, 'EX', TOKEN_LIFETIME_SECONDS[purpose]);
    const { SignJWT } = await jose();
    return new SignJWT({ email })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(purpose)
      .setSubject(userId)
      .setJti(tokenId)
      .setIssuedAt(now)
      .setExpirationTime(now + TOKEN_LIFETIME_SECONDS[purpose])
      .sign(this.#key);
  }

  /** The token's claims if it is genuine, meant for `purpose` and unexpired by the service clock. */
  async read(token: string, purpose: TokenPurpose): Promise<EmailTokenClaims> {
    try {
      const { jwtVerify } = await jose();
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

  /**
   * Takes a single-use token read by `read`: UsedToken if it was taken before,
   * InvalidToken if a newer link of its purpose, or a password or address change,
   * replaced it (atomic across replicas).
   */
  async take(claims: EmailTokenClaims): Promise<void> {
    const remaining = Math.max(1000, claims.expiresAt.getTime() - this.#clock.now().getTime());
    const outcome = await this.#redis.eval(TAKE, 2, `used-token:${claims.tokenId}`, newestKey(claims.purpose, claims.userId), claims.tokenId, remaining);
    if (outcome === 'used') throw new UsedToken('token already used');
    if (outcome === 'superseded') throw new InvalidToken('a newer link or a change replaced this token');
  }

  /** Every single-use link issued so far to the user stops working (the password or the address changed). */
  async revokeAll(userId: string): Promise<void> {
    await this.#redis.del(...SINGLE_USE.map((purpose) => newestKey(purpose, userId)));
  }
}

/** jose is loaded with the first e-mailed link made or read, not at start-up. */
const jose = () => import('jose');

const newestKey = (purpose: TokenPurpose, userId: string) => `newest-link:${purpose}:${userId}`;
