// Smart render: a cut-only export copies the source's packets between cuts and
// re-encodes only the frames at the edges of each kept range that no copy can hold,
// matched to the source; the audio is rendered apart, sample-exact, and muxed with the
// picture.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { outputFrameSize, type RenderInput } from '../../../../crds/contract/programs/render.ts';
import type { JobLog } from '../../../lib/job-log.ts';
import type { MediaProbe } from '../media/probe.ts';
import { mediaToolsFromEnv, runFfmpeg, runFfprobe, type MediaTools } from '../media/tools.ts';
import { countPacketsArgs, gopCopiesArgs, partListText, seamEncoderArgs, seamsEncodeArgs, smartAudioGraph, smartMuxArgs, smartSoundArgs } from './smart-args.ts';
import { planSmartRender, smartPlanRefusal, SmartRenderNotWorthIt, ticksToSeconds, type SmartPart, type SmartPlan } from './smart-plan.ts';
import { outputFrameRate } from './frame-grid.ts';
import { readSmartSource } from './smart-source.ts';

export { SmartRenderNotWorthIt } from './smart-plan.ts';

export type SmartEligibility = { eligible: true } | { eligible: false; reason: string };

/** Containers whose H.264 is stored as avcC samples with an index we can seek in (ffprobe's demuxer names). */
const COPYABLE_CONTAINERS = ['mov', 'mp4'];

/** Settings that change a frame or a sample beyond cutting; each refuses the smart path with its reason. */
function frameTouchingSetting(input: RenderInput): string | null {
  const { settings } = input;
  if (settings.captions !== null && input.captions.length > 0) return 'captions are burned in';
  if (input.watermark) return 'the watermark is burned in';
  if (settings.crop !== null) return 'the picture is cropped';
  if (settings.flipH || settings.flipV) return 'the picture is flipped';
  if (input.assets.length > 0) return 'asset edits are placed on the output';
  if (settings.censorship !== 'none' && input.censored.length > 0) return `censored words are ${settings.censorship === 'mute' ? 'muted' : 'bleeped'}`;
  if (settings.audio.normalize) return 'the loudness is normalised';
  if (settings.audio.noiseReduction) return 'noise reduction filters the audio';
  if (settings.audio.mainVolumePercent !== 100) return 'the main volume is changed';
  return null;
}

/** Whether the source itself can be carried into the output untouched. */
function uncarriableSource(input: RenderInput, probe: MediaProbe | undefined): string | null {
  if (!probe || probe.kind !== 'video' || !probe.video) return 'the source is not a probed video';
  const { video } = probe;
  if (video.codec !== 'h264') return `the source's picture is ${video.codec ?? 'of an unknown codec'}, not H.264`;
  if (video.pixelFormat !== 'yuv420p') return `the source's pixel format is ${video.pixelFormat ?? 'unknown'}, not 8-bit 4:2:0 (yuv420p)`;
  if (!probe.container.split(',').some((name) => COPYABLE_CONTAINERS.includes(name))) return `the source's container (${probe.container}) is not MP4 or MOV`;
  if (video.rotationDeg % 360 !== 0) return 'the source is rotated for display';
  if (probe.width !== video.storedWidth || probe.height !== video.storedHeight) return 'the source has non-square pixels';
  if (!video.timeBase) return "the source's picture has no time base";
  const size = outputFrameSize(input.settings.resolution, input.settings.aspectRatio);
  if (video.storedWidth !== size.width || video.storedHeight !== size.height) {
    return `the source is ${video.storedWidth}x${video.storedHeight} and the output ${size.width}x${size.height}, so it is scaled or letterboxed`;
  }
  return null;
}

/**
 * Eligible only when the export touches no frame: one video source played in cut
 * ranges, no inserts, images, captions, watermark, crop, flips, assets, censoring or
 * audio filters, and a source the output can carry as it is (H.264 4:2:0 in MP4/MOV at
 * exactly the output size).
 */
export function smartRenderEligibility(input: RenderInput, probes: ReadonlyMap<string, MediaProbe>): SmartEligibility {
  const refuse = (reason: string): SmartEligibility => ({ eligible: false, reason });
  const touched = frameTouchingSetting(input);
  if (touched) return refuse(touched);
  if (input.segments.some((segment) => segment.inserted)) return refuse('assets are inserted between the segments');
  const sourceIds = new Set(input.segments.map((segment) => segment.sourceId));
  if (sourceIds.size !== 1) return refuse('the segments come from more than one source');
  const [sourceId] = sourceIds;
  if (sourceId === undefined || input.sources[sourceId]?.kind !== 'video') return refuse('the segments do not play a video source');
  const source = uncarriableSource(input, probes.get(sourceId));
  return source ? refuse(source) : { eligible: true };
}

export interface SmartRenderArgs {
  input: RenderInput;
  sourcePaths: ReadonlyMap<string, string>;
  probes: ReadonlyMap<string, MediaProbe>;
  outputPath: string;
  workDir: string;
  signal: AbortSignal;
  onProgress(fraction: number, etaSeconds: number | null): void;
  log: JobLog;
  tools?: MediaTools;
}

/** Two ffmpeg runs at a time: the sound renders beside the picture's runs. */
const SMART_CONCURRENCY = 2;
/** Relative cost of the steps, for progress: a re-encoded frame is 1, a frame decoded to reach a cut 0.3. */
const COST = { encoded: 1, leadIn: 0.3, copied: 0.02, sound: 0.05, muxed: 0.01 } as const;
/**
 * Parts per ffmpeg run: seams share one encoder and copies one process, but every part is
 * an input of its own, and a seam's input holds a decoder and its first frames until the
 * graph starts: a 1080p seam run peaks near 107 MB + 31 MB a part (137 MB for one part, 385
 * for 8, 611 for 16, measured), and two runs go at once.
 */
const PARTS_PER_RUN = 8;

/** A part of the picture and the file it is written to. */
interface PartFile {
  part: SmartPart;
  file: string;
}

/** One ffmpeg run of the smart render before the mux: re-encoded seams, copied GOPs, or the whole sound. */
type SmartTask = { kind: 'seams'; parts: PartFile[]; pattern: string } | { kind: 'copies'; parts: PartFile[] } | { kind: 'sound'; graph: string; file: string };

function taskCost(task: SmartTask, frameCount: number): number {
  if (task.kind === 'sound') return COST.sound * frameCount;
  return task.parts.reduce((total, { part }) => total + (part.kind === 'copy' ? COST.copied * part.frames : COST.encoded * part.frames + COST.leadIn * part.leadInFrames), 0);
}

function inRuns<T>(items: readonly T[]): T[][] {
  const runs: T[][] = [];
  for (let at = 0; at < items.length; at += PARTS_PER_RUN) runs.push(items.slice(at, at + PARTS_PER_RUN));
  return runs;
}

/**
 * The runs of the picture and the sound, and the file each part is written to (plan order):
 * the seams in runs of one encoder each, the copies in runs of one process each.
 */
function smartTasks(plan: SmartPlan, workDir: string, sound: SmartTask): { tasks: SmartTask[]; partFiles: string[] } {
  const partFiles: string[] = [];
  const seams: PartFile[] = [];
  const copies: PartFile[] = [];
  const seamRuns = inRuns(plan.parts.filter((part) => part.kind === 'encode'));
  plan.parts.forEach((part, index) => {
    if (part.kind === 'copy') {
      const file = join(workDir, `smart-copy-${String(index).padStart(4, '0')}.ts`);
      copies.push({ part, file });
      partFiles.push(file);
      return;
    }
    // The segment muxer numbers the files of a run from 0, in the run's order.
    const place = seams.length;
    const run = Math.floor(place / PARTS_PER_RUN);
    const file = join(workDir, `smart-seams-${run}-${String(place % PARTS_PER_RUN).padStart(4, '0')}.ts`);
    seams.push({ part, file });
    partFiles.push(file);
  });
  const tasks: SmartTask[] = [
    // The sound first: it is the longest single run, and it overlaps the picture's runs.
    sound,
    ...seamRuns.map((_, run) => ({ kind: 'seams' as const, parts: seams.slice(run * PARTS_PER_RUN, (run + 1) * PARTS_PER_RUN), pattern: join(workDir, `smart-seams-${run}-%04d.ts`) })),
    ...inRuns(copies).map((parts) => ({ kind: 'copies' as const, parts })),
  ];
  return { tasks, partFiles };
}

/** Progress as a share of the estimated work, with the time left extrapolated from the time so far. */
function progressMeter(total: number, onProgress: SmartRenderArgs['onProgress']): (done: number) => void {
  const started = Date.now();
  let reported = 0;
  return (done) => {
    const fraction = Math.min(1, Math.max(reported, done / total));
    reported = fraction;
    const elapsed = (Date.now() - started) / 1000;
    onProgress(fraction, fraction > 0.02 ? (elapsed * (1 - fraction)) / fraction : null);
  };
}

/** Runs `work` over the items, `concurrency` at a time; after a failure no new item starts. */
async function inPool<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      const index = next;
      next += 1;
      try {
        await work(items[index] as T, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/**
 * Renders a cut-only export the smart way. Throws SmartRenderNotWorthIt (the caller
 * then renders in full and logs the reason) when the export is not eligible, the
 * source's GOPs cannot be cut cleanly, re-encoding would be most of the work, or the
 * output does not hold exactly the planned frames.
 */
export async function smartRender(args: SmartRenderArgs): Promise<{ frameCount: number; durationMs: number }> {
  const { input, sourcePaths, probes, outputPath, workDir, signal, log } = args;
  const tools = args.tools ?? mediaToolsFromEnv(process.env);
  const eligibility = smartRenderEligibility(input, probes);
  if (!eligibility.eligible) throw new SmartRenderNotWorthIt(eligibility.reason);
  const sourceId = input.segments[0]?.sourceId ?? '';
  const probe = probes.get(sourceId);
  const path = sourcePaths.get(sourceId);
  if (!probe?.video || !path) throw new SmartRenderNotWorthIt('the source file or its probe is missing');

  const started = Date.now();
  const elapsed = (): number => Math.round(Date.now() - started) / 1000;
  const source = await readSmartSource(tools, path, probe, signal);
  if (!source) throw new SmartRenderNotWorthIt("the source's packets carry no timestamps to cut by");
  if (source.seamParameterSetId === null) throw new SmartRenderNotWorthIt("the source's H.264 parameter sets (avcC) could not be read");
  const { picture } = source;
  const plan = planSmartRender(picture, input.segments, outputFrameRate(input, probes));
  const refusal = smartPlanRefusal(plan);
  if (refusal) throw new SmartRenderNotWorthIt(refusal);
  log.info('smart render planned', {
    segments: plan.segments.length,
    frames: plan.frameCount,
    copiedFrames: plan.copiedFrames,
    encodedFrames: plan.encodedFrames,
    leadInFrames: plan.leadInFrames,
    parts: plan.parts.length,
    seconds: elapsed(),
  });

  await mkdir(workDir, { recursive: true });
  const frameRate = outputFrameRate(input, probes);
  const encoder = seamEncoderArgs(probe.video, plan.reorderDelay, source.seamParameterSetId, picture.timeBase);
  const videoIndex = probe.video.index;
  const sound = join(workDir, 'smart-sound.m4a');
  const { tasks, partFiles } = smartTasks(plan, workDir, { kind: 'sound', graph: smartAudioGraph(picture, plan, probe.audio, 0), file: sound });
  const costs = tasks.map((task) => taskCost(task, plan.frameCount));
  const muxCost = COST.muxed * plan.frameCount;
  const progress = progressMeter(costs.reduce((total, cost) => total + cost, muxCost), args.onProgress);
  const shares = tasks.map(() => 0);
  const tasksDone = (): number => costs.reduce((total, cost, index) => total + cost * (shares[index] ?? 0), 0);
  await inPool(tasks, SMART_CONCURRENCY, async (task, index) => {
    const spanTicks = task.kind === 'sound' ? plan.durationTicks : task.parts.reduce((total, { part }) => total + part.endPts - part.startPts, 0);
    const seconds = ticksToSeconds(picture, spanTicks);
    const onProgress = (outSeconds: number): void => {
      shares[index] = seconds > 0 ? Math.min(1, outSeconds / seconds) : 0;
      progress(tasksDone());
    };
    const taskArgs =
      task.kind === 'sound'
        ? smartSoundArgs(probe.audio ? path : null, task.graph, task.file)
        : task.kind === 'copies'
          ? gopCopiesArgs(path, picture, task.parts.map(({ part, file }) => ({ part, output: file })), videoIndex)
          : seamsEncodeArgs({ source: path, picture, parts: task.parts.map(({ part }) => part), frameRate, encoder, outputPattern: task.pattern, videoStreamIndex: videoIndex });
    await runFfmpeg(tools, taskArgs, { signal, onProgress });
    shares[index] = 1;
    progress(tasksDone());
  });
  log.info('smart render parts written', { seconds: elapsed() });

  const partList = join(workDir, 'smart-parts.ffconcat');
  await writeFile(partList, partListText(picture, plan.parts, partFiles));
  const timeScale = picture.timeBase.num === 1 ? picture.timeBase.den : null;
  const outSeconds = ticksToSeconds(picture, plan.durationTicks);
  const done = tasksDone();
  await runFfmpeg(tools, smartMuxArgs({ partList, sound, timeScale, output: outputPath }), {
    signal,
    onProgress: (seconds) => progress(done + muxCost * Math.min(1, seconds / outSeconds)),
  });

  const counted = z.object({ streams: z.array(z.object({ nb_read_packets: z.string() })) }).parse(await runFfprobe(tools, countPacketsArgs(outputPath), signal));
  const written = Number(counted.streams[0]?.nb_read_packets ?? Number.NaN);
  if (written !== plan.frameCount) throw new SmartRenderNotWorthIt(`the smart output holds ${written} frames where the plan has ${plan.frameCount}`);
  log.info('smart render muxed', { seconds: elapsed() });
  progress(Number.POSITIVE_INFINITY);
  return { frameCount: plan.frameCount, durationMs: Math.round(outSeconds * 1000) };
}
