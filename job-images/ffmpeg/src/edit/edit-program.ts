import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { JobFailure } from '../../../lib/job-failure.ts';
import type { JobContext, JobProgram } from '../../../lib/job-program.ts';
import type { JobSpec } from '../../../lib/job-spec.ts';
import type { StepOf } from '../../../../crds/contract/programs.ts';
import { stepFraction } from '../../../lib/progress.ts';
import { mediaEditInputSchema, type MediaEditInput, type MediaEditResult } from '../../../../crds/contract/programs/media-edit.ts';
import { probeKeyframes, probeSource, withDuration, type MediaDescription } from '../media/probe.ts';
import { MediaToolError, mediaToolsFromEnv, runFfmpeg, type MediaTools } from '../media/tools.ts';
import {
  concatScript,
  EDIT_OUTPUTS,
  keptRanges,
  reencodeArgs,
  snapToKeyframes,
  streamCopyArgs,
  totalMs,
  type EditOutputKind,
  type EditPlan,
} from './edit-args.ts';
import { artifactsOfStoredOutput } from './output-artifacts.ts';

/** Stream copy into MP4/M4A is only H.264/AAC in, H.264/AAC out; anything else is re-encoded. */
function canStreamCopy(media: MediaDescription, plan: EditPlan): boolean {
  const videoOk = plan.videoStreamIndex === null || media.videoCodec === 'h264';
  const audioOk = plan.audioStreamIndex === null || media.audioCodec === 'aac';
  return videoOk && audioOk;
}

async function keyframesMsOf(tools: MediaTools, source: string, media: MediaDescription, signal: AbortSignal): Promise<number[]> {
  return (await probeKeyframes(tools, source, signal, media)).map((seconds) => Math.round(seconds * 1000));
}

async function run(spec: JobSpec<MediaEditInput>, ctx: JobContext<StepOf<'media-edit'>>): Promise<MediaEditResult> {
  const input = spec.input;
  const tools = mediaToolsFromEnv(ctx.env);
  const source = join(ctx.workDir, 'source');

  ctx.progress.report('download', 0);
  await ctx.storage.download(input.sourceKey, source, { signal: ctx.signal, onProgress: stepFraction(ctx.progress, 'download') });

  ctx.progress.report('probe', 0);
  const media = await withDuration(tools, await probeSource(tools, source, input.sourceKey, ctx.signal), source, input.sourceKey, ctx.signal);
  if (media.kind === 'image') throw new JobFailure('Images cannot be edited: only video and audio files can be trimmed or cut', { code: 'edit.not_editable' });
  if (input.extractAudio && !media.hasAudio) throw new JobFailure('The source has no audio track to extract', { code: 'edit.no_audio' });
  const output: EditOutputKind = input.extractAudio || media.kind === 'audio' ? 'audio' : 'video';
  const durationMs = Math.round((media.durationSeconds ?? 0) * 1000);
  const kept = keptRanges({ startMs: input.startMs, endMs: input.endMs }, input.cuts, durationMs);
  if (kept.length === 0) throw new JobFailure('Nothing of the source is left once the range is applied and the cuts are removed', { code: 'edit.nothing_kept' });

  const plan: EditPlan = {
    ranges: kept,
    videoStreamIndex: output === 'video' ? media.videoStreamIndex : null,
    audioStreamIndex: media.hasAudio ? media.audioStreamIndex : null,
    output,
  };
  const streamCopy = input.fastMode && canStreamCopy(media, plan);
  const file = EDIT_OUTPUTS[output];
  const outputPath = join(ctx.workDir, file.name);
  ctx.log.info('edit planned', { ranges: plan.ranges.length, kept_ms: totalMs(plan.ranges), stream_copy: streamCopy, output });

  ctx.progress.report('edit', 0);
  let args: string[];
  if (streamCopy) {
    if (plan.videoStreamIndex !== null) plan.ranges = snapToKeyframes(plan.ranges, await keyframesMsOf(tools, source, media, ctx.signal));
    const script = join(ctx.workDir, 'pieces.ffconcat');
    await writeFile(script, concatScript(source, plan.ranges));
    args = streamCopyArgs(plan, { script, output: outputPath });
  } else {
    args = reencodeArgs(plan, { source, output: outputPath });
  }
  const reportEdit = stepFraction(ctx.progress, 'edit');
  const expectedSeconds = totalMs(plan.ranges) / 1000;
  try {
    await runFfmpeg(tools, args, { signal: ctx.signal, onProgress: (outSeconds) => reportEdit(outSeconds / expectedSeconds) });
  } catch (error) {
    if (!(error instanceof MediaToolError)) throw error;
    throw new JobFailure(`The edit could not be made: ${error.stderrTail.at(-1) ?? 'ffmpeg failed'}`, { cause: error, code: 'edit.failed' });
  }

  ctx.progress.report('upload', 0);
  const key = ctx.outputKey(file.name);
  await ctx.storage.uploadFile(key, outputPath, file.contentType, ctx.signal);

  const artifact = await artifactsOfStoredOutput(spec, ctx, { key, contentType: file.contentType });
  return {
    output_key: key,
    size_bytes: artifact.size_bytes,
    content_type: file.contentType,
    duration_ms: artifact.duration_ms ?? 0,
    stream_copied: streamCopy,
    artifact,
  };
}

/** `program: "media-edit"`: keeps [start, end) minus the cuts of a source, as MP4 or M4A, then describes the result. */
export const mediaEditProgram: JobProgram<'media-edit'> = {
  name: 'media-edit',
  run,
};
