import type { MessageKey } from '../i18n/index.ts';
import { DomainError, type DomainErrorKind, type DomainErrorOptions } from '../shared/errors.ts';

/** The status of each kind of domain error: the one place HTTP meets the domain's failures. */
const statusOfKind: Record<DomainErrorKind, number> = {
  invalid_input: 400,
  unauthenticated: 401,
  insufficient_credits: 402,
  forbidden: 403,
  limit_reached: 403,
  not_found: 404,
  not_allowed: 405,
  conflict: 409,
  gone: 410,
  too_large: 413,
  unsupported: 415,
  invalid: 422,
  rate_limited: 429,
  unavailable: 503,
};

export function statusOf(error: DomainError): number {
  return statusOfKind[error.kind];
}

/** A library's HTTP status (koa-body, http-errors) as a domain error; undefined for statuses without a kind. */
export function errorOfStatus(status: number, key: MessageKey = `http.${status}` as MessageKey, options?: DomainErrorOptions): DomainError | undefined {
  const kind = (Object.keys(statusOfKind) as DomainErrorKind[]).find((candidate) => statusOfKind[candidate] === status);
  return kind ? new DomainError(kind, key, options) : undefined;
}
