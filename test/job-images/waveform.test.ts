import { expect } from 'chai';
import { PEAKS_PER_SECOND, WaveformPeaks } from '../../job-images/ffmpeg/src/artifact/waveform.ts';

/** `count` samples of 16-bit little-endian mono, all equal to `value`. */
function samples(count: number, value: number): Buffer {
  const buffer = Buffer.alloc(count * 2);
  for (let index = 0; index < count; index += 1) buffer.writeInt16LE(value, index * 2);
  return buffer;
}

describe('waveform peaks (waveform.ts)', () => {
  it('one peak per 1/20 s window: the largest absolute sample over full scale, 3 decimals', () => {
    const waveform = new WaveformPeaks();
    waveform.push(samples(800, 16384));
    waveform.push(samples(800, -32768));
    waveform.push(samples(800, 0));
    expect(waveform.finish()).to.deep.equal({
      version: 1,
      sample_rate_hz: 16000,
      peaks_per_second: PEAKS_PER_SECOND,
      samples_per_peak: 800,
      peaks: [0.5, 1, 0],
    });
  });

  it('the last, shorter window still yields a peak', () => {
    const waveform = new WaveformPeaks();
    waveform.push(samples(1000, 3277));
    expect(waveform.finish().peaks).to.deep.equal([0.1, 0.1]);
  });

  it('a sample split across two chunks is read whole', () => {
    const waveform = new WaveformPeaks();
    const bytes = samples(800, -16384);
    waveform.push(bytes.subarray(0, 801));
    waveform.push(bytes.subarray(801));
    expect(waveform.finish().peaks).to.deep.equal([0.5]);
  });

  it('no samples, no peaks', () => {
    expect(new WaveformPeaks().finish().peaks).to.deep.equal([]);
  });
});
