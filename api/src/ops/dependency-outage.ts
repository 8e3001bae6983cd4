/** Socket-level failures to reach a server (PostgreSQL, Redis, S3, an HTTP API). */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/**
 * PostgreSQL SQLSTATEs of a server that cannot take the query now: the connection
 * exceptions of class 08 (not 08P01, a protocol violation: a NUL inlined into SQL text
 * gets it, and that is the request's doing), 57P01–57P03 (shutting down, cannot connect
 * now), 53300 (too many connections).
 */
const POSTGRES_UNAVAILABLE = new Set(['08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03', '53300']);

/** Errors named after an unreachable server: MikroORM's and ioredis' own classes. */
const OUTAGE_ERROR_NAMES = new Set(['ConnectionException', 'MaxRetriesPerRequestError']);

/**
 * What node-postgres (pool and client) and ioredis say, without a code, when the
 * connection is gone or cannot be had.
 */
const OUTAGE_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
  /^Connection is closed\.?$/,
  /^Stream isn't writeable and enableOfflineQueue options is false/,
];

const MAX_CAUSES = 5;

/**
 * Whether an error means a dependency is unreachable (so the request deserves 503 and a
 * retry), looking through wrappers' `cause` chain (MikroORM, fetch).
 */
export function isDependencyOutage(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSES && current && typeof current === 'object'; depth++) {
    const { code, name, message } = current as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string' && (CONNECTION_ERROR_CODES.has(code) || POSTGRES_UNAVAILABLE.has(code))) return true;
    if (typeof name === 'string' && OUTAGE_ERROR_NAMES.has(name)) return true;
    if (typeof message === 'string' && OUTAGE_MESSAGES.some((pattern) => pattern.test(message))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
