import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';
import { fillS3rverGaps, useBeforeRouter } from './s3rver-gaps.ts';
import { verifySignatureV4 } from './sigv4-verification.ts';

/**
 * The access key id s3rver knows, and the secret of tests. hack/up.sh passes a random secret
 * of its own: a secret everyone knows would sign for anyone.
 */
export const EMBEDDED_S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

export interface EmbeddedS3 {
  endpoint: string;
  bucket: string;
  close(): Promise<void>;
}

/**
 * Starts an S3-compatible server speaking the real wire protocol, for the local
 * default of hack/up.sh and for tests: s3rver, with every request's SigV4 signature
 * verified against `secretAccessKey` (sigv4-verification.ts) and the S3 behaviour it
 * lacks filled in front of it (s3rver-gaps.ts). Port 0 picks a free port.
 * `corsOrigins`: the pages allowed to upload from a browser (the api's public origin).
 */
export async function startEmbeddedS3(options: {
  directory: string;
  bucket: string;
  port?: number;
  host?: string;
  secretAccessKey?: string;
  corsOrigins?: string[];
}): Promise<EmbeddedS3> {
  const host = options.host ?? '127.0.0.1';
  const server = new S3rver({
    address: host,
    port: options.port ?? 0,
    directory: options.directory,
    silent: true,
    configureBuckets: [{ name: options.bucket, configs: options.corsOrigins?.length ? [browserUploadCors(options.corsOrigins)] : [] }],
  });
  useBeforeRouter(server, verifySignatureV4({ accessKeyId: EMBEDDED_S3_CREDENTIALS.accessKeyId, secretAccessKey: options.secretAccessKey ?? EMBEDDED_S3_CREDENTIALS.secretAccessKey }));
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

/**
 * The bucket CORS rule a browser upload needs: PUT (single and multipart parts) and GET from
 * the given origins, the Content-Type header, and the ETag exposed (complete names each part's).
 */
function browserUploadCors(origins: string[]): string {
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return [
    '<CORSConfiguration><CORSRule>',
    ...origins.map((origin) => `<AllowedOrigin>${escape(origin)}</AllowedOrigin>`),
    '<AllowedMethod>PUT</AllowedMethod><AllowedMethod>GET</AllowedMethod><AllowedMethod>HEAD</AllowedMethod>',
    '<AllowedHeader>Content-Type</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>3600</MaxAgeSeconds>',
    '</CORSRule></CORSConfiguration>',
  ].join('');
}
