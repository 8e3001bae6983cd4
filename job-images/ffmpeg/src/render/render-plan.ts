// The full render as data: a RenderInput and the probes of its sources → the output's
// frame grid, every segment's exact frames and samples, the ffmpeg inputs, the one
// -filter_complex graph and the encoder and loudness arguments. Nothing here runs
// anything; the render program executes what this says. Each stage is its own module:
// frame-grid → source-reads → picture and sound per segment → assets → the picture and
// the sound after the cuts → the render pass (→ loudness).
import { outputFrameSize } from '../../../../crds/contract/programs/render.ts';
import type { RenderInput } from '../../../../crds/contract/programs/render.ts';
import { audioEncoderArgs, ENCODER_PRESETS, faststartMp4, videoEncoderArgs } from '../media/encode.ts';
import { rateText } from '../media/ffmpeg-text.ts';
import type { MediaProbe, Rational } from '../media/probe.ts';
import { commonArgs } from '../media/tools.ts';
import { planAssets, type PlannedAssets } from './assets.ts';
import { frameTime, outputFrameRate, planSegments, samplesAt, type PlannedSegment } from './frame-grid.ts';
import { loudnessPlan, type LoudnessPlan } from './loudness.ts';
import { pictureShape, pictureStepChains, segmentPicture, shapeAndFlipSteps, textSteps } from './picture.ts';
import { RenderPlanError } from './render-plan-error.ts';
import { mainSoundChains, segmentSound } from './sound.ts';
import { readSources } from './source-reads.ts';

/** An intermediate render loses nothing the final AAC keeps. */
const INTERMEDIATE_AUDIO = ['-c:a', 'pcm_f32le', '-f', 'wav'];

/** Paths the plan names; the program owns the files. */
export interface RenderFiles {
  /** Local path of each source, by source id. */
  sources: ReadonlyMap<string, string>;
  /** Where the captions' ASS script is written (when there are captions). */
  captions: string;
  /** The shipped fonts (fonts-dejavu-core). */
  fontsDir: string;
  output: string;
  /** With loudness normalisation: the picture and the sound rendered apart, then measured and muxed. */
  intermediateVideo: string;
  intermediateAudio: string;
}

export interface RenderPlan {
  width: number;
  height: number;
  frameRate: Rational;
  frameCount: number;
  durationSeconds: number;
  audioSamples: number;
  segments: PlannedSegment[];
  /** The output frames each shown asset covers (assets.ts). */
  assetFrames: PlannedAssets['frames'];
  /** Every ffmpeg input, in order, with its own options (-ss/-t/-loop) and -i. */
  inputs: string[][];
  filterGraph: string;
  /** The ASS script to write to files.captions; null without captions. */
  captionsScript: string | null;
  /** Null: no normalisation, the render pass writes the final MP4. */
  loudness: LoudnessPlan | null;
  /** The render pass: the final MP4, or (with loudness) the intermediate picture and sound. */
  renderArgs: string[];
}

/** What the api and the program agree on for every input; the render plan as data. */
export function planRender(input: RenderInput, probes: ReadonlyMap<string, MediaProbe>, files: RenderFiles): RenderPlan {
  const { settings } = input;
  const output = outputFrameSize(settings.resolution, settings.aspectRatio);
  const rate = outputFrameRate(input, probes);
  const segments = planSegments(input, probes, rate);
  const frameCount = segments.reduce((sum, segment) => sum + segment.frameCount, 0);
  const durationSeconds = frameTime(frameCount, rate);
  const totalSamples = samplesAt(frameCount, rate);
  const pathOf = (sourceId: string): string => {
    const path = files.sources.get(sourceId);
    if (!path) throw new RenderPlanError(`no local file for source ${sourceId}`);
    return path;
  };

  const shape = pictureShape(segments, probes, output, settings);
  const reads = readSources(segments, rate, pathOf, (segment) => [...(shape.shared ? [] : shape.filtersOf(segment)), 'format=yuv420p']);
  const cuts = segments.flatMap((segment, index) => {
    const offset = reads.offsets[segment.inputIndex] ?? 0;
    const pad = reads.pads.get(segment) ?? { video: '', audio: '', stillFirstFrame: null };
    const picture = segmentPicture(segment, probes.get(segment.sourceId) as MediaProbe, { rate, output, settings, shape, offset, stillFirstFrame: pad.stillFirstFrame });
    return [`${pad.video}${picture}[v${index}]`, `${pad.audio}${segmentSound(segments, index, offset)}[a${index}]`];
  });
  const assets = planAssets(input, probes, { output, rate, durationSeconds, firstInput: reads.inputs.length, pathOf });
  const text = textSteps(input, output, files);
  const pictureSteps = [...shapeAndFlipSteps(shape, settings), ...assets.overlays, ...text.steps];
  // The cuts joined: straight to [vout] when no step follows on the picture.
  const concat = `${segments.map((_, index) => `[v${index}][a${index}]`).join('')}concat=n=${segments.length}:v=1:a=1[${pictureSteps.length > 0 ? 'vcat' : 'vout'}][acat]`;

  const inputs = [...reads.inputs, ...assets.inputs];
  const filterGraph = [
    ...reads.chains,
    ...cuts,
    ...assets.chains,
    concat,
    ...pictureStepChains(pictureSteps),
    ...mainSoundChains(input, assets.sounds, assets.mainWindows, totalSamples),
  ].join(';');
  const loudness = loudnessPlan(settings.audio);
  return {
    width: output.width,
    height: output.height,
    frameRate: rate,
    frameCount,
    durationSeconds,
    audioSamples: totalSamples,
    segments,
    assetFrames: assets.frames,
    inputs,
    filterGraph,
    captionsScript: text.captionsScript,
    loudness,
    renderArgs: renderPassArgs(inputs, filterGraph, rate, loudness, files),
  };
}

/** The one render pass: the final MP4, or (with loudness) the picture and the lossless sound apart. */
function renderPassArgs(inputs: readonly string[][], filterGraph: string, rate: Rational, loudness: LoudnessPlan | null, files: RenderFiles): string[] {
  const preset = ENCODER_PRESETS.render;
  const picturesOut = ['-map', '[vout]', ...videoEncoderArgs(preset), '-r', rateText(rate)];
  return [
    ...commonArgs,
    ...inputs.flat(),
    '-filter_complex', filterGraph,
    ...(loudness
      ? [...picturesOut, '-an', '-f', 'mp4', files.intermediateVideo, '-map', '[aout]', ...INTERMEDIATE_AUDIO, files.intermediateAudio]
      : [...picturesOut, '-map', '[aout]', ...audioEncoderArgs(preset), ...faststartMp4(files.output)]),
  ];
}
