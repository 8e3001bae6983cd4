import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, UploadPartCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createS3Client, isNotFound, type S3Settings } from '../../../crds/contract/s3-client.ts';
import type { DomainConfig } from '../config.ts';

/**
 * The object store as the api uses it. Bytes never cross the api: clients PUT and GET
 * through presigned URLs signed against the public endpoint.
 */
export class ObjectStorage {
  readonly client: S3Client;
  readonly bucket: string;
  /** How job programs reach the same store. */
  readonly settings: S3Settings;
  /** Signs URLs for clients, who may reach the store at another address. */
  readonly #signer: S3Client;

  constructor(settings: S3Settings, publicEndpoint?: string) {
    this.client = createS3Client(settings);
    this.bucket = settings.bucket;
    this.settings = settings;
    this.#signer = publicEndpoint ? createS3Client({ ...settings, endpoint: publicEndpoint }) : this.client;
  }

  /**
   * A client's single-PUT URL with its content type and length signed (X-Amz-SignedHeaders
   * `content-length;content-type;host`): a store that verifies signatures, as S3 does, refuses a
   * body of another length or type. (The presigner leaves Content-Type unsigned unless asked.)
   */
  presignSizedPut(key: string, contentType: string, contentLength: number, expiresIn: number): Promise<string> {
    const command = new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: contentType, ContentLength: contentLength });
    return getSignedUrl(this.#signer, command, { expiresIn, signableHeaders: new Set(['content-type', 'content-length']) });
  }

  /** An UploadPart URL with the part's length signed, like presignSizedPut. */
  presignSizedUploadPart(key: string, uploadId: string, partNumber: number, contentLength: number, expiresIn: number): Promise<string> {
    const command = new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, ContentLength: contentLength });
    return getSignedUrl(this.#signer, command, { expiresIn, signableHeaders: new Set(['content-length']) });
  }

  /**
   * A GET whose response carries the headers given here, whatever the object was stored with
   * (response-content-type, -disposition, -cache-control): media plays inline as its known type,
   * a download is an attachment with its file name.
   */
  presignGet(key: string, expiresIn: number, response: { contentType?: string; disposition?: 'inline' | { attachment: string }; cacheControl?: string } = {}): Promise<string> {
    const { contentType, disposition, cacheControl } = response;
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ...(contentType ? { ResponseContentType: contentType } : {}),
      ...(disposition === 'inline' ? { ResponseContentDisposition: 'inline' } : {}),
      ...(typeof disposition === 'object' ? { ResponseContentDisposition: attachmentDisposition(disposition.attachment) } : {}),
      ...(cacheControl ? { ResponseCacheControl: cacheControl } : {}),
    });
    return getSignedUrl(this.#signer, command, { expiresIn });
  }

  /** Every object under `prefix` (key and size), page by page. */
  async *listObjects(prefix: string): AsyncGenerator<{ key: string; size: number }> {
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }));
      for (const object of page.Contents ?? []) if (object.Key) yield { key: object.Key, size: object.Size ?? 0 };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** The stored object's real size, or null when there is no such object. */
  async sizeOf(key: string): Promise<number | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return head.ContentLength ?? 0;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async putJson(key: string, value: unknown): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: JSON.stringify(value), ContentType: 'application/json' }));
  }

  async readJson<T>(key: string): Promise<T> {
    const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return JSON.parse(await object.Body!.transformToString()) as T;
  }

  /** Readiness: the bucket answers. */
  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }), { abortSignal: AbortSignal.timeout(2000) });
  }

  close(): void {
    this.client.destroy();
    if (this.#signer !== this.client) this.#signer.destroy();
  }
}

/** RFC 6266: an ASCII fallback name for old clients and the exact UTF-8 name (RFC 8187) for the rest. */
function attachmentDisposition(filename: string): string {
  const fallback = filename.normalize('NFD').replace(/\p{M}/gu, '').replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** The object store the configuration names; `endpoint` overrides S3_ENDPOINT (the embedded server's address). */
export function objectStorageFrom(config: DomainConfig, endpoint: string | undefined = config.S3_ENDPOINT): ObjectStorage {
  return new ObjectStorage(
    {
      endpoint,
      region: config.S3_REGION,
      bucket: config.S3_BUCKET,
      accessKeyId: config.S3_ACCESS_KEY_ID,
      secretAccessKey: config.S3_SECRET_ACCESS_KEY,
      forcePathStyle: config.S3_FORCE_PATH_STYLE,
    },
    config.S3_PUBLIC_ENDPOINT,
  );
}
