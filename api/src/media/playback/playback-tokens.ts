import type { Clock } from '../../shared/clock.ts';

/** Which stored object of a file a playback token opens. */
const playbackObjects = ['source', 'proxy', 'sprite', 'thumbnail'] as const;
export type PlaybackObject = (typeof playbackObjects)[number];

export interface PlaybackClaims {
  fileId: string;
  object: PlaybackObject;
  expiresAt: Date;
}

class InvalidPlaybackToken extends Error {}

let jose: Promise<typeof import('jose')> | undefined;
/** jose is loaded by the first token signed or read, not at start-up. */
const loadJose = () => (jose ??= import('jose'));

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
    return this.#sign(fileId, object, now, now + this.ttlSeconds);
  }

  /**
   * A token that is the same for every request within one TTL window (HS256 signs the same
   * claims the same way), so the URL carrying it is cacheable: issued at the window's start,
   * it expires a window later, so it stays valid at least a TTL. For thumbnails, shown in lists.
   */
  async issueCacheable(fileId: string, object: PlaybackObject): Promise<{ token: string; expiresIn: number }> {
    const now = Math.floor(this.#clock.now().getTime() / 1000);
    const windowStart = now - (now % this.ttlSeconds);
    const expiresAt = windowStart + 2 * this.ttlSeconds;
    return { token: await this.#sign(fileId, object, windowStart, expiresAt), expiresIn: expiresAt - now };
  }

  async #sign(fileId: string, object: PlaybackObject, issuedAt: number, expiresAt: number): Promise<string> {
    const { SignJWT } = await loadJose();
    return new SignJWT({ obj: object })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(fileId)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(this.#key);
  }

  async read(token: string): Promise<PlaybackClaims> {
    try {
      const { jwtVerify } = await loadJose();
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
