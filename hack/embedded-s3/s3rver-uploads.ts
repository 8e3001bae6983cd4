import { createHash } from 'node:crypto';
import { readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FilesystemStore } from 's3rver';
import S3Error from 's3rver/lib/models/error.js';

/** A multipart upload that s3rver's store holds: `<bucket>/._S3rver_uploads/<uploadId>/`. */
export interface StoredUpload {
  bucket: string;
  key: string;
  uploadId: string;
  directory: string;
}

/** One uploaded part, as ListParts shows it. */
export interface StoredPart {
  partNumber: number;
  /** Quoted, exactly as UploadPart answered it: `"<md5hex>"`. */
  etag: string;
  size: number;
  lastModified: Date;
}

/** One part as a CompleteMultipartUpload request names it. */
export interface RequestedPart {
  partNumber: number;
  etag: string;
}

// s3rver makes ids of 16 random bytes in hex; anything else could walk out of the uploads directory.
const UPLOAD_ID = /^[0-9a-f]{32}$/;

/**
 * The multipart uploads in s3rver's filesystem layout (lib/stores/filesystem.js): each
 * upload is a directory holding `key`, `metadata`, and per part `<n>` and `<n>.md5`.
 */
export class S3rverUploads {
  readonly #store: FilesystemStore;

  constructor(store: FilesystemStore) {
    this.#store = store;
  }

  /** The upload started for this key under this id, or NoSuchUpload (never started, aborted, completed, or another key's). */
  async find(bucket: string, key: string, uploadId: string): Promise<StoredUpload> {
    const directory = join(this.#store.getResourcePath(bucket, undefined, 'uploads'), uploadId);
    if (UPLOAD_ID.test(uploadId)) {
      const startedFor = await readFile(join(directory, 'key'), 'utf8').catch(whenMissing(null));
      if (startedFor === key) return { bucket, key, uploadId, directory };
    }
    throw noSuchUpload(uploadId);
  }

  /** Every part uploaded so far, in part-number order. */
  async listParts(upload: StoredUpload): Promise<StoredPart[]> {
    const names = await readdir(upload.directory).catch(whenMissing(null));
    if (names === null) throw noSuchUpload(upload.uploadId);
    const parts = await Promise.all(names.filter((name) => /^\d+$/.test(name)).map((name) => readPart(upload.directory, name)));
    return parts.filter((part) => part !== null).sort((a, b) => a.partNumber - b.partNumber);
  }

  async abort(upload: StoredUpload): Promise<void> {
    await rm(upload.directory, { recursive: true, force: true });
  }

  /**
   * Checks the parts list as S3 does, then lets s3rver's store assemble the object, and
   * gives it S3's multipart ETag. Returns that ETag, quoted.
   */
  async complete(upload: StoredUpload, requested: RequestedPart[]): Promise<string> {
    requested.forEach((part, index) => {
      const previous = requested[index - 1];
      if (previous && part.partNumber <= previous.partNumber) {
        throw new S3Error('InvalidPartOrder', 'The list of parts was not in ascending order. The parts list must be specified in order by part number.', { UploadId: upload.uploadId });
      }
    });
    const stored = new Map((await this.listParts(upload)).map((part) => [part.partNumber, part]));
    for (const part of requested) {
      // Byte-exact: an ETag with its quotes stripped is not the ETag UploadPart returned.
      if (stored.get(part.partNumber)?.etag !== part.etag) {
        throw new S3Error(
          'InvalidPart',
          "One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part's entity tag.",
          { UploadId: upload.uploadId, PartNumber: part.partNumber, ETag: part.etag },
        );
      }
    }
    await this.#store.putObjectMultipart(upload.bucket, upload.uploadId, requested.map((part) => ({ number: part.partNumber, etag: part.etag })));
    const etag = multipartETag(requested.map((part) => part.etag));
    // s3rver stores the md5 of the whole content as the object's ETag; S3 answers the multipart form.
    await writeFile(this.#store.getResourcePath(upload.bucket, upload.key, 'object.md5'), etag);
    return `"${etag}"`;
  }
}

/** S3's ETag of a multipart object: the md5 of the parts' binary md5s, then `-<part count>`. */
export function multipartETag(partETags: string[]): string {
  const digests = partETags.map((etag) => Buffer.from(etag.replaceAll('"', ''), 'hex'));
  return `${createHash('md5').update(Buffer.concat(digests)).digest('hex')}-${partETags.length}`;
}

async function readPart(directory: string, name: string): Promise<StoredPart | null> {
  const path = join(directory, name);
  const [md5, info] = await Promise.all([readFile(`${path}.md5`, 'utf8').catch(whenMissing(null)), stat(path).catch(whenMissing(null))]);
  // s3rver writes `<n>.md5` once the part's bytes are all in: until then the part is not uploaded.
  if (md5 === null || info === null) return null;
  return { partNumber: Number(name), etag: `"${md5}"`, size: info.size, lastModified: info.mtime };
}

function noSuchUpload(uploadId: string): S3Error {
  return new S3Error('NoSuchUpload', 'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.', { UploadId: uploadId });
}

function whenMissing<T>(fallback: T): (error: unknown) => T {
  return (error) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return fallback;
    throw error;
  };
}
