// What a benchmark needs to time a job program as it runs in its image: an S3 bucket of
// its own (the embedded server) and the program started as a child process with a spec.
import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { EMBEDDED_S3_CREDENTIALS, startEmbeddedS3 } from '../../hack/embedded-s3/embedded-s3.ts';
import { createS3Client } from '../../crds/s3-client.ts';

/** The ffmpeg image's entrypoint (artifact, proxy, media-edit, media-import). */
export const FFMPEG_IMAGE_MAIN = new URL('../../job-images/ffmpeg/src/main.ts', import.meta.url).pathname;

export interface BenchBucket {
  /** The S3_* variables a job program reads to reach this bucket. */
  env: Record<string, string>;
  putFile(key: string, path: string, contentType: string): Promise<void>;
  close(): Promise<void>;
}

/** An embedded S3 server with one bucket, in a temporary directory removed on close. */
export async function startBenchBucket(): Promise<BenchBucket> {
  const directory = await mkdtemp(join(tmpdir(), 'cutroom-bench-s3-'));
  const s3 = await startEmbeddedS3({ directory, bucket: 'cutroom-bench' });
  const settings = { endpoint: s3.endpoint, region: 'us-east-1', bucket: s3.bucket, ...EMBEDDED_S3_CREDENTIALS, forcePathStyle: true };
  const client = createS3Client(settings);
  return {
    env: {
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: settings.region,
      S3_BUCKET: s3.bucket,
      S3_ACCESS_KEY_ID: settings.accessKeyId,
      S3_SECRET_ACCESS_KEY: settings.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
    },
    async putFile(key, path, contentType) {
      const { size } = await stat(path);
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: createReadStream(path), ContentLength: size, ContentType: contentType }));
    },
    async close() {
      client.destroy();
      await s3.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

export interface ProgramRun {
  exitCode: number | null;
  /** The program's last stdout line (its result or error event). */
  lastLine: string | undefined;
  stderr: string;
  wallSeconds: number;
}

/** Runs an image's entrypoint with `spec` and only `env` (plus PATH and TMPDIR), timing it from spawn to exit. */
export function runProgram(main: string, spec: object, env: Record<string, string>): Promise<ProgramRun> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [main], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
        CUTROOM_JOB_SPEC: JSON.stringify(spec),
        ...env,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.once('error', reject);
    child.once('close', (exitCode) => {
      resolve({
        exitCode,
        lastLine: stdout.split('\n').filter((line) => line.length > 0).at(-1),
        stderr,
        wallSeconds: Number(process.hrtime.bigint() - started) / 1e9,
      });
    });
  });
}
