import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { EMBEDDED_S3_CREDENTIALS, startEmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import type { EmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { createS3Client } from '../../crds/s3-client.ts';
import { parseJobEvent } from '../../crds/job-events.ts';
import type { JobEvent } from '../../crds/job-events.ts';
import { FFMPEG_IMAGE_MAIN, runProgram } from '../../hack/fixtures/job-program.ts';

/** Support for running a job image's real entrypoint (ffmpeg by default, or whisper) as a child process against an embedded S3. */

export { FFMPEG_IMAGE_MAIN };
export const WHISPER_IMAGE_MAIN = new URL('../../job-images/whisper/src/main.ts', import.meta.url).pathname;

export interface JobBucket {
  s3: EmbeddedS3;
  client: S3Client;
  /** Environment a job program needs to reach this bucket. */
  env: Record<string, string>;
  putFile(key: string, path: string, contentType?: string): Promise<void>;
  /** Downloads an object to `path` (streamed) and returns its size. */
  getFile(key: string, path: string): Promise<number>;
  getJson(key: string): Promise<unknown>;
  exists(key: string): Promise<boolean>;
  close(): Promise<void>;
}

export async function startJobBucket(): Promise<JobBucket> {
  const directory = await mkdtemp(join(tmpdir(), 'cutroom-job-s3-'));
  const s3 = await startEmbeddedS3({ directory, bucket: 'job-images-test' });
  const settings = {
    endpoint: s3.endpoint,
    region: 'us-east-1',
    bucket: s3.bucket,
    ...EMBEDDED_S3_CREDENTIALS,
    forcePathStyle: true,
  };
  const client = createS3Client(settings);
  const body = async (key: string) => {
    const response = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    return response.Body as NodeJS.ReadableStream & { transformToString(): Promise<string> };
  };
  return {
    s3,
    client,
    env: {
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: settings.region,
      S3_BUCKET: s3.bucket,
      S3_ACCESS_KEY_ID: settings.accessKeyId,
      S3_SECRET_ACCESS_KEY: settings.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
    },
    async putFile(key, path, contentType = 'application/octet-stream') {
      const { size } = await stat(path);
      await client.send(
        new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: createReadStream(path), ContentLength: size, ContentType: contentType }),
      );
    },
    async getFile(key, path) {
      await pipeline(await body(key), createWriteStream(path));
      return (await stat(path)).size;
    },
    async getJson(key) {
      return JSON.parse(await (await body(key)).transformToString()) as unknown;
    },
    async exists(key) {
      try {
        await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }));
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      client.destroy();
      await s3.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

export interface JobProcessOutcome {
  exitCode: number | null;
  /** Every stdout line, in order. */
  lines: string[];
  events: JobEvent[];
  stderr: string;
  wallSeconds: number;
}

/** Runs an image's entrypoint (ffmpeg by default) with a spec and a clean environment (no inherited S3_*), its stdout parsed as job events. */
export async function runJobProcess(spec: object, env: Record<string, string>, main = FFMPEG_IMAGE_MAIN): Promise<JobProcessOutcome> {
  const { exitCode, lines, stderr, wallSeconds } = await runProgram(main, spec, env);
  return { exitCode, lines, events: lines.map(parseJobEvent).filter((event): event is JobEvent => event !== null), stderr, wallSeconds };
}

/**
 * An ffmpeg that records each invocation's arguments (one line each) to the file named
 * by CUTROOM_TEST_FFMPEG_LOG, then runs the real one: how tests count decode passes.
 */
export async function recordingFfmpeg(dir: string): Promise<string> {
  const path = join(dir, 'ffmpeg-recording');
  await writeFile(path, '#!/bin/sh\nprintf "%s\\n" "$*" >> "$CUTROOM_TEST_FFMPEG_LOG"\nexec ffmpeg "$@"\n');
  await chmod(path, 0o755);
  return path;
}
