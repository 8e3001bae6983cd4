import type { Redis } from 'ioredis';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Clock } from '../shared/clock.ts';
import type { BillingService } from '../billing/billing-service.ts';
import { ApiKeys } from '../api-keys/service.ts';
import { AccountsService } from './accounts-service.ts';
import { LoginLockout } from './lockout.ts';
import type { Mailer } from './mailer.ts';
import { OidcSignIn, PROVIDER_NAME } from './oidc.ts';
import { Passwords } from './passwords.ts';
import { RateLimits } from './rate-limits.ts';
import { registerAccountRoutes } from './routes.ts';
import { SessionStore } from './sessions.ts';
import { EmailTokens } from './tokens.ts';
import type { AppRouter } from './guards.ts';

interface AccountsWiring {
  config: Config;
  orm: MikroORM;
  redis: Redis;
  clock: Clock;
  logger: Logger;
  mailer: Mailer;
  billing: BillingService;
  /** Read when a link is made: the public address may be known only once the server listens. */
  baseUrl: () => string;
}

/** The accounts service and its parts, from configuration. */
export function createAccounts(wiring: AccountsWiring): AccountsService {
  const { config, redis, clock } = wiring;
  return new AccountsService({
    orm: wiring.orm,
    clock,
    logger: wiring.logger,
    passwords: new Passwords(config.BCRYPT_COST),
    tokens: new EmailTokens(config.SECRET_KEY, clock, redis),
    apiKeys: new ApiKeys({ orm: wiring.orm, clock, maxPerUser: config.API_KEYS_MAX_PER_USER }),
    sessions: new SessionStore(redis, clock, {
      sessionSeconds: config.SESSION_COOKIE_MAX_AGE,
      rememberMeSeconds: config.SESSION_REMEMBER_ME_DAYS * 86_400,
      csrfSeconds: config.SESSION_TIMEOUT_MINUTES * 60,
    }),
    lockout: new LoginLockout(redis, clock, {
      maxAttempts: config.LOGIN_MAX_ATTEMPTS,
      windowSeconds: config.LOGIN_ATTEMPT_WINDOW_SECONDS,
      baseSeconds: config.LOGIN_LOCKOUT_BASE_SECONDS,
      maxSeconds: config.LOGIN_LOCKOUT_MAX_SECONDS,
    }),
    mailer: wiring.mailer,
    billing: wiring.billing,
    baseUrl: wiring.baseUrl,
  });
}

/** The HTTP side: rate limits, the identity provider (when OIDC_ISSUER is set) and the routes. */
export function registerAccounts(router: AppRouter, wiring: Omit<AccountsWiring, 'mailer' | 'clock'> & { accounts: AccountsService }): void {
  const { config } = wiring;
  const oidc =
    config.OIDC_ISSUER && config.OIDC_CLIENT_ID
      ? new OidcSignIn(
          {
            issuer: config.OIDC_ISSUER,
            clientId: config.OIDC_CLIENT_ID,
            clientSecret: config.OIDC_CLIENT_SECRET ?? '',
            redirectUri: () => `${wiring.baseUrl()}/api/v1/auth/oauth/callback/${PROVIDER_NAME}`,
          },
          wiring.redis,
          wiring.logger,
        )
      : undefined;
  registerAccountRoutes(router, {
    accounts: wiring.accounts,
    billing: wiring.billing,
    orm: wiring.orm,
    limits: new RateLimits(wiring.redis),
    oidc,
    config,
    baseUrl: wiring.baseUrl,
  });
}
