import type { MessageKey, MessageParams } from '../i18n/index.ts';

/**
 * A failure the service means to report: an HTTP status, a catalog key for the
 * localized `detail`, and optionally a named error type (ValidationError,
 * MultipartCompleteError) and extra body fields.
 */
export class AppError extends Error {
  readonly status: number;
  readonly key: MessageKey;
  readonly params: MessageParams;
  readonly code: string | undefined;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;

  constructor(
    status: number,
    key: MessageKey,
    options: {
      params?: MessageParams;
      code?: string;
      headers?: Record<string, string>;
      extra?: Record<string, unknown>;
      cause?: unknown;
    } = {},
  ) {
    super(key, { cause: options.cause });
    this.name = 'AppError';
    this.status = status;
    this.key = key;
    this.params = options.params ?? {};
    this.code = options.code;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }
}

type Options = ConstructorParameters<typeof AppError>[2];

export const BadRequest = (key: MessageKey = 'http.400', options?: Options) => new AppError(400, key, options);
export const Unauthorized = (key: MessageKey = 'http.401', options?: Options) => new AppError(401, key, options);
export const PaymentRequired = (key: MessageKey = 'http.402', options?: Options) => new AppError(402, key, options);
export const Forbidden = (key: MessageKey = 'http.403', options?: Options) => new AppError(403, key, options);
export const NotFound = (key: MessageKey = 'http.404', options?: Options) => new AppError(404, key, options);
export const Conflict = (key: MessageKey = 'http.409', options?: Options) => new AppError(409, key, options);
export const Unprocessable = (key: MessageKey = 'http.422', options?: Options) => new AppError(422, key, options);

export function TooManyRequests(retryAfterSeconds: number, key: MessageKey = 'http.429', options: Options = {}): AppError {
  const retryAfter = Math.max(1, Math.ceil(retryAfterSeconds));
  return new AppError(429, key, {
    ...options,
    params: { retry_after: retryAfter, ...options.params },
    headers: { 'Retry-After': String(retryAfter), ...options.headers },
  });
}
