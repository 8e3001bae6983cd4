// The one frame rule of an edit, below the api and the job images alike: the editing core
// (api/src/editing/) quantizes the output with it, and the render program reads the frames
// it was handed by it, so a render and every timeline file keep the same frames.
//   - The output runs at one rate: the main footage's, when it is a sane constant rate.
//   - Frame k of a source (and of the output) starts at k × den / num seconds.
//   - A time becomes a frame edge by rounding to the nearest edge: a kept stretch
//     [start, end) plays the frames [frameAt(start), frameAt(end)).
//   - A kept stretch between two cuts shorter than one frame is no stretch (editing core).
// Times the api writes are frame edges rounded to the millisecond: frameAt gives the edge
// back exactly, since a frame (at most 60 per second) is far longer than the rounding.

export interface Rational {
  num: number;
  den: number;
}

/** When the main footage states no usable rate (audio only, stills, files measured before rates were recorded). */
export const FALLBACK_FRAME_RATE: Rational = { num: 30, den: 1 };
/** Above this a stated rate is taken for a variable-rate file's time base, not its frames. */
const MAX_FRAME_RATE = 60;

/** A rate the output may run at: between 1 and 60 frames a second. */
export function isOutputRate(rate: Rational | null | undefined): rate is Rational {
  return !!rate && rate.num > 0 && rate.den > 0 && rate.num / rate.den >= 1 && rate.num / rate.den <= MAX_FRAME_RATE;
}

/** The output's rate from the main footage's stated one: itself when it may be, else 30. */
export function outputRateOf(stated: Rational | null | undefined): Rational {
  return isOutputRate(stated) ? { num: stated.num, den: stated.den } : FALLBACK_FRAME_RATE;
}

/** The frame edge nearest to `ms` (frame k's edge is where it starts). */
export function frameAt(ms: number, rate: Rational): number {
  return Math.max(0, Math.round((ms * rate.num) / (1000 * rate.den)));
}

/** Where frame edge `frame` lies, in milliseconds (exact; not rounded). */
export function frameEdgeMs(frame: number, rate: Rational): number {
  return (frame * 1000 * rate.den) / rate.num;
}

/** Where frame edge `frame` lies, rounded to the millisecond: what a request or a file carries (frameAt reads it back exactly). */
export function frameEdgeWholeMs(frame: number, rate: Rational): number {
  return Math.round(frameEdgeMs(frame, rate));
}

/** How long one frame lasts, in milliseconds. */
export function frameMs(rate: Rational): number {
  return (1000 * rate.den) / rate.num;
}

export function sameRate(a: Rational, b: Rational): boolean {
  return a.num * b.den === b.num * a.den;
}
