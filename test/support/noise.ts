import { readFile, writeFile } from 'node:fs/promises';
import { noise } from '../../hack/fixtures/recording-conditions.ts';
import { readWavLayout } from '../../job-images/whisper/src/analysis/energy.ts';

/** `wav` (16-bit PCM) with pink noise (a fan, an air conditioner) of `rmsDbfs` RMS added under it, written to `out`. */
export async function withPinkNoise(wav: string, out: string, rmsDbfs: number): Promise<string> {
  const bytes = new Uint8Array(await readFile(wav));
  const layout = readWavLayout(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset + layout.data_offset, layout.data_bytes);
  const count = layout.data_bytes / 2;
  const floor = noise('pink', count, rmsDbfs, 12345);
  for (let index = 0; index < count; index += 1) {
    const sample = view.getInt16(2 * index, true) / 32768 + floor[index]!;
    view.setInt16(2 * index, Math.round(Math.max(-1, Math.min(32767 / 32768, sample)) * 32768), true);
  }
  await writeFile(out, bytes);
  return out;
}
