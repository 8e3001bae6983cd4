declare module 's3rver' {
  import type { AddressInfo } from 'node:net';
  import type { Middleware } from 'koa';
  interface S3rverOptions {
    address?: string;
    port?: number;
    directory: string;
    silent?: boolean;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
  }
  /** The part of s3rver's FilesystemStore (lib/stores/filesystem.js) that the gap fills reuse. */
  export interface FilesystemStore {
    /** `<root>/<bucket>/<key dirs>/<last segment>._S3rver_<resource>`; key undefined names a bucket-level resource. */
    getResourcePath(bucket: string, key: string | undefined, resource: string): string;
    getBucket(bucket: string): Promise<object | null>;
    /** `<root>/<bucket>`: the directory the bucket's objects are under. */
    getBucketPath(bucket: string): string;
    /** Concatenates the listed parts of an upload into its object, then deletes the upload's directory. */
    putObjectMultipart(bucket: string, uploadId: string, parts: { number: number; etag: string }[]): Promise<{ md5: string; size: number }>;
    /** Walks the bucket's directories; the gap fills wrap it (see listConsistently). */
    listObjects(bucket: string, options: Record<string, unknown>): Promise<unknown>;
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    /** S3rver is a Koa application: its stack, composed when the server starts listening. */
    readonly middleware: Middleware[];
    readonly store: FilesystemStore;
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    reset(): void;
  }
}

declare module 's3rver/lib/middleware/authentication.js' {
  import type { Middleware } from 'koa';
  /** s3rver's request authentication; reads ctx.params.bucket and ctx.params.key. */
  export default function authentication(): Middleware;
}

declare module 's3rver/lib/models/error.js' {
  /** An S3 error; s3rver's context.onerror renders it as S3's XML error body with its status. */
  export default class S3Error extends Error {
    constructor(code: string, message: string, detail?: Record<string, string | number>);
    readonly code: string;
    readonly status: number;
  }
}

declare module 's3rver/lib/models/account.js' {
  /** The one account s3rver knows: it owns every bucket and object. */
  export const DUMMY_ACCOUNT: { readonly id: number; readonly displayName: string };
}
