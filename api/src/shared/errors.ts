import type { MessageParams } from '../i18n/locales.ts';
import type { MessageKey } from '../i18n/message-key.ts';

/**
 * What went wrong, in the domain's words; the HTTP layer maps each kind to a status
 * (http/errors.ts) and the catalog key to the localized `detail`.
 */
const domainErrorKinds = [
  'invalid_input',
  'unauthenticated',
  'insufficient_credits',
  'forbidden',
  'limit_reached',
  'not_found',
  'not_allowed',
  'conflict',
  'gone',
  'too_large',
  'unsupported',
  'invalid',
  'rate_limited',
  'unavailable',
] as const;
export type DomainErrorKind = (typeof domainErrorKinds)[number];

export interface DomainErrorOptions {
  params?: MessageParams;
  /** A named error type the client can branch on (ValidationError, MultipartCompleteError, …). */
  code?: string;
  headers?: Record<string, string>;
  extra?: Record<string, unknown>;
  cause?: unknown;
}

/** A failure the service means to report: its kind, a catalog key and params, and optionally a named type. */
export class DomainError extends Error {
  readonly kind: DomainErrorKind;
  readonly key: MessageKey;
  readonly params: MessageParams;
  readonly code: string | undefined;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;

  constructor(kind: DomainErrorKind, key: MessageKey, options: DomainErrorOptions = {}) {
    super(key, { cause: options.cause });
    this.name = 'DomainError';
    this.kind = kind;
    this.key = key;
    this.params = options.params ?? {};
    this.code = options.code;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }
}

/** The request cannot be right as sent (a wrong password to verify, a bound exceeded). */
export const InvalidInput = (key: MessageKey = 'http.400', options?: DomainErrorOptions) => new DomainError('invalid_input', key, options);
export const Unauthenticated = (key: MessageKey = 'http.401', options?: DomainErrorOptions) => new DomainError('unauthenticated', key, options);
export const InsufficientCredits = (key: MessageKey = 'http.402', options?: DomainErrorOptions) => new DomainError('insufficient_credits', key, options);
export const Forbidden = (key: MessageKey = 'http.403', options?: DomainErrorOptions) => new DomainError('forbidden', key, options);
/** An entitlement of the plan is used up (projects, presets…). */
export const LimitReached = (key: MessageKey = 'http.403', options?: DomainErrorOptions) => new DomainError('limit_reached', key, options);
export const NotFound = (key: MessageKey = 'http.404', options?: DomainErrorOptions) => new DomainError('not_found', key, options);
export const Conflict = (key: MessageKey = 'http.409', options?: DomainErrorOptions) => new DomainError('conflict', key, options);
export const Gone = (key: MessageKey = 'http.404', options?: DomainErrorOptions) => new DomainError('gone', key, options);
/** Well-formed but not acceptable (validation, a state that forbids it). */
export const Invalid = (key: MessageKey = 'http.422', options?: DomainErrorOptions) => new DomainError('invalid', key, options);
/** A dependency (database, store, job backend, payment provider) cannot serve it now. */
export const Unavailable = (key: MessageKey = 'http.503', options?: DomainErrorOptions) => new DomainError('unavailable', key, options);

/** Too many attempts: retry after the given seconds (sent as Retry-After). */
export function RateLimited(retryAfterSeconds: number, key: MessageKey = 'http.429', options: DomainErrorOptions = {}): DomainError {
  const retryAfter = Math.max(1, Math.ceil(retryAfterSeconds));
  return new DomainError('rate_limited', key, {
    ...options,
    params: { retry_after: retryAfter, ...options.params },
    headers: { 'Retry-After': String(retryAfter), ...options.headers },
  });
}
