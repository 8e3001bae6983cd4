/**
 * One render, as the render program does it on local files (renderLocally: probe, smart
 * or full path, loudness), in a process of its own so the benchmark can time it and
 * measure its memory with its ffmpeg children. The S3 download and upload are left out:
 * they cost the same on every path.
 *
 *   node bench/render/render-once.ts <spec.json>    → prints the result as JSON on stdout
 */
import { readFile } from 'node:fs/promises';
import { renderInputSchema } from '../../crds/contract/programs/render.ts';
import { createJobLog } from '../../job-images/lib/job-log.ts';
import { mediaToolsFromEnv } from '../../job-images/ffmpeg/src/media/tools.ts';
import { renderLocally } from '../../job-images/ffmpeg/src/render/render-export.ts';

export interface RenderOnceSpec {
  input: unknown;
  sourcePaths: Record<string, string>;
  outputPath: string;
  workDir: string;
}

const spec = JSON.parse(await readFile(process.argv[2] ?? '', 'utf8')) as RenderOnceSpec;
const rendered = await renderLocally({
  input: renderInputSchema.parse(spec.input),
  sourcePaths: new Map(Object.entries(spec.sourcePaths)),
  outputPath: spec.outputPath,
  workDir: spec.workDir,
  tools: mediaToolsFromEnv(process.env),
  signal: new AbortController().signal,
  log: createJobLog({ program: 'render' }),
  env: process.env,
});
const { plan, ...result } = rendered;
// CPU seconds of this process and of every ffmpeg it waited for (utime, stime, cutime, cstime of
// /proc/self/stat): on a shared machine a steadier figure than the wall clock.
const stat = await readFile('/proc/self/stat', 'utf8');
const ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(11, 15).reduce((total, field) => total + Number(field), 0);
const cpuSeconds = ticks / 100;
// the full path's ffmpeg inputs (the benchmark's pieces case reports them)
process.stdout.write(`${JSON.stringify({ ...result, inputs: plan?.inputs.length ?? null, cpuSeconds })}\n`);
