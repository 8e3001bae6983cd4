import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { JobFailure } from '../../../lib/job-failure.ts';
import type { JobContext, JobProgram } from '../../../lib/job-program.ts';
import type { JobSpec } from '../../../lib/job-spec.ts';
import type { StepOf } from '../../../../crds/contract/programs.ts';
import { stepFraction } from '../../../lib/progress.ts';
import { IMPORTED_FILE, mediaImportInputSchema, type MediaImportInput, type MediaImportResult } from '../../../../crds/contract/programs/media-import.ts';
import { artifactsOfStoredOutput } from '../edit/output-artifacts.ts';

/** Redirects followed at most: the host's rendition URL may hop within its origin. */
const MAX_REDIRECTS = 5;

/**
 * GETs the download, following redirects only within the download URL's origin (the
 * host's download origin the api named): a redirect elsewhere, which could point the job
 * at any server reachable from the cluster, fails the job instead.
 */
async function fetchDownload(input: MediaImportInput, ctx: JobContext<StepOf<'media-import'>>): Promise<Response> {
  const origin = new URL(input.downloadUrl).origin;
  let url = new URL(input.downloadUrl);
  for (let hop = 0; ; hop++) {
    const response = await fetch(url, { signal: ctx.signal, redirect: 'manual' }).catch((error: unknown) => {
      throw new JobFailure(`The video could not be downloaded from ${url.host}`, { cause: error, code: 'import.download_failed', params: { host: url.host } });
    });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || location === null) return response;
    await response.body?.cancel();
    const next = URL.parse(location, url.href);
    if (!next || next.origin !== origin) {
      const host = next?.host ?? location;
      throw new JobFailure(`The video host redirected the download to ${host}, outside ${new URL(origin).host}: refused`, { code: 'import.redirect_refused', params: { host } });
    }
    if (hop >= MAX_REDIRECTS) throw new JobFailure(`The video host redirected the download more than ${MAX_REDIRECTS} times`, { code: 'import.download_failed', params: { host: url.host } });
    url = next;
  }
}

/** Streams the download to disk (never whole in memory), stopping past maxBytes. */
async function download(input: MediaImportInput, path: string, ctx: JobContext<StepOf<'media-import'>>): Promise<number> {
  const response = await fetchDownload(input, ctx);
  if (!response.ok || !response.body) throw new JobFailure(`The video host answered ${response.status} for the download`, { code: 'import.download_refused', params: { status: response.status } });
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > input.maxBytes) throw new JobFailure(`The video is ${declared} bytes, over the ${input.maxBytes}-byte maximum`, { code: 'import.too_large', params: { max_bytes: input.maxBytes } });
  const report = stepFraction(ctx.progress, 'download');
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

async function run(spec: JobSpec<MediaImportInput>, ctx: JobContext<StepOf<'media-import'>>): Promise<MediaImportResult> {
  const path = join(ctx.workDir, IMPORTED_FILE.name);
  ctx.progress.report('download', 0);
  await download(spec.input, path, ctx);
  ctx.progress.report('upload', 0);
  const key = ctx.outputKey(IMPORTED_FILE.name);
  await ctx.storage.uploadFile(key, path, IMPORTED_FILE.contentType, ctx.signal);
  const artifact = await artifactsOfStoredOutput(spec, ctx, { key, contentType: IMPORTED_FILE.contentType });
  return { output_key: key, size_bytes: artifact.size_bytes, content_type: IMPORTED_FILE.contentType, artifact };
}

/** `program: "media-import"`: an external video's MP4 streamed into the bucket, then described by the artifact program. */
export const mediaImportProgram: JobProgram<'media-import'> = {
  name: 'media-import',
  run,
};
