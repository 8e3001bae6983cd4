import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { JobFailure } from '../../../lib/job-failure.ts';
import type { JobContext, JobProgram } from '../../../lib/job-program.ts';
import type { JobSpec } from '../../../lib/job-spec.ts';
import { progressSlice } from '../../../lib/progress.ts';
import type { ArtifactResult } from '../../../../crds/contracts/artifact.ts';
import { artifactsOfStoredOutput } from '../edit/output-artifacts.ts';

export const mediaImportInputSchema = z.object({
  /** Where the video host serves the file (an MP4 rendition). */
  downloadUrl: z.url(),
  /** Larger downloads are stopped: the per-file maximum. */
  maxBytes: z.number().int().positive(),
});

export type MediaImportInput = z.infer<typeof mediaImportInputSchema>;

export interface MediaImportResult {
  output_key: string;
  size_bytes: number;
  content_type: string;
  artifact: ArtifactResult;
}

const IMPORTED = { name: 'imported.mp4', contentType: 'video/mp4' } as const;
const PROGRESS = { download: [0, 50], upload: [50, 60], artifacts: 60 } as const;

/** Streams the download to disk (never whole in memory), stopping past maxBytes. */
async function download(input: MediaImportInput, path: string, ctx: JobContext): Promise<number> {
  const response = await fetch(input.downloadUrl, { signal: ctx.signal }).catch((error: unknown) => {
    throw new JobFailure(`The video could not be downloaded from ${new URL(input.downloadUrl).host}`, { cause: error, code: 'import.download_failed', params: { host: new URL(input.downloadUrl).host } });
  });
  if (!response.ok || !response.body) throw new JobFailure(`The video host answered ${response.status} for the download`, { code: 'import.download_refused', params: { status: response.status } });
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > input.maxBytes) throw new JobFailure(`The video is ${declared} bytes, over the ${input.maxBytes}-byte maximum`, { code: 'import.too_large', params: { max_bytes: input.maxBytes } });
  const report = progressSlice(ctx.progress, 'download', ...PROGRESS.download);
  let received = 0;
  const bound = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      if (received > input.maxBytes) return callback(new JobFailure(`The video is over the ${input.maxBytes}-byte maximum`, { code: 'import.too_large', params: { max_bytes: input.maxBytes } }));
      if (declared) report(received / declared);
      callback(null, chunk);
    },
  });
  await pipeline(Readable.fromWeb(response.body), bound, createWriteStream(path), { signal: ctx.signal });
  if (received === 0) throw new JobFailure('The video host sent an empty file', { code: 'import.empty' });
  return received;
}

async function run(spec: JobSpec<MediaImportInput>, ctx: JobContext): Promise<MediaImportResult> {
  const path = join(ctx.workDir, IMPORTED.name);
  ctx.progress.report('download', PROGRESS.download[0]);
  await download(spec.input, path, ctx);
  ctx.progress.report('upload', PROGRESS.upload[0]);
  const key = ctx.outputKey(IMPORTED.name);
  await ctx.storage.uploadFile(key, path, IMPORTED.contentType, ctx.signal);
  const artifact = await artifactsOfStoredOutput(spec, ctx, { key, contentType: IMPORTED.contentType }, PROGRESS.artifacts);
  return { output_key: key, size_bytes: artifact.size_bytes, content_type: IMPORTED.contentType, artifact };
}

/** `program: "media-import"`: an external video's MP4 streamed into the bucket, then described by the artifact program. */
export const mediaImportProgram: JobProgram<MediaImportInput, MediaImportResult> = {
  name: 'media-import',
  inputSchema: mediaImportInputSchema,
  run,
};
