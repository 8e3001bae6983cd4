import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACT_FILES, artifactInputSchema, type ArtifactInput, type ArtifactResult } from '../../../../crds/contract/programs/artifact.ts';
import { JobFailure } from '../../../lib/job-failure.ts';
import type { JobContext, JobProgram } from '../../../lib/job-program.ts';
import type { JobSpec } from '../../../lib/job-spec.ts';
import type { StepOf } from '../../../../crds/contract/programs.ts';
import { stepFraction } from '../../../lib/progress.ts';
import { probeSource, withDuration } from '../media/probe.ts';
import type { MediaDescription, MediaKind } from '../media/probe.ts';
import { MediaToolError, mediaToolsFromEnv, runFfmpeg } from '../media/tools.ts';
import type { MediaTools } from '../media/tools.ts';
import { needsProxy } from '../proxy/proxy-args.ts';
import { artifactPassArgs, firstFrameThumbnailArgs, planArtifacts } from './artifact-args.ts';
import type { ArtifactFiles, ArtifactPlan } from './artifact-args.ts';
import { readKeyframes } from './keyframe-list.ts';
import { WaveformPeaks } from './waveform.ts';

/** Generic types browsers and phones send for media files they cannot name. */
const GENERIC_MEDIA_TYPES = ['application/octet-stream', 'application/mp4', 'application/ogg', 'application/x-matroska'];

/** Decoding that stops this far short of the declared duration means the file was cut. */
const TRUNCATION_TOLERANCE = { fraction: 0.9, seconds: 0.5 };
/** Decoding that runs this far past the declared duration means the container under-declares it: the decoded length is recorded. */
const DECLARED_SHORT_TOLERANCE = { fraction: 0.02, seconds: 0.5 };

function assertSupportedContentType(contentType: string): void {
  const mediaType = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (/^(video|audio|image)\/[\w.+-]+$/.test(mediaType) || GENERIC_MEDIA_TYPES.includes(mediaType)) return;
  throw new JobFailure(`Unsupported content type "${contentType}": upload a video, audio or image file`, { code: 'media.unsupported_type', params: { content_type: contentType } });
}

const exists = (path: string): Promise<boolean> => access(path).then(() => true, () => false);

/** The artifacts the ffmpeg pass writes to files (the waveform is folded from its stdout). */
function fileArtifacts(plan: ArtifactPlan): ('thumbnail' | 'audio')[] {
  return (['thumbnail', 'audio'] as const).filter((artifact) => (artifact === 'audio' ? plan.audio : plan[artifact] !== null));
}

/** One ffmpeg pass that writes every local artifact and folds the audio into waveform peaks. */
async function makeArtifacts(
  tools: MediaTools,
  media: MediaDescription,
  plan: ArtifactPlan,
  files: ArtifactFiles,
  key: string,
  ctx: JobContext<StepOf<'artifact'>>,
): Promise<{ waveform: WaveformPeaks | null; decodedSeconds: number | null }> {
  const waveform = plan.audio ? new WaveformPeaks() : null;
  const reportProcess = stepFraction(ctx.progress, 'process');
  let partialFile = false;
  let outSeconds: number | null;
  try {
    ({ outSeconds } = await runFfmpeg(tools, artifactPassArgs(media, plan, files), {
      signal: ctx.signal,
      ...(waveform ? { onStdout: (chunk: Buffer) => waveform.push(chunk) } : {}),
      onProgress: (seconds) => {
        if (media.durationSeconds) reportProcess(seconds / media.durationSeconds);
      },
      // The MP4 demuxer's word for "the sample table points past the end of the file".
      onStderrLine: (line) => (partialFile ||= line.includes('partial file')),
    }));
  } catch (error) {
    if (!(error instanceof MediaToolError)) throw error;
    const reason = (error.stderrTail.at(-1) ?? 'no message').replace(`${files.source}: `, '');
    throw new JobFailure(`The media file "${key}" could not be decoded (${reason})`, { cause: error, code: 'media.undecodable' });
  }
  // what a full decode yields: the streams' own length, or the container's less a late start
  const expected = media.streamSeconds ?? (media.durationSeconds === null ? null : media.durationSeconds - Math.max(0, media.startSeconds));
  const cut = expected !== null && outSeconds !== null && outSeconds < expected * TRUNCATION_TOLERANCE.fraction - TRUNCATION_TOLERANCE.seconds;
  if (partialFile || cut) {
    const where = outSeconds !== null && expected !== null ? `: its data ends at ${outSeconds.toFixed(1)} s of ${expected.toFixed(1)} s` : '';
    throw new JobFailure(`The media file "${key}" is truncated${where}; the upload was probably cut short, upload it again`, { code: 'media.truncated' });
  }
  if (plan.thumbnail && media.kind === 'video' && !(await exists(files.thumbnail))) {
    ctx.log.warn('no frame at the thumbnail time, taking the first frame');
    await runFfmpeg(tools, firstFrameThumbnailArgs(media, plan, files), { signal: ctx.signal }).catch(() => {});
  }
  for (const artifact of fileArtifacts(plan)) {
    if (!(await exists(files[artifact]))) {
      throw new JobFailure(`The media file "${key}" could not be decoded: ffmpeg produced no ${ARTIFACT_FILES[artifact].name}`, { code: 'media.undecodable' });
    }
  }
  return { waveform, decodedSeconds: outSeconds };
}

/**
 * The duration recorded for the file: the container's, unless decoding ran clearly past it
 * (a Matroska Segment Duration that says 3 s over 90 s of speech). Analysis is charged by
 * it, so it is measured, not taken from the container's word.
 */
function measuredDuration(media: MediaDescription, decodedSeconds: number | null): number | null {
  const declared = media.durationSeconds;
  if (media.kind === 'image' || decodedSeconds === null || declared === null) return declared;
  return decodedSeconds > declared + Math.max(DECLARED_SHORT_TOLERANCE.seconds, declared * DECLARED_SHORT_TOLERANCE.fraction) ? decodedSeconds : declared;
}

async function run(spec: JobSpec<ArtifactInput>, ctx: JobContext<StepOf<'artifact'>>): Promise<ArtifactResult> {
  const { sourceKey: key, contentType, storeKey, expectedSizeBytes } = spec.input;
  assertSupportedContentType(contentType);
  const tools = mediaToolsFromEnv(ctx.env);
  const files: ArtifactFiles = {
    source: join(ctx.workDir, 'source'),
    thumbnail: join(ctx.workDir, ARTIFACT_FILES.thumbnail.name),
    audio: join(ctx.workDir, ARTIFACT_FILES.audio.name),
    packets: join(ctx.workDir, 'packets.framecrc'),
  };

  ctx.progress.report('download', 0);
  const stored = await ctx.storage.download(key, files.source, {
    signal: ctx.signal,
    onProgress: stepFraction(ctx.progress, 'download'),
  });
  if (stored.sizeBytes === 0) throw new JobFailure(`The uploaded object "${key}" is empty (0 bytes)`, { code: 'media.empty' });
  // the upload URL may still be live: bytes other than the ones charged at confirm are refused
  if (expectedSizeBytes !== undefined && stored.sizeBytes !== expectedSizeBytes) {
    throw new JobFailure(`The uploaded object "${key}" changed after it was confirmed (${stored.sizeBytes} bytes, ${expectedSizeBytes} charged)`, { code: 'upload.changed' });
  }

  ctx.progress.report('probe', 0);
  const probed = await probeSource(tools, files.source, key, ctx.signal);
  const media = await withDuration(tools, probed, files.source, key, ctx.signal);
  const plan = planArtifacts(media);
  ctx.log.info('media probed', { kind: media.kind, web_compatible: media.webCompatible, duration_s: media.durationSeconds });

  ctx.progress.report('process', 0);
  const { waveform, decodedSeconds } = await makeArtifacts(tools, media, plan, files, key, ctx);
  const durationSeconds = measuredDuration(media, decodedSeconds);
  const keyframesMs = media.kind === 'video' ? await readKeyframes(files.packets) : null;
  ctx.log.info('keyframes listed', { count: keyframesMs?.length ?? null });
  if (durationSeconds !== media.durationSeconds) ctx.log.warn('the container under-declares its duration: the decoded length is recorded', { declared_s: media.durationSeconds, decoded_s: durationSeconds });

  const waveformDocument = waveform?.finish() ?? null;
  const uploads = fileArtifacts(plan);
  const keyOf = (artifact: keyof typeof ARTIFACT_FILES): string | null =>
    (artifact === 'waveform' ? waveformDocument !== null : uploads.includes(artifact)) ? ctx.outputKey(ARTIFACT_FILES[artifact].name) : null;
  const reportUpload = stepFraction(ctx.progress, 'upload');
  let uploaded = 0;
  const countUpload = (): void => reportUpload(++uploaded / (uploads.length + (waveformDocument ? 1 : 0)));
  ctx.progress.report('upload', 0);
  await Promise.all([
    // the served object holds exactly the bytes hashed above, whatever its staging key receives later
    storeKey && storeKey !== key ? ctx.storage.uploadFile(storeKey, files.source, contentType, ctx.signal) : undefined,
    ...uploads.map((artifact) =>
      ctx.storage
        .uploadFile(ctx.outputKey(ARTIFACT_FILES[artifact].name), files[artifact], ARTIFACT_FILES[artifact].contentType, ctx.signal)
        .then(countUpload),
    ),
    waveformDocument ? ctx.storage.putJson(ctx.outputKey(ARTIFACT_FILES.waveform.name), waveformDocument, ctx.signal).then(countUpload) : undefined,
  ]);

  return {
    sha256: stored.sha256,
    size_bytes: stored.sizeBytes,
    kind: media.kind,
    duration_ms: durationSeconds === null ? null : Math.round(durationSeconds * 1000),
    width: media.width,
    height: media.height,
    has_audio: media.hasAudio,
    video_codec: media.videoCodec,
    audio_codec: media.audioCodec,
    container: media.container,
    frame_rate: media.kind === 'video' ? (media.video?.frameRate ?? null) : null,
    web_compatible: media.webCompatible,
    proxy_status: needsProxy(media) ? 'pending' : 'not_applicable',
    artifacts: {
      waveform_key: keyOf('waveform'),
      thumbnail_key: keyOf('thumbnail'),
      audio_key: keyOf('audio'),
    },
    waveform_peaks_count: waveformDocument?.peaks.length ?? null,
    keyframes_ms: keyframesMs,
  };
}

/** `program: "artifact"`: checksum, probe, thumbnail, waveform, 16 kHz audio and the picture's keyframes; whether a proxy is still to be made. */
export const artifactProgram: JobProgram<'artifact'> = {
  name: 'artifact',
  run,
};
