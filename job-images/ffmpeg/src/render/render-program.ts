import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { RENDER_FILES, renderInputSchema, renderStep, type RenderInput, type RenderResult } from '../../../../crds/contract/programs/render.ts';
import type { JobContext, JobProgram } from '../../../lib/job-program.ts';
import type { JobSpec } from '../../../lib/job-spec.ts';
import { mediaToolsFromEnv } from '../media/tools.ts';
import { probeRenderSources, renderLocally, type RenderStepName } from './render-export.ts';

/**
 * Slices of the job's percentage. The api turns reports into export_progress at 5, 30
 * and 85, so sources and plan end at 5, encoding spans 30 and ends at or past 85.
 */
function progressSlices(input: RenderInput): Record<'download' | 'probe' | RenderStepName | 'upload', readonly [number, number]> {
  const encodeEnd = input.settings.audio.normalize ? 85 : 94;
  return { download: [0, 4], probe: [4, 5], encode: [5, encodeEnd], loudness: [encodeEnd, 90], mux: [90, 94], upload: [94, 100] };
}

async function run(spec: JobSpec<RenderInput>, ctx: JobContext): Promise<RenderResult> {
  const { input } = spec;
  const tools = mediaToolsFromEnv(ctx.env);
  const slices = progressSlices(input);
  const report = (step: keyof typeof slices, fraction: number, etaSeconds: number | null = null): void => {
    const [from, to] = slices[step];
    ctx.progress.report(renderStep(step, etaSeconds), from + (to - from) * Math.min(1, Math.max(0, fraction)));
  };

  report('download', 0);
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
    report('download', ++downloaded / ids.length);
  }

  report('probe', 0);
  const probes = await probeRenderSources(tools, input, sourcePaths, ctx.signal);
  report('probe', 1);

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
    onProgress: (step, fraction, eta) => report(step, fraction, eta),
  });

  report('upload', 0);
  const outputKey = ctx.outputKey(RENDER_FILES.output.name);
  const { size: sizeBytes } = await stat(outputPath);
  await ctx.storage.uploadFile(outputKey, outputPath, RENDER_FILES.output.contentType, ctx.signal);
  report('upload', 1);
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
export const renderProgram: JobProgram<RenderInput, RenderResult> = {
  name: 'render',
  inputSchema: renderInputSchema,
  run,
};
