import { AUDIO_SAMPLE_RATE_HZ } from './artifact-args.ts';

/**
 * Waveform peaks: for every 1/PEAKS_PER_SECOND s window of the 16 kHz mono audio,
 * the largest absolute sample, normalized to 0..1 (1 = full scale) and rounded to
 * 3 decimals. The last window may be shorter. Enough resolution for a timeline
 * zoomed to 50 ms, and a 10-minute file stays around 60 kB of JSON.
 */
export const PEAKS_PER_SECOND = 20;
const SAMPLES_PER_PEAK = AUDIO_SAMPLE_RATE_HZ / PEAKS_PER_SECOND;

/** The document stored as `waveform.json`. */
export interface WaveformDocument {
  version: 1;
  sample_rate_hz: number;
  peaks_per_second: number;
  samples_per_peak: number;
  peaks: number[];
}

/** Folds a stream of signed 16-bit little-endian mono samples into peaks, chunk by chunk. */
export class WaveformPeaks {
  readonly peaks: number[] = [];
  private windowMax = 0;
  private windowSamples = 0;
  private carry: Buffer | null = null;

  push(chunk: Buffer): void {
    let bytes = chunk;
    // A chunk may end in the middle of a sample.
    if (this.carry) {
      bytes = Buffer.concat([this.carry, chunk]);
      this.carry = null;
    }
    const whole = bytes.length - (bytes.length % 2);
    if (whole < bytes.length) this.carry = Buffer.from(bytes.subarray(whole));
    // A typed view is several times faster than readInt16LE; it needs 2-byte alignment
    // and a little-endian host (x86-64 and arm64 both are).
    const aligned = bytes.byteOffset % 2 === 0 ? bytes : Buffer.from(bytes);
    const samples = new Int16Array(aligned.buffer, aligned.byteOffset, whole / 2);
    for (let index = 0; index < samples.length; index += 1) {
      const sample = samples[index] ?? 0;
      const magnitude = sample < 0 ? -sample : sample;
      if (magnitude > this.windowMax) this.windowMax = magnitude;
      this.windowSamples += 1;
      if (this.windowSamples === SAMPLES_PER_PEAK) this.closeWindow();
    }
  }

  finish(): WaveformDocument {
    if (this.windowSamples > 0) this.closeWindow();
    return {
      version: 1,
      sample_rate_hz: AUDIO_SAMPLE_RATE_HZ,
      peaks_per_second: PEAKS_PER_SECOND,
      samples_per_peak: SAMPLES_PER_PEAK,
      peaks: this.peaks,
    };
  }

  private closeWindow(): void {
    this.peaks.push(Math.round(Math.min(1, this.windowMax / 32767) * 1000) / 1000);
    this.windowMax = 0;
    this.windowSamples = 0;
  }
}
