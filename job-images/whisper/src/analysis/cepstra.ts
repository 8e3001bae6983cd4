import FFT from 'fft.js';

/**
 * What speech sounds like, frame by frame: mel-frequency cepstral coefficients, the
 * spectral envelope a phoneme leaves, with loudness taken out. Two renditions of the same
 * words by one voice trace about the same path through them, whatever the recognizer made
 * of either; different words do not (SoundComparer).
 */
export interface Cepstra {
  /** One vector every `frame_ms`, aligned with the energy envelope's frames. */
  frame_ms: number;
  /** Coefficients per frame (c1…cN; c0, the loudness, is left out). */
  dims: number;
  /** frames × dims, frame after frame. */
  values: Float32Array;
}

export const CEPSTRA_FRAME_MS = 10;
const WINDOW_MS = 25;
const DIMS = 12;
const MEL_BANDS = 24;
/** The band every path carries, the telephone's included: the two renditions are compared on what both kept. */
const LOW_HZ = 100;
const HIGH_HZ = 3800;
const PRE_EMPHASIS = 0.97;
/** Where a word's hiss begins: a sibilant's energy lies above it, mains hum and most rooms' rumble below. */
export const HIGH_BAND_HZ = 1000;
/** A band this far under full scale (power) is as quiet as it gets: digital silence has a logarithm. */
const POWER_FLOOR = 1e-10;

const mel = (hz: number): number => 2595 * Math.log10(1 + hz / 700);
const hzOfMel = (value: number): number => 700 * (10 ** (value / 2595) - 1);

/** Triangular mel filters over the FFT's bins: for each band, its first bin and weights. */
function melFilters(sampleRateHz: number, size: number): { first: number; weights: Float32Array }[] {
  const high = Math.min(HIGH_HZ, sampleRateHz / 2);
  const edges = Array.from({ length: MEL_BANDS + 2 }, (_, index) => hzOfMel(mel(LOW_HZ) + ((mel(high) - mel(LOW_HZ)) * index) / (MEL_BANDS + 1)));
  const binOf = (hz: number): number => (hz * size) / sampleRateHz;
  return Array.from({ length: MEL_BANDS }, (_, band) => {
    const [left, centre, right] = [binOf(edges[band]!), binOf(edges[band + 1]!), binOf(edges[band + 2]!)];
    const first = Math.ceil(left);
    const weights = new Float32Array(Math.max(0, Math.floor(right) - first + 1));
    for (let bin = first; bin <= Math.floor(right); bin += 1) {
      weights[bin - first] = bin <= centre ? (bin - left) / (centre - left || 1) : (right - bin) / (right - centre || 1);
    }
    return { first, weights };
  });
}

/**
 * Folds mono samples, chunk by chunk, into cepstra: a 25 ms Hamming window every 10 ms
 * (frame k starts at sample k × hop, so it lines up with the energy envelope's frame k),
 * pre-emphasis, the power spectrum (fft.js), MEL_BANDS mel bands between LOW_HZ and
 * HIGH_HZ, their logarithm, and its DCT-II. Memory: DIMS floats per 10 ms (17 MB an hour).
 */
export class CepstraBuilder {
  private readonly hop: number;
  private readonly window: Float32Array;
  private readonly fft: FFT;
  private readonly input: Float32Array;
  private readonly spectrum: number[];
  private readonly filters: ReturnType<typeof melFilters>;
  private readonly dct: Float32Array;
  private readonly bands = new Float32Array(MEL_BANDS);
  private readonly out: number[] = [];
  private readonly high: number[] = [];
  /** The first FFT bin at or above HIGH_BAND_HZ, and the size the levels are divided by. */
  private readonly highBin: number;
  /** The next frame's window, as far as it has come. */
  private readonly pending: Float32Array;
  private held = 0;
  private previous = 0;
  private seen = 0;
  private frames = 0;

  constructor(sampleRateHz: number) {
    this.hop = Math.max(1, Math.round((sampleRateHz * CEPSTRA_FRAME_MS) / 1000));
    const length = Math.max(2, Math.round((sampleRateHz * WINDOW_MS) / 1000));
    this.window = Float32Array.from({ length }, (_, index) => 0.54 - 0.46 * Math.cos((2 * Math.PI * index) / (length - 1)));
    let size = 4;
    while (size < length) size *= 2;
    this.fft = new FFT(size);
    this.input = new Float32Array(size);
    this.spectrum = this.fft.createComplexArray() as number[];
    this.filters = melFilters(sampleRateHz, size);
    this.dct = new Float32Array(DIMS * MEL_BANDS);
    for (let k = 0; k < DIMS; k += 1) for (let band = 0; band < MEL_BANDS; band += 1) this.dct[k * MEL_BANDS + band] = Math.cos((Math.PI * (k + 1) * (band + 0.5)) / MEL_BANDS);
    this.pending = new Float32Array(length);
    this.highBin = Math.ceil((HIGH_BAND_HZ * size) / sampleRateHz);
  }

  /** Mono samples, −1..1. */
  push(samples: Float32Array): void {
    for (const raw of samples) {
      const value = raw - PRE_EMPHASIS * this.previous;
      this.previous = raw;
      this.pending[this.held++] = value;
      this.seen += 1;
      if (this.held === this.window.length) this.frameAt();
    }
  }

  /** One frame for every hop the samples started, as the envelope has (the last ones zero-padded). */
  finish(): Cepstra {
    const total = Math.ceil(this.seen / this.hop);
    while (this.frames < total) {
      this.pending[this.held++] = 0;
      if (this.held === this.window.length) this.frameAt();
    }
    return { frame_ms: CEPSTRA_FRAME_MS, dims: DIMS, values: Float32Array.from(this.out) };
  }

  /**
   * Each frame's RMS above HIGH_BAND_HZ (the same window, after pre-emphasis: a level to compare
   * with the recording's own only), once finish() has run: where a sibilant or a fricative
   * stands out of a low floor (mains hum, a fan's rumble) that drowns it in the broadband level.
   */
  highBand(): Float32Array {
    return Float32Array.from(this.high);
  }

  /** Computes the frame whose window is pending[0, window) and drops one hop. */
  private frameAt(): void {
    const length = this.window.length;
    this.input.fill(0);
    for (let index = 0; index < length; index += 1) this.input[index] = this.pending[index]! * this.window[index]!;
    this.fft.realTransform(this.spectrum, this.input);
    let highPower = 0;
    for (let bin = this.highBin; bin <= this.input.length / 2; bin += 1) highPower += this.spectrum[2 * bin]! ** 2 + this.spectrum[2 * bin + 1]! ** 2;
    this.high.push(Math.sqrt((2 * highPower) / (length * length)));
    for (const [band, { first, weights }] of this.filters.entries()) {
      let power = 0;
      for (let index = 0; index < weights.length; index += 1) {
        const re = this.spectrum[2 * (first + index)]!;
        const im = this.spectrum[2 * (first + index) + 1]!;
        power += weights[index]! * (re * re + im * im);
      }
      this.bands[band] = Math.log(Math.max(POWER_FLOOR, power / length));
    }
    for (let k = 0; k < DIMS; k += 1) {
      let sum = 0;
      for (let band = 0; band < MEL_BANDS; band += 1) sum += this.dct[k * MEL_BANDS + band]! * this.bands[band]!;
      this.out.push(sum);
    }
    this.frames += 1;
    this.pending.copyWithin(0, this.hop, this.held);
    this.held -= this.hop;
  }
}

/** How a take sounds against the opening of its restart (SoundComparer.compare). */
export interface SoundMatch {
  /** Mean distance along the best alignment. */
  mean: number;
  /** The mean over the take's worst WORST_WINDOW_MS stretch (its last BROKEN_END_MS left out). */
  worst: number;
}

const WORST_WINDOW_MS = 300;
/** A take's last word may be broken off: so much of its end is not held against it. */
const BROKEN_END_MS = 200;
/** A restart may begin this much before the time it is compared from (a recognizer's late word) … */
const EARLY_START_MS = 100;
/** … or this much after it (a breath, an early word). */
const LATE_START_MS = 150;
/** A restart says the take again at between these times its pace (the band the alignment keeps to). */
const SLOWEST = 2;
const FASTEST = 0.5;

/**
 * How alike two stretches of one recording sound: `take` against the opening of what
 * follows `restartMs`, aligned by dynamic time warping (the whole take onto a restart
 * that begins within EARLY_START_MS before to LATE_START_MS after that time, said at
 * half to twice the take's pace, and may run on past it). Each frame is its cepstra and
 * their slopes (±2 frames), every coefficient scaled by its spread over the whole
 * stretch heard, so that distances mean the same over a noise floor as in a quiet room.
 * On the recorded corpus of bench/analysis-robustness, two renditions of the same words
 * by one voice have a mean distance of about 3–5, different words of 5–10
 * (docs/decisions.md has the figures).
 */
export class SoundComparer {
  private readonly frameMs: number;
  private readonly dims: number;
  private readonly frames: number;
  /** Every frame's coefficients and slopes, scaled: frames × dims. */
  private readonly values: Float64Array;

  constructor(cepstra: Cepstra) {
    const { dims, values } = withDeltas(cepstra);
    const frames = values.length / dims;
    const mean = new Float64Array(dims);
    const spread = new Float64Array(dims);
    for (let frame = 0; frame < frames; frame += 1) for (let dim = 0; dim < dims; dim += 1) mean[dim]! += values[frame * dims + dim]! / frames;
    for (let frame = 0; frame < frames; frame += 1) for (let dim = 0; dim < dims; dim += 1) spread[dim]! += (values[frame * dims + dim]! - mean[dim]!) ** 2 / frames;
    this.values = Float64Array.from(values, (value, index) => (value - mean[index % dims]!) / Math.sqrt(spread[index % dims]! || 1));
    this.frameMs = cepstra.frame_ms;
    this.dims = dims;
    this.frames = frames;
  }

  /** The best alignment of `take` onto the speech from `restartMs` (see the class). */
  compare(take: { start_ms: number; end_ms: number }, restartMs: number): SoundMatch | null {
    const { frameMs, dims, frames, values } = this;
    const from = Math.floor(take.start_ms / frameMs);
    const n = Math.ceil(take.end_ms / frameMs) - from;
    const restart = Math.max(0, Math.floor((restartMs - EARLY_START_MS) / frameMs));
    const slack = Math.round((EARLY_START_MS + LATE_START_MS) / frameMs);
    if (from < 0 || n < 2 || from + n > frames || restart + Math.ceil(FASTEST * n) > frames) return null;
    const m = Math.min(frames - restart, slack + Math.ceil(SLOWEST * n) + 1);
    const local = (i: number, j: number): number => {
      let sum = 0;
      for (let dim = 0; dim < dims; dim += 1) sum += (values[(from + i) * dims + dim]! - values[(restart + j) * dims + dim]!) ** 2;
      return Math.sqrt(sum);
    };
    // cost and length of the best path to (i, j), row by row inside the band; `came` says from where (1 diagonal, 2 above, 3 left)
    const came = new Uint8Array(n * m);
    let cost = new Float64Array(m).fill(Infinity);
    let steps = new Float64Array(m).fill(1);
    for (let j = 0; j <= Math.min(slack, m - 1); j += 1) cost[j] = local(0, j);
    for (let i = 1; i < n; i += 1) {
      const next = new Float64Array(m).fill(Infinity);
      const nextSteps = new Float64Array(m).fill(1);
      const low = Math.floor(FASTEST * i);
      const high = Math.min(m - 1, slack + Math.ceil(SLOWEST * i));
      for (let j = low; j <= high; j += 1) {
        let best = cost[j]!;
        let length = steps[j]!;
        let step = 2;
        if (j > 0 && cost[j - 1]! <= best) [best, length, step] = [cost[j - 1]!, steps[j - 1]!, 1];
        if (j > 0 && next[j - 1]! < best) [best, length, step] = [next[j - 1]!, nextSteps[j - 1]!, 3];
        if (best === Infinity) continue;
        next[j] = best + local(i, j);
        nextSteps[j] = length + 1;
        came[i * m + j] = step;
      }
      cost = next;
      steps = nextSteps;
    }
    let mean = Infinity;
    let end = -1;
    for (let j = Math.floor(FASTEST * n); j < m; j += 1) {
      if (cost[j]! / steps[j]! < mean) [mean, end] = [cost[j]! / steps[j]!, j];
    }
    if (end < 0) return null;
    // the path back, each take frame's distance (the least of the restart frames it met)
    const along = new Float64Array(n).fill(Infinity);
    for (let i = n - 1, j = end; i >= 0 && j >= 0; ) {
      along[i] = Math.min(along[i]!, local(i, j));
      const step = i === 0 ? 0 : came[i * m + j];
      if (step === 1) [i, j] = [i - 1, j - 1];
      else if (step === 2) i -= 1;
      else if (step === 3) j -= 1;
      else break;
    }
    // the worst stretch of the take, its broken-off end left out
    const window = Math.round(WORST_WINDOW_MS / frameMs);
    const counted = Math.max(1, n - Math.round(BROKEN_END_MS / frameMs));
    let worst = 0;
    let sum = 0;
    for (let i = 0; i < counted; i += 1) {
      sum += along[i]!;
      if (i >= window) sum -= along[i - window]!;
      if (i >= Math.min(window, counted) - 1) worst = Math.max(worst, sum / Math.min(window, i + 1));
    }
    return { mean, worst };
  }
}

/** Each frame's coefficients and their slope over ±2 frames. */
function withDeltas(cepstra: Cepstra): Cepstra {
  const { dims, values } = cepstra;
  const frames = values.length / dims;
  const out = new Float32Array(frames * dims * 2);
  const at = (frame: number, dim: number): number => values[Math.min(frames - 1, Math.max(0, frame)) * dims + dim]!;
  for (let frame = 0; frame < frames; frame += 1) {
    for (let dim = 0; dim < dims; dim += 1) {
      out[frame * 2 * dims + dim] = values[frame * dims + dim]!;
      out[frame * 2 * dims + dims + dim] = (at(frame + 1, dim) - at(frame - 1, dim) + 2 * (at(frame + 2, dim) - at(frame - 2, dim))) / 10;
    }
  }
  return { frame_ms: cepstra.frame_ms, dims: dims * 2, values: out };
}
