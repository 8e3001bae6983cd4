import { z } from 'zod';

const MiB = 1024 * 1024;
const DEV_SECRET_KEY = 'dev-secret-change-me-in-production';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');
const int = (min = 0) => z.coerce.number().int().min(min);
const url = z.url();
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

/**
 * Every knob of the service, by its environment name, with its default.
 * `describe()` texts feed the README's configuration table (a test keeps them in step).
 */
export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development').describe('Runtime environment.'),
  HOST: z.string().default('127.0.0.1').describe('Address the api listens on.'),
  PORT: int().max(65535).default(8000).describe('Port the api listens on (0 picks a free one).'),
  PUBLIC_BASE_URL: optional(url).describe('Public address of the api, used in e-mailed links and playback URLs; defaults to http://HOST:PORT.'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('JSON log level.'),
  SECRET_KEY: z.string().min(16).default(DEV_SECRET_KEY).describe('Key that signs e-mail tokens and playback tokens (set a long random value in production; the default is refused there).'),
  TRUST_PROXY: bool.default(false).describe('Trust X-Forwarded-For (behind an ingress).'),
  TRUSTED_PROXY_HOPS: int(1).max(10).default(1).describe('With TRUST_PROXY: how many proxies in front of the api append to X-Forwarded-For; entries further left are the client\'s own claims and are ignored.'),
  MAX_JSON_BODY_BYTES: int(1).default(1 * MiB).describe('Largest accepted JSON or form body; larger gets 413.'),
  HTTP_HEADERS_TIMEOUT_MS: int(100).default(10_000).describe('A connection must deliver the headers of its request within this time (also a connection that sends nothing); then it is closed.'),
  HTTP_REQUEST_TIMEOUT_MS: int(100).default(60_000).describe('A request must arrive whole (headers and body) within this time, or gets 408 and is closed. Event streams are unaffected: their request is complete at once.'),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(100).default(5_000).describe('An idle keep-alive connection is closed after this time, plus the second of grace Node adds (behind a proxy that reuses connections, set it above the proxy\'s idle timeout).'),
  HTTP_MAX_CONNECTIONS: int(1).default(1000).describe('Open connections the api accepts at once (event streams included); further ones are closed on arrival. Keep it below the descriptor limit (ulimit -n) with room for database, Redis and S3 sockets.'),
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: int(1).default(200).describe('Open connections one client address may hold at once (event streams included); further ones from it are closed on arrival. Behind an ingress every connection comes from the ingress: raise it above what the ingress opens, and cap per client there.'),
  METRICS_TOKEN: optional(z.string().min(16)).describe('When set, /metrics requires `Authorization: Bearer <token>` (at least 16 characters); unset, /metrics is public.'),

  DATABASE_URL: url.default('postgres://postgres@127.0.0.1:5432/cutroom').describe('PostgreSQL connection URL.'),
  DATABASE_POOL_MAX: int(1).default(10).describe('PostgreSQL pool size per process.'),
  REDIS_URL: url.default('redis://127.0.0.1:6379/0').describe('Redis connection URL.'),
  REDIS_KEY_PREFIX: z.string().default('cutroom:').describe('Prefix of every Redis key and channel.'),

  S3_ENDPOINT: optional(url).describe('S3-compatible endpoint; unset means AWS S3.'),
  S3_PUBLIC_ENDPOINT: optional(url).describe('Endpoint used in presigned URLs handed to clients, if it differs from S3_ENDPOINT.'),
  S3_REGION: z.string().default('us-east-1').describe('S3 region.'),
  S3_BUCKET: z.string().min(3).default('cutroom-media').describe('Bucket holding media objects.'),
  S3_ACCESS_KEY_ID: z.string().default('S3RVER').describe('S3 access key id.'),
  S3_SECRET_ACCESS_KEY: z.string().default('S3RVER').describe('S3 secret access key.'),
  S3_FORCE_PATH_STYLE: bool.default(true).describe('Path-style bucket addressing (needed by most S3-compatible stores).'),

  JOB_BACKEND: z.enum(['local', 'kubernetes']).default('local').describe('Who runs jobs: child processes of the api, or custom resources for the operator.'),
  JOB_LOCAL_CONCURRENCY: int(1).default(2).describe('Local backend: jobs run at once per kind.'),
  JOB_LOCAL_SHORT_RENDER_SECONDS: int(1).default(600).describe('Local backend, with two render slots or more: renders whose timeout is longer than this hold all slots but one, which stays for short renders, so a short export never waits behind long ones.'),
  JOB_TIMEOUT_SECONDS: int(1).default(3600).describe('Longest a job may run, on either backend (the spec of every job carries it).'),
  JOB_DISPATCH_POLL_MS: int(50).default(2000).describe('How often the job outbox looks for jobs not handed to the backend yet (it is also woken at each commit).'),
  EXPORT_MAX_ACTIVE_PER_USER: int(1).default(3).describe('Exports of one user queued or rendering at once; one more is 409.'),
  EXPORT_MAX_OUTPUT_SECONDS: int(1).default(3600).describe('Longest output an export may render (kept time plus inserts); a longer one is 409 naming the limit.'),
  EXPORT_MAX_SEGMENTS: int(1).default(250).describe('Most pieces an export may join (each is a branch of the filter graph of the render, whose ffmpeg inputs follow the distinct sources rather than the pieces; the graph and its work still grow with them); more is 409 naming the limit.'),
  RENDER_TIMEOUT_BASE_SECONDS: int(1).default(120).describe('A render job\'s timeout is this plus RENDER_TIMEOUT_PER_OUTPUT_SECOND × its output seconds, at most JOB_TIMEOUT_SECONDS.'),
  RENDER_TIMEOUT_PER_OUTPUT_SECOND: z.coerce.number().positive().default(3).describe('Seconds of render time allowed per second of output (see RENDER_TIMEOUT_BASE_SECONDS).'),
  IMAGE_STILL_DURATION_MS: int(1).max(3_600_000).default(5000).describe('How long an image plays on the timeline (a still), recorded as its duration_ms when it is processed; a canvas may set its own (params.duration_ms).'),
  EXPORT_SWEEP_INTERVAL_SECONDS: int(1).default(600).describe('How often completed exports past expires_at are marked expired and their outputs deleted.'),
  KUBE_NAMESPACE: z.string().default('cutroom').describe('Namespace of job custom resources (kubernetes backend).'),
  WHISPER_BASE_URL: url.default('http://127.0.0.1:8100/v1').describe('OpenAI-compatible transcription server.'),
  WHISPER_MODEL: z.string().default('whisper-1').describe('Model name sent to the transcription server.'),

  SMTP_URL: optional(url).describe('SMTP server (smtp://user:pass@host:port); unset means e-mails are written to the log.'),
  MAIL_FROM: z.string().default('Cutroom <no-reply@cutroom.local>').describe('Sender of e-mails.'),
  SUPPORT_EMAIL: z.string().default('support@cutroom.local').describe('Team address for support requests.'),
  BCRYPT_COST: int(4).max(15).default(12).describe('bcrypt cost factor.'),

  OIDC_ISSUER: optional(url).describe('OpenID Connect issuer; unset disables identity-provider sign-in.'),
  OIDC_CLIENT_ID: optional(z.string()).describe('OpenID Connect client id.'),
  OIDC_CLIENT_SECRET: optional(z.string()).describe('OpenID Connect client secret.'),

  STRIPE_SECRET_KEY: optional(z.string()).describe('Stripe secret key.'),
  STRIPE_WEBHOOK_SECRET: optional(z.string()).describe('Stripe webhook signing secret.'),
  STRIPE_API_BASE: optional(url).describe('Stripe API address (a local double in tests).'),
  STRIPE_PRICES: z.string().default('1:Hobby:month:price_hobby_month,2:Hobby:year:price_hobby_year,3:Creator:month:price_creator_month,4:Creator:year:price_creator_year,5:Viral:month:price_viral_month,6:Viral:year:price_viral_year').describe('The price table: comma-separated `price_id:tier:interval:stripe_price`, where price_id is the integer clients send.'),
  STRIPE_RETENTION_COUPON: z.string().default('cutroom-retention').describe('Stripe coupon applied once per account when a leaving subscriber accepts the discount.'),
  STRIPE_TIMEOUT_MS: int(100).default(10_000).describe('Timeout of each Stripe API call.'),
  STRIPE_MAX_NETWORK_RETRIES: int().max(5).default(1).describe('Retries of a Stripe call that failed on the network (POSTs carry an idempotency key, so a retry never charges twice).'),
  PAYMENT_GRACE_DAYS: int().default(7).describe('Days a past-due plan keeps its tier after the first failed renewal payment.'),
  RENEWAL_REMINDER_DAYS: int(1).default(3).describe('Days before renewal the reminder mail (cancellation outcome reminder_set) is sent.'),
  BETA_RENEWAL_DAYS: int(1).default(30).describe('Length of a beta credit period after the renewal date an admin set.'),
  PAYMENTS_SWEEP_MS: int(50).default(60_000).describe('How often due payment actions (renewal reminders, beta renewals) are looked for.'),
  SUPPORT_REQUESTS_PER_WINDOW: int(1).default(3).describe('Support requests a user may send per SUPPORT_REQUEST_WINDOW_SECONDS.'),
  SUPPORT_REQUEST_WINDOW_SECONDS: int(1).default(3600).describe('Window of the support request limit.'),
  MUX_TOKEN_ID: optional(z.string()).describe('Mux access token id (external video import).'),
  MUX_TOKEN_SECRET: optional(z.string()).describe('Mux access token secret.'),
  MUX_API_BASE: optional(url).describe('Mux API address (a local double in tests).'),

  SESSION_COOKIE_MAX_AGE: int(1).default(86400).describe('Session cookie max age, seconds (24 h).'),
  SESSION_TIMEOUT_MINUTES: int(1).default(30).describe('CSRF token storage lifetime, minutes.'),
  SESSION_REMEMBER_ME_DAYS: int(1).default(30).describe('Session and CSRF lifetime with remember-me, days.'),
  LOGIN_MAX_ATTEMPTS: int(1).default(5).describe('Failed logins allowed within the window before a lockout.'),
  LOGIN_ATTEMPT_WINDOW_SECONDS: int(1).default(900).describe('Window in which failed logins are counted.'),
  LOGIN_LOCKOUT_BASE_SECONDS: int(1).default(60).describe('First lockout; doubles each round.'),
  LOGIN_LOCKOUT_MAX_SECONDS: int(1).default(3600).describe('Longest lockout.'),

  STORAGE_MAX_UPLOAD_SIZE_MB: int(1).default(2048).describe('Per-file upload maximum, MB.'),
  MULTIPART_CUTOFF_BYTES: int(1).default(25 * MiB).describe('Declared size from which uploads use multipart.'),
  MULTIPART_PART_SIZE_BYTES: int(5 * MiB).default(16 * MiB).describe('Multipart part size.'),
  MULTIPART_MAX_PARTS: int(1).max(10000).default(10000).describe('Most parts of one multipart upload.'),
  MULTIPART_STALE_HOURS: int(1).default(24).describe('Uploads not finished (single PUT or multipart) within this many hours are swept with their objects.'),
  MEDIA_TOKEN_TTL_SECONDS: int(1).default(300).describe('Lifetime of playback tokens.'),
  MAX_EXTERNAL_VIDEO_DURATION_SECONDS: int(1).default(3600).describe('Longest external video accepted for import.'),
  MAX_VIDEO_DURATION_MS: int(1).default(7_200_000).describe('Longest insert edit (2 hours).'),
  SSE_MAX_CONNECTIONS_PER_USER: int(1).default(5).describe('Open event streams per user and per kind: a user may hold this many user streams and this many project streams.'),
  SSE_STREAM_SHARE_PERCENT: int(1).max(99).default(80).describe('Share of HTTP_MAX_CONNECTIONS one process gives to event streams; beyond it new streams get 503 with Retry-After, so ordinary requests always find a connection.'),
  SSE_KEEPALIVE_SECONDS: int(1).default(15).describe('Interval of SSE keepalive comments.'),

  API_KEYS_MAX_PER_USER: int(1).default(20).describe('Live (unrevoked, unexpired) API keys one user may hold; one more is 409.'),
  RATE_LIMIT_WINDOW_SECONDS: int(1).default(60).describe('Window of the general request limits (RATE_LIMIT_PER_IP, RATE_LIMIT_PER_API_KEY), announced in the RateLimit-Policy header.'),
  RATE_LIMIT_PER_IP: int().default(1200).describe('Requests to /api/v1 one client address may make per RATE_LIMIT_WINDOW_SECONDS (0: no limit). Behind an ingress set TRUST_PROXY, or every client shares the ingress address.'),
  RATE_LIMIT_PER_API_KEY: int(1).default(600).describe('Requests one API key may make per RATE_LIMIT_WINDOW_SECONDS, on top of the per-address limit.'),
  CORS_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .transform((value, context) => {
      const origins = value.split(',').map((origin) => origin.trim()).filter(Boolean);
      for (const origin of origins) {
        // An origin is scheme, host and port, nothing more: `https://app.example.com`.
        const parsed = URL.parse(origin);
        if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin) {
          context.addIssue({ code: 'custom', message: `${origin} is not an origin (scheme://host[:port], no path or trailing slash)` });
        }
      }
      return origins;
    })
    .describe('Other origins whose pages may call the api from a browser, with cookies or API keys (comma-separated, e.g. `https://app.example.com`; none by default). The embedded S3 of hack/up.sh lets them upload too; see docs/deploy.md for a real bucket.'),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool.default(false).describe('Let webhook endpoints target loopback, private, link-local, CGNAT and unique-local addresses (checked at registration and after DNS resolution on every delivery). For development and tests only.'),
  WEBHOOK_MAX_ENDPOINTS_PER_USER: int(1).default(10).describe('Webhook endpoints one user may register.'),
  WEBHOOK_TIMEOUT_MS: int(100).default(10_000).describe('A webhook receiver must answer within this time, or the attempt fails and is retried.'),
  WEBHOOK_CONCURRENCY: int(1).default(8).describe('Webhook deliveries in flight at once per api process (never more than one per endpoint).'),
  WEBHOOK_POLL_MS: int(50).default(1000).describe('How often each api process looks for due webhook deliveries.'),
  WEBHOOK_DISABLE_AFTER_DAYS: int(1).default(5).describe('An endpoint whose deliveries have failed without a success for this many days is disabled and its owner told by e-mail.'),

  SUPPORTED_LOCALES: z
    .string()
    .default('en,pt,es')
    .transform((value) => value.split(',').map((locale) => locale.trim()).filter(Boolean))
    .pipe(z.array(z.enum(['en', 'pt', 'es'])).min(1))
    .describe('Locales users may choose (comma-separated; catalogs exist for en, pt, es).'),
}).refine((config) => config.NODE_ENV !== 'production' || config.SECRET_KEY !== DEV_SECRET_KEY, {
  path: ['SECRET_KEY'],
  message: 'must be set in production (the development default signs tokens anyone can forge)',
}).refine((config) => config.HTTP_HEADERS_TIMEOUT_MS <= config.HTTP_REQUEST_TIMEOUT_MS, {
  path: ['HTTP_HEADERS_TIMEOUT_MS'],
  message: 'must not exceed HTTP_REQUEST_TIMEOUT_MS (Node refuses a headers timeout longer than the request timeout)',
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/**
 * What the domain services need (database, Redis, S3, jobs, logs): the slice the operator
 * parses, since it runs job completions but serves no HTTP.
 */
const shape = configSchema.shape;
const domainConfigSchema = z.object({
  LOG_LEVEL: shape.LOG_LEVEL,
  DATABASE_URL: shape.DATABASE_URL,
  DATABASE_POOL_MAX: shape.DATABASE_POOL_MAX,
  REDIS_URL: shape.REDIS_URL,
  REDIS_KEY_PREFIX: shape.REDIS_KEY_PREFIX,
  JOB_TIMEOUT_SECONDS: shape.JOB_TIMEOUT_SECONDS,
  JOB_DISPATCH_POLL_MS: shape.JOB_DISPATCH_POLL_MS,
  IMAGE_STILL_DURATION_MS: shape.IMAGE_STILL_DURATION_MS,
  S3_ENDPOINT: shape.S3_ENDPOINT,
  S3_PUBLIC_ENDPOINT: shape.S3_PUBLIC_ENDPOINT,
  S3_REGION: shape.S3_REGION,
  S3_BUCKET: shape.S3_BUCKET,
  S3_ACCESS_KEY_ID: shape.S3_ACCESS_KEY_ID,
  S3_SECRET_ACCESS_KEY: shape.S3_SECRET_ACCESS_KEY,
  S3_FORCE_PATH_STYLE: shape.S3_FORCE_PATH_STYLE,
});
export type DomainConfig = z.infer<typeof domainConfigSchema>;

function parseEnv<S extends z.ZodObject>(schema: S, env: Record<string, string | undefined>): z.infer<S> {
  const known = Object.fromEntries(Object.keys(schema.shape).map((name) => [name, env[name]]));
  const parsed = schema.safeParse(known);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/** Parses the environment once; a bad value stops start-up naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  return parseEnv(configSchema, env);
}

/** The operator's share of the api's variables (same names, same defaults). */
export function loadDomainConfig(env: Record<string, string | undefined> = process.env): DomainConfig {
  return parseEnv(domainConfigSchema, env);
}

/**
 * Settings that start but should not run like this: the api logs each at start-up.
 * Tests are exempt: they run on the development key on purpose.
 */
export function configWarnings(config: Config): string[] {
  const warnings: string[] = [];
  if (config.NODE_ENV !== 'test' && config.SECRET_KEY === DEV_SECRET_KEY) {
    warnings.push(
      'SECRET_KEY is the published development default: anyone can forge e-mail and playback tokens for this instance. ' +
        'Set SECRET_KEY to a long random value (e.g. `openssl rand -base64 32`); production refuses to start without one.',
    );
  }
  if (config.NODE_ENV === 'production' && !config.METRICS_TOKEN) {
    warnings.push('METRICS_TOKEN is unset: /metrics is public. Set it, and give Prometheus the same bearer token.');
  }
  return warnings;
}

export function publicBaseUrl(config: Config): string {
  return config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`;
}
