import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { createScope, getCanonicalHeaders, getCanonicalQuery, getSigningKey } from '@smithy/signature-v4';
import type { Middleware } from 'koa';
import S3Error from 's3rver/lib/models/error.js';

/** The credentials the embedded store verifies requests against. */
export interface StoreCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';
/** S3 refuses a header-signed request dated further than this from its clock. */
const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;
/** S3's longest presigned URL lifetime: one week. */
const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;
const PRESIGN_PARAMETERS = ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders', 'X-Amz-Signature'] as const;

/** What a request claims: who signed it, when, which headers, and the signature. */
interface SignatureClaim {
  credential: string;
  longDate: string;
  signedHeaders: string;
  signature: string;
  payloadHash: string;
  /** The query as sent (the canonical query leaves a presigned URL's own signature out). */
  query: Record<string, string | string[]>;
}

/**
 * Verifies AWS Signature Version 4 on every request, as S3 does, because s3rver 3.7 computes
 * no V4 signature at all and lets unsigned requests through: both the Authorization header and
 * presigned query parameters are checked against the store's secret, over the method, the path
 * as sent, the query, and every signed header (so a presigned PUT's signed Content-Length and
 * Content-Type bind the body). Unsigned requests are refused, except CORS preflights (a browser
 * sends those without credentials). The payload hash of a header-signed request is taken as
 * declared (only holders of the secret sign that way).
 */
export function verifySignatureV4(credentials: StoreCredentials): Middleware {
  return async (ctx, next) => {
    if (ctx.method === 'OPTIONS' && ctx.get('Origin') && ctx.get('Access-Control-Request-Method')) return next();
    const [rawPath = '/', rawQuery = ''] = splitOnce(ctx.req.url ?? '/', '?');
    const query = parseQuery(rawQuery);
    const claim = 'X-Amz-Signature' in query ? presignedClaim(query) : headerClaim(ctx.req.headers, query);
    const [accessKeyId, shortDate, region, service, terminator, ...rest] = claim.credential.split('/');
    if (accessKeyId !== credentials.accessKeyId) {
      throw new S3Error('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.', { AWSAccessKeyId: accessKeyId ?? '' });
    }
    if (!shortDate || !region || !service || terminator !== 'aws4_request' || rest.length > 0 || claim.longDate.slice(0, 8) !== shortDate) {
      throw new S3Error('AuthorizationHeaderMalformed', 'The authorization header is malformed; the Credential is mal-formed.');
    }
    const signedNames = claim.signedHeaders.split(';');
    if (!signedNames.includes('host')) throw new S3Error('AccessDenied', 'The host header must be signed.');
    const signed: Record<string, string> = {};
    for (const name of signedNames) {
      const value = ctx.req.headers[name];
      // A signed header the request does not carry cannot match its signature.
      if (value === undefined) throw signatureMismatch(accessKeyId);
      signed[name] = Array.isArray(value) ? value.join(',') : value;
    }
    const canonicalHeaders = getCanonicalHeaders({ headers: signed } as never, undefined, new Set(signedNames));
    const canonicalRequest = [
      ctx.method,
      rawPath,
      getCanonicalQuery({ query: claim.query } as never),
      ...signedNames.map((name) => `${name}:${canonicalHeaders[name] ?? ''}`),
      '',
      claim.signedHeaders,
      claim.payloadHash,
    ].join('\n');
    const scope = createScope(shortDate, region, service);
    const stringToSign = [ALGORITHM, claim.longDate, scope, sha256Hex(canonicalRequest)].join('\n');
    const key = await getSigningKey(NodeSha256, credentials, shortDate, region, service);
    const expected = createHmac('sha256', key).update(stringToSign).digest();
    const provided = Buffer.from(/^[0-9a-f]{64}$/.test(claim.signature) ? claim.signature : '', 'hex');
    if (provided.length !== expected.length || !timingSafeEqual(provided, expected)) throw signatureMismatch(accessKeyId);
    return next();
  };
}

function presignedClaim(query: Record<string, string | string[]>): SignatureClaim {
  const value = (name: (typeof PRESIGN_PARAMETERS)[number]): string => {
    const found = query[name];
    if (typeof found !== 'string') {
      throw new S3Error('AuthorizationQueryParametersError', `Query-string authentication version 4 requires the ${PRESIGN_PARAMETERS.join(', ')} parameters, once each.`);
    }
    return found;
  };
  if (value('X-Amz-Algorithm') !== ALGORITHM) throw new S3Error('AuthorizationQueryParametersError', `X-Amz-Algorithm only supports "${ALGORITHM}"`);
  const longDate = value('X-Amz-Date');
  const expires = value('X-Amz-Expires');
  if (!/^\d{1,6}$/.test(expires) || Number(expires) > MAX_PRESIGNED_SECONDS) {
    throw new S3Error('AuthorizationQueryParametersError', 'X-Amz-Expires must be a number of seconds of at most one week.');
  }
  const signedAt = parseLongDate(longDate);
  // Signed ahead of this clock by more than the skew allowed: not valid yet, as S3 answers.
  if (signedAt - Date.now() > MAX_CLOCK_SKEW_MS) throw new S3Error('AccessDenied', 'Request is not yet valid');
  if (Date.now() > signedAt + Number(expires) * 1000) throw new S3Error('AccessDenied', 'Request has expired');
  return {
    credential: value('X-Amz-Credential'),
    longDate,
    signedHeaders: value('X-Amz-SignedHeaders'),
    signature: value('X-Amz-Signature'),
    payloadHash: typeof query['X-Amz-Content-Sha256'] === 'string' ? query['X-Amz-Content-Sha256'] : 'UNSIGNED-PAYLOAD',
    // The canonical query leaves X-Amz-Signature out itself.
    query,
  };
}

function headerClaim(headers: IncomingHttpHeaders, query: Record<string, string | string[]>): SignatureClaim {
  const authorization = headers.authorization;
  if (!authorization) throw new S3Error('AccessDenied', 'Access Denied: the request is not signed.');
  const match = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/.exec(authorization);
  if (!match) throw new S3Error('AuthorizationHeaderMalformed', 'The authorization header is malformed: only AWS4-HMAC-SHA256 with Credential, SignedHeaders and Signature is accepted.');
  const longDate = typeof headers['x-amz-date'] === 'string' ? headers['x-amz-date'] : '';
  if (Math.abs(Date.now() - parseLongDate(longDate)) > MAX_CLOCK_SKEW_MS) {
    throw new S3Error('RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
  }
  const payloadHash = headers['x-amz-content-sha256'];
  if (typeof payloadHash !== 'string') throw new S3Error('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
  return { credential: match[1]!, signedHeaders: match[2]!, signature: match[3]!, longDate, payloadHash, query };
}

function parseLongDate(longDate: string): number {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(longDate);
  if (!match) throw new S3Error('AccessDenied', "AWS authentication requires a valid X-Amz-Date in the ISO8601 long format \"yyyyMMdd'T'HHmmss'Z'\"");
  const [, year, month, day, hour, minute, second] = match.map(Number) as number[];
  return Date.UTC(year!, month! - 1, day, hour, minute, second);
}

/** The raw query as sent, each name and value percent-decoded once (the canonical query encodes them again). */
function parseQuery(raw: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const pair of raw.split('&')) {
    if (!pair) continue;
    const [name = '', value = ''] = splitOnce(pair, '=').map(percentDecode);
    const seen = query[name];
    query[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return query;
}

function percentDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new S3Error('InvalidArgument', 'The query string is not validly percent-encoded.');
  }
}

function splitOnce(text: string, separator: string): string[] {
  const at = text.indexOf(separator);
  return at < 0 ? [text] : [text.slice(0, at), text.slice(at + 1)];
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function signatureMismatch(accessKeyId: string): S3Error {
  return new S3Error('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.', { AWSAccessKeyId: accessKeyId });
}

/** The SHA-256 (and HMAC-SHA-256, given a secret) that smithy's key derivation asks for, on node:crypto. */
class NodeSha256 {
  readonly #hash;

  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', asBytes(secret));
  }

  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(asBytes(data));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.#hash.digest());
  }
}

function asBytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
}
