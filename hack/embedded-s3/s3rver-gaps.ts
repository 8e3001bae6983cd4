import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Context, Middleware, Next } from 'koa';
import type S3rver from 's3rver';
import type { FilesystemStore } from 's3rver';
import authentication from 's3rver/lib/middleware/authentication.js';
import S3Error from 's3rver/lib/models/error.js';
import { DUMMY_ACCOUNT } from 's3rver/lib/models/account.js';
import { resolveByteRange } from './byte-range.ts';
import { listPage, type ListingMarker } from './list-objects.ts';
import { S3rverUploads, type RequestedPart } from './s3rver-uploads.ts';

/**
 * Fills the gaps s3rver 3.7 leaves in the S3 wire protocol (ListParts, AbortMultipartUpload,
 * CompleteMultipartUpload's ETag checks, UploadPart's upload check, Range), so that the
 * service's multipart flow gets here the answers S3 gives it; each fill below says what
 * s3rver does instead.
 * The layer sits in s3rver's own Koa stack just before its router: requests have been
 * through s3rver's virtual-host rewrite, and answers are rendered by s3rver's XML body
 * and error handlers. Every other request goes to s3rver untouched.
 */
export function fillS3rverGaps(server: S3rver): void {
  useBeforeRouter(server, s3rverGaps(server.store));
  listConsistently(server.store);
}

/** Adds a layer to s3rver's Koa stack just before its router (after its logger, XML body and vhost rewrite). */
export function useBeforeRouter(server: S3rver, middleware: Middleware): void {
  const routerAt = server.middleware.findIndex((layer) => 'router' in layer);
  if (routerAt < 0) throw new Error("s3rver's router is not in its middleware stack: the embedded store expects s3rver 3.7");
  server.middleware.splice(routerAt, 0, middleware);
}

/** How often a listing is walked again when it met an object mid-write or mid-delete. */
const LISTING_ATTEMPTS = 20;

/**
 * ListObjects version 1 (version 2 is listObjectsV2's, below): s3rver walks the bucket's
 * directories (readdir, then stat of each entry) and reads each object's metadata file, so
 * an object deleted meanwhile (ENOENT, or another file-system error of a directory emptied
 * and removed under the walk) or whose metadata is being written (empty or partial JSON)
 * fails the whole listing with 500 InternalError, where S3 lists consistently. Such a
 * listing is walked again.
 */
function listConsistently(store: FilesystemStore): void {
  const listObjects = store.listObjects.bind(store);
  store.listObjects = async (bucket, options) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await listObjects(bucket, options);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        // any file-system error (ENOENT, ENOTDIR, EISDIR…) of the walk, or metadata read half-written
        const raced = (typeof code === 'string' && /^E[A-Z]+$/.test(code)) || error instanceof SyntaxError;
        if (!raced || attempt >= LISTING_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, attempt));
      }
    }
  };
}

const S3_XMLNS = 'http://s3.amazonaws.com/doc/2006-03-01/';
/** S3 lists at most 1000 keys per ListObjectsV2 page. */
const MAX_KEYS_PER_PAGE = 1000;
/** S3 lists at most 1000 parts per ListParts page. */
const MAX_PARTS_PER_PAGE = 1000;
/** 10,000 parts of about 100 bytes of XML each, with room to spare. */
const MAX_COMPLETE_BODY_BYTES = 4 * 1024 * 1024;

interface ObjectTarget {
  bucket: string;
  key: string;
}

type Fill = (ctx: Context, target: ObjectTarget, next: Next) => Promise<void>;

function s3rverGaps(store: FilesystemStore): Middleware {
  const authenticate = authentication();
  const uploads = new S3rverUploads(store);

  // ListParts (GET ?uploadId): s3rver answers 405, so resuming an upload could not be tested.
  const listParts: Fill = async (ctx, { bucket, key }) => {
    const upload = await uploads.find(bucket, key, queryValue(ctx, 'uploadId'));
    const maxParts = Math.min(integerParameter(ctx, 'max-parts', MAX_PARTS_PER_PAGE), MAX_PARTS_PER_PAGE);
    const marker = integerParameter(ctx, 'part-number-marker', 0);
    const after = (await uploads.listParts(upload)).filter((part) => part.partNumber > marker);
    const page = after.slice(0, maxParts);
    ctx.body = {
      ListPartsResult: {
        '@': { xmlns: S3_XMLNS },
        Bucket: bucket,
        Key: key,
        UploadId: upload.uploadId,
        StorageClass: 'STANDARD',
        PartNumberMarker: marker,
        // As S3: the last part listed, even on the last page; 0 for a page with no parts.
        NextPartNumberMarker: page.at(-1)?.partNumber ?? 0,
        MaxParts: maxParts,
        IsTruncated: after.length > page.length,
        Part: page.map((part) => ({ PartNumber: part.partNumber, LastModified: part.lastModified.toISOString(), ETag: part.etag, Size: part.size })),
      },
    };
  };

  // AbortMultipartUpload (DELETE ?uploadId): s3rver answers 405 and the parts stay forever.
  const abortUpload: Fill = async (ctx, { bucket, key }) => {
    await uploads.abort(await uploads.find(bucket, key, queryValue(ctx, 'uploadId')));
    ctx.status = 204;
  };

  // CompleteMultipartUpload (POST ?uploadId): s3rver strips quotes and never compares ETags, so
  // a client sending stripped or wrong ETags would pass here and fail on S3 (400 InvalidPart).
  const completeUpload: Fill = async (ctx, { bucket, key }) => {
    const upload = await uploads.find(bucket, key, queryValue(ctx, 'uploadId'));
    const requested = parseCompleteMultipartUpload(await readBody(ctx.req, MAX_COMPLETE_BODY_BYTES));
    const etag = await uploads.complete(upload, requested);
    ctx.body = {
      CompleteMultipartUploadResult: { '@': { xmlns: S3_XMLNS }, Location: ctx.href.split('?')[0], Bucket: bucket, Key: key, ETag: etag },
    };
  };

  // UploadPart (PUT ?uploadId&partNumber): s3rver stores parts for unknown, aborted or completed
  // uploads, and takes any partNumber as a file name; it stores the part once both are known good.
  const checkUploadPart: Fill = async (ctx, { bucket, key }, next) => {
    const partNumber = queryValue(ctx, 'partNumber');
    if (!/^[1-9]\d{0,4}$/.test(partNumber) || Number(partNumber) > 10000) {
      throw new S3Error('InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive', { ArgumentName: 'partNumber', ArgumentValue: partNumber });
    }
    await uploads.find(bucket, key, queryValue(ctx, 'uploadId'));
    await next();
  };

  // GET/HEAD with Range: s3rver reads `bytes=-N` as `bytes=0-N` and `bytes=0-0` as the whole object.
  // So it is asked for the whole object (headers, conditionals, overrides) and the span is cut here.
  const readRange: Fill = async (ctx, { bucket, key }, next) => {
    const header = ctx.get('Range');
    delete ctx.headers.range;
    await next();
    // Only a full object read (s3rver marks it with Accept-Ranges) is cut; errors and 304s pass.
    if (ctx.status !== 200 || ctx.response.get('Accept-Ranges') !== 'bytes') return;
    const size = ctx.length ?? 0;
    const span = resolveByteRange(header, size);
    if (span === null) return;
    (ctx.body as Readable | null | undefined)?.destroy();
    if (span === 'unsatisfiable') {
      throw new S3Error('InvalidRange', 'The requested range is not satisfiable', { RangeRequested: header, ActualObjectSize: size });
    }
    if (ctx.method === 'GET') ctx.body = createReadStream(store.getResourcePath(bucket, key, 'object'), span);
    ctx.status = 206;
    ctx.length = span.end - span.start + 1;
    ctx.set('Content-Range', `bytes ${span.start}-${span.end}/${size}`);
  };

  // ListObjectsV2 (GET /<bucket>?list-type=2): s3rver encrypts its continuation token with DES,
  // which OpenSSL 3 refuses, so any listing of more than one page answered 500 InternalError; and
  // it pages in directory order, not key order, so a page's start-after skipped keys not listed yet.
  const listObjectsV2: Fill = async (ctx, { bucket }) => {
    const maxKeys = Math.min(integerParameter(ctx, 'max-keys', MAX_KEYS_PER_PAGE), MAX_KEYS_PER_PAGE);
    const prefix = queryValue(ctx, 'prefix');
    const delimiter = queryValue(ctx, 'delimiter');
    const token = queryValue(ctx, 'continuation-token');
    const startAfter = queryValue(ctx, 'start-after');
    const start = token ? continuationMarker(token) : startAfter ? { after: startAfter, prefix: false } : null;
    const page = maxKeys === 0 ? { objects: [], commonPrefixes: [], next: null } : await listPage(store.getBucketPath(bucket), { prefix, delimiter, start, maxKeys });
    ctx.body = {
      ListBucketResult: {
        '@': { xmlns: S3_XMLNS },
        Name: bucket,
        Prefix: prefix,
        ...(startAfter && !token ? { StartAfter: startAfter } : {}),
        ...(token ? { ContinuationToken: token } : {}),
        ...(page.next ? { NextContinuationToken: continuationToken(page.next) } : {}),
        KeyCount: page.objects.length + page.commonPrefixes.length,
        MaxKeys: maxKeys,
        ...(delimiter ? { Delimiter: delimiter } : {}),
        IsTruncated: page.next !== null,
        Contents: page.objects.map((object) => ({
          Key: object.key,
          LastModified: object.lastModified.toISOString(),
          ETag: object.etag,
          Size: object.size,
          ...(ctx.query['fetch-owner'] === 'true' ? { Owner: { ID: DUMMY_ACCOUNT.id, DisplayName: DUMMY_ACCOUNT.displayName } } : {}),
          StorageClass: 'STANDARD',
        })),
        CommonPrefixes: page.commonPrefixes.map((commonPrefix) => ({ Prefix: commonPrefix })),
      },
    };
  };

  const fillFor = (ctx: Context, target: ObjectTarget): Fill | undefined => {
    if (target.key === '') return ctx.method === 'GET' && ctx.query['list-type'] === '2' ? listObjectsV2 : undefined;
    if ('uploadId' in ctx.query) {
      if (ctx.method === 'GET') return listParts;
      if (ctx.method === 'DELETE') return abortUpload;
      if (ctx.method === 'POST') return completeUpload;
      // UploadPartCopy stays s3rver's (it answers NotImplemented).
      if (ctx.method === 'PUT' && !ctx.get('x-amz-copy-source')) return checkUploadPart;
      return undefined;
    }
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.get('Range')) return readRange;
    return undefined;
  };

  return async (ctx, next) => {
    const target = objectTarget(ctx.path) ?? bucketTarget(ctx.path);
    const fill = target && fillFor(ctx, target);
    if (!target || !fill) return next();
    // The same checks s3rver's router makes before its own handlers: signature, then bucket.
    ctx.params = target;
    await authenticate(ctx, async () => {
      if (!(await store.getBucket(target.bucket))) {
        throw new S3Error('NoSuchBucket', 'The specified bucket does not exist', { BucketName: target.bucket });
      }
      await fill(ctx, target, next);
    });
  };
}

/** `/<bucket>/<key>` decoded as s3rver's router decodes it; null for service and bucket paths. */
function objectTarget(path: string): ObjectTarget | null {
  const match = /^\/([^/]+)\/(.+)$/.exec(path);
  if (!match) return null;
  return { bucket: decodePathSegment(match[1]!), key: decodePathSegment(match[2]!) };
}

/** `/<bucket>` or `/<bucket>/`, with an empty key; null for other paths. */
function bucketTarget(path: string): ObjectTarget | null {
  const match = /^\/([^/]+)\/?$/.exec(path);
  return match ? { bucket: decodePathSegment(match[1]!), key: '' } : null;
}

/** An opaque token to the client; here the marker the next page starts after. */
function continuationToken(marker: ListingMarker): string {
  return Buffer.from(JSON.stringify(marker), 'utf8').toString('base64url');
}

function continuationMarker(token: string): ListingMarker {
  try {
    const marker = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (marker && typeof marker === 'object' && 'after' in marker && typeof marker.after === 'string' && 'prefix' in marker && typeof marker.prefix === 'boolean') {
      return { after: marker.after, prefix: marker.prefix };
    }
  } catch {
    // not a token of ours: answered as S3 answers it
  }
  throw new S3Error('InvalidArgument', 'The continuation token provided is incorrect', { ArgumentName: 'continuation-token' });
}

function decodePathSegment(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function queryValue(ctx: Context, name: string): string {
  const value = ctx.query[name];
  return typeof value === 'string' ? value : '';
}

function integerParameter(ctx: Context, name: string, fallback: number): number {
  if (!(name in ctx.query)) return fallback;
  const value = queryValue(ctx, name);
  if (!/^\d{1,10}$/.test(value) || Number(value) > 2147483647) {
    throw new S3Error('InvalidArgument', `Argument ${name} must be an integer between 0 and 2147483647`, { ArgumentName: name, ArgumentValue: value });
  }
  return Number(value);
}

async function readBody(request: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request) {
    length += (chunk as Buffer).length;
    if (length > limit) throw new S3Error('MaxMessageLengthExceeded', 'Your request was too big.');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The `<Part>` list of a CompleteMultipartUpload body; MalformedXML when it has none or one lacks its number or ETag. */
function parseCompleteMultipartUpload(xml: string): RequestedPart[] {
  const root = /<CompleteMultipartUpload(?:\s[^>]*)?>([\s\S]*)<\/CompleteMultipartUpload>/.exec(xml)?.[1];
  const parts = [...(root ?? '').matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map(([, part = '']) => {
    const partNumber = /<PartNumber>\s*(\d+)\s*<\/PartNumber>/.exec(part)?.[1];
    const etag = /<ETag>([^<]*)<\/ETag>/.exec(part)?.[1];
    return partNumber === undefined || etag === undefined ? null : { partNumber: Number(partNumber), etag: decodeXmlText(etag) };
  });
  if (parts.length === 0 || parts.includes(null)) {
    throw new S3Error('MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema');
  }
  return parts.filter((part) => part !== null);
}

const XML_ENTITIES: Record<string, string> = { quot: '"', apos: "'", amp: '&', lt: '<', gt: '>' };

function decodeXmlText(text: string): string {
  return text.replace(/&(?:#x([0-9a-fA-F]+)|#(\d+)|(quot|apos|amp|lt|gt));/g, (entity, hex?: string, decimal?: string, name?: string) => {
    if (hex) return String.fromCodePoint(parseInt(hex, 16));
    if (decimal) return String.fromCodePoint(parseInt(decimal, 10));
    return name ? (XML_ENTITIES[name] ?? entity) : entity;
  });
}
