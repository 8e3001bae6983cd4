import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  ListPartsCommand,
  S3ServiceException,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { ObjectStorage } from '../../storage/storage.ts';

export interface UploadedPart {
  part_number: number;
  etag: string;
  size_bytes: number;
}

/** The store refused to assemble the parts (wrong or unquoted ETag, missing part, unknown upload). */
export class PartsRejected extends Error {
  override readonly name = 'PartsRejected';
}

/** The S3 multipart calls of uploads, and removal of whole prefixes of objects. */
export class MultipartStore {
  readonly #storage: ObjectStorage;
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #partsPageSize: number;

  /** `partsPageSize`: ListParts' max-parts (S3's own ceiling, 1000, by default); tests make it small to walk pages. */
  constructor(storage: ObjectStorage, options: { partsPageSize?: number } = {}) {
    this.#storage = storage;
    this.#client = storage.client;
    this.#bucket = storage.bucket;
    this.#partsPageSize = options.partsPageSize ?? 1000;
  }

  async create(key: string, contentType: string): Promise<string> {
    const answer = await this.#client.send(new CreateMultipartUploadCommand({ Bucket: this.#bucket, Key: key, ContentType: contentType }));
    if (!answer.UploadId) throw new Error('the object store returned no UploadId');
    return answer.UploadId;
  }

  partUrl(key: string, uploadId: string, partNumber: number, contentLength: number, expiresIn: number): Promise<string> {
    return this.#storage.presignSizedUploadPart(key, uploadId, partNumber, contentLength, expiresIn);
  }

  /** Every uploaded part, following the store's pages (ListParts answers at most `partsPageSize` at a time). */
  async listParts(key: string, uploadId: string): Promise<UploadedPart[]> {
    const parts: UploadedPart[] = [];
    let marker: string | undefined;
    for (;;) {
      const page = await this.#client.send(new ListPartsCommand({ Bucket: this.#bucket, Key: key, UploadId: uploadId, MaxParts: this.#partsPageSize, ...(marker ? { PartNumberMarker: marker } : {}) }));
      for (const part of page.Parts ?? []) parts.push({ part_number: part.PartNumber ?? 0, etag: part.ETag ?? '', size_bytes: part.Size ?? 0 });
      if (!page.IsTruncated || !page.NextPartNumberMarker || page.NextPartNumberMarker === marker) return parts;
      marker = page.NextPartNumberMarker;
    }
  }

  /** Assembles the object from the parts, ETags passed exactly as given. */
  async complete(key: string, uploadId: string, parts: { part_number: number; etag: string }[]): Promise<void> {
    try {
      await this.#client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.#bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts.map((part) => ({ PartNumber: part.part_number, ETag: part.etag })) },
        }),
      );
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
      if (error instanceof S3ServiceException && status >= 400 && status < 500) throw new PartsRejected(error.name, { cause: error });
      throw error;
    }
  }

  async abort(key: string, uploadId: string): Promise<void> {
    await this.#client.send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: key, UploadId: uploadId }));
  }

  /** Deletes the keys and everything under the prefixes. */
  async deleteObjects(keys: string[], prefixes: string[]): Promise<void> {
    const all = [...keys];
    for (const prefix of prefixes) {
      for await (const object of this.#storage.listObjects(prefix)) all.push(object.key);
    }
    // one DeleteObject per key: a file has a handful of objects, and every S3 speaks it
    await Promise.all([...new Set(all)].map((Key) => this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key }))));
  }
}
