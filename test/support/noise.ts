import { readFile, writeFile } from 'node:fs/promises';
import { readWavLayout } from '../../job-images/whisper/src/analysis/energy.ts';

/**
 * `wav` (16-bit PCM) with pink noise (a fan, an air conditioner) of `rmsDbfs` RMS added under
 * it, written to `out`: Paul Kellet's pink filter over seeded white noise, scaled to the RMS.
 */
export async function withPinkNoise(wav: string, out: string, rmsDbfs: number): Promise<string> {
  const bytes = new Uint8Array(await readFile(wav));
  const layout = readWavLayout(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset + layout.data_offset, layout.data_bytes);
  const count = layout.data_bytes / 2;
  const noise = new Float64Array(count);
  let seed = 12345;
  const b = [0, 0, 0, 0, 0, 0, 0];
  let power = 0;
  for (let index = 0; index < count; index += 1) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    const white = seed / 2 ** 31 - 1;
    b[0] = 0.99886 * b[0]! + white * 0.0555179;
    b[1] = 0.99332 * b[1]! + white * 0.0750759;
    b[2] = 0.969 * b[2]! + white * 0.153852;
    b[3] = 0.8665 * b[3]! + white * 0.3104856;
    b[4] = 0.55 * b[4]! + white * 0.5329522;
    b[5] = -0.7616 * b[5]! - white * 0.016898;
    noise[index] = b[0]! + b[1]! + b[2]! + b[3]! + b[4]! + b[5]! + b[6]! + white * 0.5362;
    b[6] = white * 0.115926;
    power += noise[index]! ** 2;
  }
  const scale = 10 ** (rmsDbfs / 20) / Math.sqrt(power / count);
  for (let index = 0; index < count; index += 1) {
    const sample = view.getInt16(2 * index, true) / 32768 + noise[index]! * scale;
    view.setInt16(2 * index, Math.round(Math.max(-1, Math.min(32767 / 32768, sample)) * 32768), true);
  }
  await writeFile(out, bytes);
  return out;
}
