import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { RENDER_FILES, type RenderInput, type RenderResult } from '../../../../crds/contract/programs/render.ts';
import type { StepOf } from '../../../../crds/contract/programs.ts';
import type { JobContext, JobProgram } from '../../../lib/job-program.ts';
import type { JobSpec } from '../../../lib/job-spec.ts';
import { mediaToolsFromEnv } from '../media/tools.ts';
import { probeRenderSources, renderLocally } from './render-export.ts';

async function run(spec: JobSpec<RenderInput>, ctx: JobContext<StepOf<'render'>>): Promise<RenderResult> {
  const { input } = spec;
  const tools = mediaToolsFromEnv(ctx.env);
  ctx.progress.report('download', 0);
  const sourcesDir = join(ctx.workDir, 'sources');
  await mkdir(sourcesDir, { recursive: true });
  const sourcePaths = new Map<string, string>();
  const ids = Object.keys(input.sources);
  let downloaded = 0;
  // Sources are few (the footage and its assets); one at a time keeps the disk and link calm.
  for (const [index, sourceId] of ids.entries()) {
    const path = join(sourcesDir, `source-${index}`);
    await ctx.storage.download(input.sources[sourceId]?.key ?? '', path, { signal: ctx.signal });
    sourcePaths.set(sourceId, path);
    ctx.progress.report('download', ++downloaded / ids.length);
  }

  ctx.progress.report('probe', 0);
  const probes = await probeRenderSources(tools, input, sourcePaths, ctx.signal);
  ctx.progress.report('probe', 1);

  const outputPath = join(ctx.workDir, RENDER_FILES.output.name);
  const rendered = await renderLocally({
    input,
    sourcePaths,
    outputPath,
    workDir: join(ctx.workDir, 'render'),
    tools,
    signal: ctx.signal,
    log: ctx.log,
    env: ctx.env,
    probes,
    onProgress: (step, fraction, eta) => ctx.progress.report(step, fraction, eta),
  });

  ctx.progress.report('upload', 0);
  const outputKey = ctx.outputKey(RENDER_FILES.output.name);
  const { size: sizeBytes } = await stat(outputPath);
  await ctx.storage.uploadFile(outputKey, outputPath, RENDER_FILES.output.contentType, ctx.signal);
  ctx.progress.report('upload', 1);
  ctx.log.info('export rendered', { path: rendered.path, frames: rendered.frameCount, size_bytes: sizeBytes, fallback_reason: rendered.fallbackReason });
  return {
    output_key: outputKey,
    size_bytes: sizeBytes,
    duration_ms: rendered.durationMs,
    width: rendered.width,
    height: rendered.height,
    frame_count: rendered.frameCount,
    path: rendered.path,
    ...(rendered.fallbackReason !== undefined ? { fallback_reason: rendered.fallbackReason } : {}),
    loudness_linear: rendered.loudnessLinear,
  };
}

/** `program: "render"`: an export's timeline, captions, assets and audio chain into one H.264/AAC MP4. */
export const renderProgram: JobProgram<'render'> = {
  name: 'render',
  run,
};
