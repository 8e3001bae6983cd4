import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { isNotFound } from '../../crds/contract/s3-client.ts';
import { JobFailure } from './job-failure.ts';

export interface DownloadedObject {
  sizeBytes: number;
  /** Hex sha256 of the bytes as stored, computed while they streamed to disk. */
  sha256: string;
}

export interface DownloadOptions {
  signal?: AbortSignal;
  /** Called with the fraction (0..1) received so far. */
  onProgress?: (fraction: number) => void;
}

/** A job program's view of the bucket: streamed downloads and uploads, never a whole object in memory. */
export class JobStorage {
  readonly client: S3Client;
  readonly bucket: string;

  constructor(client: S3Client, bucket: string) {
    this.client = client;
    this.bucket = bucket;
  }

  /** Streams `key` to `path`, hashing on the way; a body shorter than its Content-Length is a failure. */
  async download(key: string, path: string, options: DownloadOptions = {}): Promise<DownloadedObject> {
    let response;
    try {
      response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key }),
        options.signal ? { abortSignal: options.signal } : {},
      );
    } catch (error) {
      if (isNotFound(error)) {
        throw new JobFailure(`The source object "${key}" does not exist in bucket "${this.bucket}"`, { cause: error, code: 'media.missing_source' });
      }
      throw error;
    }
    const expected = response.ContentLength;
    const body = response.Body;
    if (!(body instanceof Readable)) throw new Error(`GetObject ${key} returned no readable body`);
    const hash = createHash('sha256');
    let received = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        received += chunk.length;
        if (expected) options.onProgress?.(received / expected);
        callback(null, chunk);
      },
    });
    try {
      await pipeline(body, tap, createWriteStream(path), options.signal ? { signal: options.signal } : {});
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new JobFailure(`The download of "${key}" was interrupted after ${received} bytes`, { cause: error, code: 'media.download_interrupted' });
    }
    if (expected !== undefined && received !== expected) {
      throw new JobFailure(`The download of "${key}" ended after ${received} of ${expected} bytes`, { code: 'media.download_interrupted' });
    }
    return { sizeBytes: received, sha256: hash.digest('hex') };
  }

  /** Streams a local file to `key` (single PutObject: S3 takes up to 5 GB that way). */
  async uploadFile(key: string, path: string, contentType: string, signal?: AbortSignal): Promise<void> {
    const { size } = await stat(path);
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: createReadStream(path),
        ContentLength: size,
        ContentType: contentType,
      }),
      signal ? { abortSignal: signal } : {},
    );
  }

  async putJson(key: string, value: unknown, signal?: AbortSignal): Promise<void> {
    const body = JSON.stringify(value);
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentLength: Buffer.byteLength(body),
        ContentType: 'application/json',
      }),
      signal ? { abortSignal: signal } : {},
    );
  }

  /** A JSON object written by the api (a large input); missing is a failure the program can explain. */
  async readJson(key: string, signal?: AbortSignal): Promise<unknown> {
    let response;
    try {
      response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), signal ? { abortSignal: signal } : {});
    } catch (error) {
      if (isNotFound(error)) throw new JobFailure(`The job input "${key}" does not exist`, { cause: error, code: 'job.invalid_spec' });
      throw error;
    }
    return JSON.parse(await response.Body!.transformToString()) as unknown;
  }
}
