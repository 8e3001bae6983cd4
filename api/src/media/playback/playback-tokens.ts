import { SignJWT, jwtVerify } from 'jose';
import type { Clock } from '../../shared/clock.ts';

/** Which stored object of a file a playback token opens. */
const playbackObjects = ['source', 'proxy', 'sprite'] as const;
export type PlaybackObject = (typeof playbackObjects)[number];

export interface PlaybackClaims {
  fileId: string;
  object: PlaybackObject;
  expiresAt: Date;
}

class InvalidPlaybackToken extends Error {}

const ISSUER = 'cutroom';
const AUDIENCE = 'playback';

/** HS256 tokens (SECRET_KEY) naming one object of one file, valid MEDIA_TOKEN_TTL_SECONDS by the service clock. */
export class PlaybackTokens {
  readonly #key: Uint8Array;
  readonly #clock: Clock;
  readonly ttlSeconds: number;

  constructor(secretKey: string, clock: Clock, ttlSeconds: number) {
    this.#key = new TextEncoder().encode(secretKey);
    this.#clock = clock;
    this.ttlSeconds = ttlSeconds;
  }

  async issue(fileId: string, object: PlaybackObject): Promise<string> {
    const now = Math.floor(this.#clock.now().getTime() / 1000);
    return new SignJWT({ obj: object })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(fileId)
      .setIssuedAt(now)
      .setExpirationTime(now + this.ttlSeconds)
      .sign(this.#key);
  }

  async read(token: string): Promise<PlaybackClaims> {
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['HS256'],
        currentDate: this.#clock.now(),
        clockTolerance: 0,
        requiredClaims: ['sub', 'exp'],
      });
      const object = playbackObjects.find((name) => name === payload.obj);
      if (!object) throw new InvalidPlaybackToken('token names no object');
      return { fileId: payload.sub!, object, expiresAt: new Date(payload.exp! * 1000) };
    } catch (error) {
      throw new InvalidPlaybackToken('invalid or expired playback token', { cause: error });
    }
  }
}
