import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';
import { fillS3rverGaps } from './s3rver-gaps.ts';

/** The credentials s3rver accepts out of the box. */
export const EMBEDDED_S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

export interface EmbeddedS3 {
  endpoint: string;
  bucket: string;
  close(): Promise<void>;
}

/**
 * Starts an S3-compatible server speaking the real wire protocol, for the local
 * default of hack/up.sh and for tests: s3rver, with the S3 behaviour it lacks filled
 * in front of it (see s3rver-gaps.ts). Port 0 picks a free port.
 */
export async function startEmbeddedS3(options: {
  directory: string;
  bucket: string;
  port?: number;
  host?: string;
}): Promise<EmbeddedS3> {
  const host = options.host ?? '127.0.0.1';
  const server = new S3rver({
    address: host,
    port: options.port ?? 0,
    directory: options.directory,
    silent: true,
    configureBuckets: [{ name: options.bucket }],
  });
  fillS3rverGaps(server);
  const address = (await server.run()) as AddressInfo;
  return {
    endpoint: `http://${host}:${address.port}`,
    bucket: options.bucket,
    close: async () => {
      await server.close();
    },
  };
}
