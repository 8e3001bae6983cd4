// The render's assets (edits placed on the output): each one's input, its picture laid
// over the output while it plays, its sound mixed in, and what it does to the main sound.
import type { RenderAsset, RenderInput, RenderSettings } from '../../../../crds/contract/programs/render.ts';
import { even } from '../media/encode.ts';
import { rateText, secondsText } from '../media/ffmpeg-text.ts';
import type { MediaProbe, Rational } from '../media/probe.ts';
import { geometryOf, letterboxFilters, overlayMargin, type FrameSize, type Geometry } from './picture.ts';
import { frameOfMs, frameTime } from './frame-grid.ts';
import { RenderPlanError } from './render-plan-error.ts';
import { OUTPUT_AUDIO_FORMAT, type MainSoundWindow } from './sound.ts';

/** Ducking lowers the main audio by 12 dB while an asset plays. */
const DUCK_GAIN = 0.25;

function overlayPosition(asset: RenderAsset, margin: number): { x: string; y: string } {
  switch (asset.position) {
    case 'top_left':
      return { x: `${margin}`, y: `${margin}` };
    case 'top_right':
      return { x: `W-w-${margin}`, y: `${margin}` };
    case 'bottom_left':
      return { x: `${margin}`, y: `H-h-${margin}` };
    case 'bottom_right':
      return { x: `W-w-${margin}`, y: `H-h-${margin}` };
    case 'center':
      return { x: '(W-w)/2', y: '(H-h)/2' };
    case 'custom':
      return { x: `W*${asset.x}-w/2`, y: `H*${asset.y}-h/2` };
  }
}

/** The asset's picture: from its offset, on the output's clock from its start, shaped as its edit says. */
function assetPictureChain(asset: RenderAsset, startSeconds: number, geometry: Geometry, output: FrameSize, settings: RenderSettings): string[] {
  const start = secondsText(startSeconds);
  const filters = ['setpts=PTS-STARTPTS+' + start + '/TB'];
  if (asset.visualMode === 'replace') return [...filters, ...letterboxFilters(geometry, output, settings.letterboxColor), 'format=yuv420p'];
  const width = even((output.width * asset.sizePercent) / 100);
  filters.push(`scale=${width}:-2`, 'setsar=1');
  if (asset.flipH) filters.push('hflip');
  if (asset.flipV) filters.push('vflip');
  filters.push('format=rgba');
  if (asset.rotationDeg % 360 !== 0) {
    const radians = String(Math.round(((asset.rotationDeg * Math.PI) / 180) * 1e6) / 1e6);
    filters.push(`rotate=${radians}:ow=rotw(${radians}):oh=roth(${radians}):c=none`);
  }
  if (asset.opacityPercent < 100) filters.push(`colorchannelmixer=aa=${asset.opacityPercent / 100}`);
  return filters;
}

/** What the assets stage knows of the rest of the plan. */
export interface AssetContext {
  output: FrameSize;
  rate: Rational;
  durationSeconds: number;
  /** The first ffmpeg input index after the segments' reads. */
  firstInput: number;
  pathOf(sourceId: string): string;
}

export interface PlannedAssets {
  inputs: string[][];
  /** Each asset's picture ([assetNv]) and sound ([assetNa]) chains. */
  chains: string[];
  /** Picture steps after the cuts, one overlay per asset shown. */
  overlays: string[];
  /** The pads of the sounds mixed into the main sound. */
  sounds: string[];
  mainWindows: MainSoundWindow[];
  /** The output frames each shown asset covers, [firstFrame, endFrame) (what a timeline file places it on). */
  frames: { asset: number; firstFrame: number; endFrame: number }[];
}

export function planAssets(input: RenderInput, probes: ReadonlyMap<string, MediaProbe>, at: AssetContext): PlannedAssets {
  const { output, rate } = at;
  const margin = overlayMargin(output);
  const planned: PlannedAssets = { inputs: [], chains: [], overlays: [], sounds: [], mainWindows: [], frames: [] };
  input.assets.forEach((asset, index) => {
    const probe = probes.get(asset.sourceId);
    if (!probe) throw new RenderPlanError(`asset source ${asset.sourceId} was not probed`);
    // The frames the editing core placed it on: [firstFrame, endFrame) of the output.
    const firstFrame = frameOfMs(asset.outStartMs, rate);
    const endFrame = Math.min(frameOfMs(asset.outEndMs, rate), frameOfMs(at.durationSeconds * 1000, rate));
    if (endFrame <= firstFrame) return;
    planned.frames.push({ asset: index, firstFrame, endFrame });
    const start = frameTime(firstFrame, rate);
    const end = frameTime(endFrame, rate);
    const span = end - start;
    // half a frame either side of the frames' start times: exactly those frames, whatever the float error
    const window = `between(t,${secondsText(frameTime(firstFrame - 0.5, rate))},${secondsText(frameTime(endFrame - 0.5, rate))})`;
    const showsPicture = asset.visualMode !== 'none' && probe.kind !== 'audio';
    const playsSound = asset.audioMode !== 'mute' && probe.hasAudio;
    if (showsPicture || playsSound) {
      const inputIndex = at.firstInput + planned.inputs.length;
      planned.inputs.push(
        probe.kind === 'image'
          ? ['-loop', '1', '-framerate', rateText(rate), '-t', secondsText(span), '-i', at.pathOf(asset.sourceId)]
          : [...(asset.assetOffsetMs > 0 ? ['-ss', secondsText(asset.assetOffsetMs / 1000)] : []), '-t', secondsText(span), '-i', at.pathOf(asset.sourceId)],
      );
      if (showsPicture) {
        planned.chains.push(`[${inputIndex}:v:0]${assetPictureChain(asset, start, geometryOf(probe), output, input.settings).join(',')}[asset${index}v]`);
        const position = asset.visualMode === 'replace' ? { x: '0', y: '0' } : overlayPosition(asset, margin);
        planned.overlays.push(`[asset${index}v]overlay=x=${position.x}:y=${position.y}:eof_action=repeat:enable='${window}'`);
      }
      if (playsSound) {
        const delayMs = Math.round(start * 1000);
        planned.chains.push(
          `[${inputIndex}:a:0]atrim=end=${secondsText(span)},asetpts=PTS-STARTPTS,${OUTPUT_AUDIO_FORMAT},volume=${asset.volumePercent / 100},` +
            `adelay=delays=${delayMs}:all=1[asset${index}a]`,
        );
        planned.sounds.push(`[asset${index}a]`);
      }
    }
    const range = { outStartMs: Math.round(start * 1000), outEndMs: Math.round(end * 1000) };
    if (asset.audioMode === 'replace') planned.mainWindows.push({ gain: 0, ranges: [range] });
    else if (asset.audioMode === 'duck' || asset.duckMain) planned.mainWindows.push({ gain: DUCK_GAIN, ranges: [range] });
  });
  return planned;
}
