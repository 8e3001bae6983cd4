import type { Redis } from 'ioredis';
import type { Configuration } from 'openid-client';
import type { Logger } from 'pino';

/** The provider name in routes (`/auth/oauth/idp`) and in check-auth's `oauth_providers`. */
export const PROVIDER_NAME = 'idp';

/** Who the identity provider says signed in. */
export interface ProviderIdentity {
  issuer: string;
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
  preferredUsername: string | undefined;
}

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Read per request: the public address can be known only once the server listens. */
  redirectUri: () => string;
}

/** Why a sign-in through the provider cannot go on. */
export class OidcSignInError extends Error {
  readonly reason: 'unavailable' | 'rejected';

  constructor(reason: 'unavailable' | 'rejected', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

interface PendingSignIn {
  verifier: string;
  nonce: string;
}

type OpenIdClient = typeof import('openid-client');
let openIdClient: Promise<OpenIdClient> | undefined;

/** openid-client (with jose) is loaded by the first sign-in through the provider, not at start-up. */
function loadClient(): Promise<OpenIdClient> {
  openIdClient ??= import('openid-client');
  return openIdClient;
}

const PENDING_SECONDS = 600;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * OpenID Connect authorization-code sign-in with PKCE, state and nonce (openid-client).
 * What the callback must check is kept in Redis for ten minutes under the state, and the
 * state also goes to the browser in a cookie, so a callback is accepted only from the
 * browser that started it, and only once.
 */
export class OidcSignIn {
  readonly #settings: OidcSettings;
  readonly #redis: Redis;
  readonly #logger: Logger;
  #configuration: Promise<Configuration> | undefined;

  constructor(settings: OidcSettings, redis: Redis, logger: Logger) {
    this.#settings = settings;
    this.#redis = redis;
    this.#logger = logger;
  }

  /** The authorization address to send the browser to, and the state to bind to it. */
  async start(): Promise<{ url: string; state: string }> {
    const configuration = await this.#discover();
    const client = await loadClient();
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const pending: PendingSignIn = { verifier, nonce };
    await this.#redis.set(pendingKey(state), JSON.stringify(pending), 'EX', PENDING_SECONDS);
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.#settings.redirectUri(),
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, state };
  }

  /**
   * Completes the sign-in from the provider's redirect: checks state (against the
   * browser's cookie and the pending record), PKCE and nonce, then reads the user's claims.
   */
  async finish(query: URLSearchParams, browserState: string | undefined): Promise<ProviderIdentity> {
    const state = query.get('state');
    if (!state || !browserState || state !== browserState) throw new OidcSignInError('rejected', 'state does not match the browser');
    const raw = await this.#redis.getdel(pendingKey(state));
    if (!raw) throw new OidcSignInError('rejected', 'unknown or expired state');
    const pending = JSON.parse(raw) as PendingSignIn;
    const configuration = await this.#discover();
    const client = await loadClient();
    const currentUrl = new URL(this.#settings.redirectUri());
    currentUrl.search = query.toString();
    try {
      const tokens = await client.authorizationCodeGrant(configuration, currentUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims) throw new OidcSignInError('rejected', 'no ID token');
      const info = await client.fetchUserInfo(configuration, tokens.access_token, claims.sub);
      const email = stringClaim(info.email) ?? stringClaim(claims.email);
      return {
        issuer: configuration.serverMetadata().issuer,
        subject: claims.sub,
        email: email?.toLowerCase(),
        emailVerified: (info.email_verified ?? claims.email_verified) === true,
        name: stringClaim(info.name) ?? stringClaim(claims.name),
        preferredUsername: stringClaim(info.preferred_username) ?? stringClaim(claims.preferred_username),
      };
    } catch (error) {
      if (error instanceof OidcSignInError) throw error;
      this.#logger.warn({ err: error }, 'identity-provider callback rejected');
      throw new OidcSignInError('rejected', 'the provider response did not verify', { cause: error });
    }
  }

  /** Discovery once, retried on the next request if the provider was unreachable. */
  #discover(): Promise<Configuration> {
    this.#configuration ??= (async () => {
      const client = await loadClient();
      const issuer = new URL(this.#settings.issuer);
      // Plain HTTP only for a provider on this machine (development and tests).
      const execute = issuer.protocol === 'http:' && LOOPBACK.has(issuer.hostname) ? [client.allowInsecureRequests] : [];
      try {
        return await client.discovery(issuer, this.#settings.clientId, this.#settings.clientSecret, undefined, { execute, timeout: 10 });
      } catch (error) {
        this.#configuration = undefined;
        this.#logger.warn({ err: error, issuer: this.#settings.issuer }, 'identity-provider discovery failed');
        throw new OidcSignInError('unavailable', 'identity provider unreachable', { cause: error });
      }
    })();
    return this.#configuration;
  }
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

const pendingKey = (state: string) => `oidc-pending:${state}`;
