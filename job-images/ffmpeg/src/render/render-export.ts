// A whole render on local files, outside the job runtime: probe the sources, take the
// smart path when a cut-only export allows it, else run the full plan (and the
// two-pass loudness normalisation). The render program wraps it with S3; benchmarks
// call it directly.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { outputFrameSize, type RenderInput } from '../../../../crds/contract/programs/render.ts';
import { JobFailure } from '../../../lib/job-failure.ts';
import type { JobLog } from '../../../lib/job-log.ts';
import { describeFile, probeSource, withDuration } from '../media/probe.ts';
import type { MediaProbe } from '../media/probe.ts';
import { MediaToolError, runFfmpeg } from '../media/tools.ts';
import type { MediaTools } from '../media/tools.ts';
import { loudnessApplyArgs, loudnessMeasureArgs } from './loudness.ts';
import { parseLoudnormReport, usableMeasurement } from './loudnorm-report.ts';
import { planRender } from './render-plan.ts';
import type { RenderFiles, RenderPlan } from './render-plan.ts';
import { RenderPlanError } from './render-plan-error.ts';
import { smartRender, smartRenderEligibility, SmartRenderNotWorthIt } from './smart-render.ts';

/** The fonts the image ships (Debian's fonts-dejavu-core); CUTROOM_FONTS_DIR points elsewhere. */
const DEFAULT_FONTS_DIR = '/usr/share/fonts/truetype/dejavu';

type RenderStepName = 'encode' | 'loudness' | 'mux';

export interface LocalRender {
  input: RenderInput;
  /** Local path of every source, by source id. */
  sourcePaths: ReadonlyMap<string, string>;
  outputPath: string;
  /** A directory this render may fill with intermediates. */
  workDir: string;
  tools: MediaTools;
  signal: AbortSignal;
  log: JobLog;
  /** CUTROOM_RENDER_PATH=full forces the full path (benchmarks); CUTROOM_FONTS_DIR. */
  env: NodeJS.ProcessEnv;
  /** A step's own fraction 0..1 and the encoder's estimate of the seconds it still needs. */
  onProgress?: (step: RenderStepName, fraction: number, etaSeconds: number | null) => void;
  /** Probes already made (by id); missing ones are probed here. */
  probes?: ReadonlyMap<string, MediaProbe>;
}

export interface LocalRenderResult {
  path: 'smart' | 'full';
  fallbackReason?: string;
  frameCount: number;
  durationMs: number;
  width: number;
  height: number;
  loudnessLinear: boolean | null;
  /** The full path's plan (absent on the smart path). */
  plan?: RenderPlan;
}

/** Probes every source the input names, with a person's message for a bad one. */
export async function probeRenderSources(
  tools: MediaTools,
  input: RenderInput,
  sourcePaths: ReadonlyMap<string, string>,
  signal: AbortSignal,
): Promise<Map<string, MediaProbe>> {
  const probes = new Map<string, MediaProbe>();
  for (const [sourceId, source] of Object.entries(input.sources)) {
    const path = sourcePaths.get(sourceId);
    if (!path) throw new JobFailure(`The render has no file for source ${sourceId}`, { code: 'render.source_missing' });
    const probe = await probeSource(tools, path, source.key, signal);
    probes.set(sourceId, await withDuration(tools, probe, path, source.key, signal));
  }
  return probes;
}

/** The files of the full path under a work directory. */
export function renderFiles(workDir: string, sourcePaths: ReadonlyMap<string, string>, outputPath: string, env: NodeJS.ProcessEnv): RenderFiles {
  return {
    sources: sourcePaths,
    captions: join(workDir, 'captions.ass'),
    fontsDir: env.CUTROOM_FONTS_DIR || DEFAULT_FONTS_DIR,
    output: outputPath,
    intermediateVideo: join(workDir, 'picture.mp4'),
    intermediateAudio: join(workDir, 'sound.wav'),
  };
}

/** ffmpeg's progress as a fraction of the expected output and the time left at the speed so far. */
function encoderMeter(totalSeconds: number, report: (fraction: number, etaSeconds: number | null) => void): (outSeconds: number) => void {
  const started = Date.now();
  return (outSeconds) => {
    const fraction = totalSeconds > 0 ? Math.min(1, outSeconds / totalSeconds) : 1;
    const elapsed = (Date.now() - started) / 1000;
    const speed = elapsed > 0 ? outSeconds / elapsed : 0;
    report(fraction, speed > 0 ? Math.max(0, totalSeconds - outSeconds) / speed : null);
  };
}

async function ffmpegStep(tools: MediaTools, args: string[], signal: AbortSignal, what: string, options: { onProgress?: (seconds: number) => void; onStderrLine?: (line: string) => void } = {}): Promise<void> {
  try {
    await runFfmpeg(tools, args, { signal, ...options });
  } catch (error) {
    if (!(error instanceof MediaToolError) || signal.aborted) throw error;
    throw new JobFailure(`The export could not be rendered (${what}): ${error.stderrTail.at(-1) ?? 'ffmpeg failed'}`, { cause: error, code: 'render.failed' });
  }
}

/** Runs the full plan: one render pass, then (with normalisation) the measure pass and the loudnorm + mux pass. */
async function renderFull(run: LocalRender, probes: ReadonlyMap<string, MediaProbe>): Promise<LocalRenderResult> {
  const { tools, signal, log } = run;
  const files = renderFiles(run.workDir, run.sourcePaths, run.outputPath, run.env);
  let plan: RenderPlan;
  try {
    plan = planRender(run.input, probes, files);
  } catch (error) {
    if (error instanceof RenderPlanError) throw new JobFailure(`The export cannot be rendered: ${error.message}`, { code: 'render.unplannable' });
    throw error;
  }
  if (plan.captionsScript !== null) await writeFile(files.captions, plan.captionsScript);
  log.info('render planned', { frames: plan.frameCount, frame_rate: `${plan.frameRate.num}/${plan.frameRate.den}`, segments: plan.segments.length, inputs: plan.inputs.length });

  await ffmpegStep(tools, plan.renderArgs, signal, 'render pass', {
    onProgress: encoderMeter(plan.durationSeconds, (fraction, eta) => run.onProgress?.('encode', fraction, eta)),
  });
  run.onProgress?.('encode', 1, 0);

  let loudnessLinear: boolean | null = null;
  if (plan.loudness) {
    const measureLines: string[] = [];
    await ffmpegStep(tools, loudnessMeasureArgs(plan.loudness, files.intermediateAudio), signal, 'loudness measure', {
      onStderrLine: (line) => measureLines.push(line),
      onProgress: encoderMeter(plan.durationSeconds, (fraction, eta) => run.onProgress?.('loudness', fraction, eta)),
    });
    const report = parseLoudnormReport(measureLines);
    if (!report) throw new JobFailure('The export could not be rendered (loudness measure): loudnorm reported no measurement', { code: 'render.failed' });
    const measured = usableMeasurement(report);
    const applyLines: string[] = [];
    await ffmpegStep(tools, loudnessApplyArgs(plan.loudness, measured, files), signal, 'loudness normalisation', {
      onStderrLine: (line) => applyLines.push(line),
      onProgress: encoderMeter(plan.durationSeconds, (fraction, eta) => run.onProgress?.('mux', fraction, eta)),
    });
    const fields = { target_lufs: plan.loudness.targetLufs, measured_i: report.input_i, measured_tp: report.input_tp, measured_lra: report.input_lra };
    if (!measured) log.info('the sound is silent: nothing to normalise', fields);
    else {
      const applied = parseLoudnormReport(applyLines);
      loudnessLinear = applied?.normalization_type === 'linear';
      if (loudnessLinear) log.info('loudness normalised in linear mode', { ...fields, output_i: applied?.output_i });
      // Dynamic mode compresses the programme; it happens when one gain would push peaks past the ceiling.
      else log.warn('loudness normalisation could not run in linear mode', { ...fields, output_i: applied?.output_i, normalization_type: applied?.normalization_type ?? 'unreported' });
    }
  }
  run.onProgress?.('mux', 1, 0);

  const written = await describeOutput(tools, run.outputPath, signal);
  return {
    path: 'full',
    frameCount: written.frameCount ?? plan.frameCount,
    durationMs: Math.round(plan.durationSeconds * 1000),
    width: written.width ?? plan.width,
    height: written.height ?? plan.height,
    loudnessLinear,
    plan,
  };
}

/** The written file as ffprobe sees it: what the result reports. */
async function describeOutput(tools: MediaTools, path: string, signal: AbortSignal): Promise<{ frameCount: number | null; width: number | null; height: number | null }> {
  const media = await describeFile(tools, path, signal);
  return { frameCount: media.video?.frameCount ?? null, width: media.width, height: media.height };
}

/**
 * The whole render: the smart path when the export only cuts an H.264 source that can be
 * carried as it is (unless CUTROOM_RENDER_PATH=full), else, or when the smart path
 * declines, the full path.
 */
export async function renderLocally(run: LocalRender): Promise<LocalRenderResult> {
  await mkdir(run.workDir, { recursive: true });
  const probes = run.probes ?? (await probeRenderSources(run.tools, run.input, run.sourcePaths, run.signal));
  const forcedFull = run.env.CUTROOM_RENDER_PATH === 'full';
  const eligibility = forcedFull ? { eligible: false as const, reason: 'CUTROOM_RENDER_PATH=full' } : smartRenderEligibility(run.input, probes);
  if (!eligibility.eligible) {
    run.log.info('full render', { reason: eligibility.reason });
    return renderFull(run, probes);
  }
  let fallbackReason: string;
  try {
    const smart = await smartRender({
      input: run.input,
      sourcePaths: run.sourcePaths,
      probes,
      outputPath: run.outputPath,
      workDir: join(run.workDir, 'smart'),
      signal: run.signal,
      tools: run.tools,
      log: run.log,
      onProgress: (fraction, eta) => run.onProgress?.('encode', fraction, eta),
    });
    const written = await describeOutput(run.tools, run.outputPath, run.signal);
    const planned = outputFrameSize(run.input.settings.resolution, run.input.settings.aspectRatio);
    const size = { width: written.width ?? planned.width, height: written.height ?? planned.height };
    return { path: 'smart', frameCount: smart.frameCount, durationMs: smart.durationMs, ...size, loudnessLinear: null };
  } catch (error) {
    if (run.signal.aborted) throw error;
    if (error instanceof SmartRenderNotWorthIt) fallbackReason = error.reason;
    else {
      // A smart path that breaks must not cost the user the export: the full path can still make it.
      fallbackReason = `smart render failed: ${error instanceof Error ? error.message : String(error)}`;
      run.log.warn('smart render failed, rendering in full', { error: fallbackReason, stack: error instanceof Error ? error.stack : undefined });
    }
  }
  run.log.info('smart render declined, rendering in full', { reason: fallbackReason });
  return { ...(await renderFull(run, probes)), fallbackReason };
}
