import { S3Client } from '@aws-sdk/client-s3';

/** Where an S3-compatible store lives and how to sign for it. */
export interface S3Settings {
  endpoint?: string | undefined;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
}

/**
 * One S3 client configuration for the api and the job programs alike.
 * Path-style addressing and checksums "only when required" are what S3-compatible
 * stores (MinIO, s3rver, Ceph) need: with default checksums a streamed PutObject
 * is stored with the chunk-signature framing inside the object.
 */
export function createS3Client(settings: S3Settings): S3Client {
  return new S3Client({
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Bounded outbound calls: a store that stops answering fails the request instead of holding it.
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
    maxAttempts: 3,
  });
}

/** Reads S3 settings from the environment of a job program (the api parses its own config). */
export function s3SettingsFromEnv(env: NodeJS.ProcessEnv = process.env): S3Settings {
  const required = (name: string): string => {
    const value = env[name];
    if (!value) throw new Error(`${name} is required`);
    return value;
  };
  return {
    endpoint: env.S3_ENDPOINT || undefined,
    region: env.S3_REGION || 'us-east-1',
    bucket: required('S3_BUCKET'),
    accessKeyId: required('S3_ACCESS_KEY_ID'),
    secretAccessKey: required('S3_SECRET_ACCESS_KEY'),
    forcePathStyle: (env.S3_FORCE_PATH_STYLE ?? 'true') !== 'false',
  };
}

/** A missing object or key, whichever way the store says it. */
export function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}
