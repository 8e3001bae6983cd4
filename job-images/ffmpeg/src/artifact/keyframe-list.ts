// A source's keyframes, read from the packet list the artifact pass writes while it walks every
// packet of the picture (ffmpeg's framecrc muxer on the stream copy): no decode, no second read
// of the file. The editing core slides shortened pauses' cuts onto them (issue 42 item 1).
import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { MAX_KEYFRAMES_LISTED } from '../../../../crds/contract/programs/artifact.ts';

/** libavcodec's AV_PKT_FLAG_KEY: framecrc prints `F=0x..` only for packets whose flags are not exactly this. */
const KEY_FLAG = 1;
/** AV_NOPTS_VALUE, as framecrc prints a missing timestamp. */
const NO_TIMESTAMP = '-9223372036854775808';

/**
 * Folds framecrc lines (`#tb 0: 1/15360`, then `stream, dts, pts, duration, size, crc[, F=0x..][, S=..]`
 * per packet, timestamps already counted from the container's start) into the key packets'
 * presentation times in ms.
 */
export class KeyframeList {
  #timeBase: { num: number; den: number } | null = null;
  readonly #times: number[] = [];
  #packets = 0;
  #keys = 0;

  push(line: string): void {
    if (line.startsWith('#')) {
      const timeBase = /^#tb 0: (\d+)\/(\d+)/.exec(line);
      if (timeBase) this.#timeBase = { num: Number(timeBase[1]), den: Number(timeBase[2]) };
      return;
    }
    const fields = line.split(',').map((field) => field.trim());
    if (!this.#timeBase || fields.length < 6 || fields[0] !== '0') return;
    this.#packets++;
    const flagField = fields.slice(6).find((field) => field.startsWith('F='));
    const flags = flagField ? Number.parseInt(flagField.slice(2), 16) : KEY_FLAG;
    if ((flags & KEY_FLAG) === 0) return;
    this.#keys++;
    // packets come in decoding order, keyframes' presentation times with them: the first ones are the earliest
    if (this.#times.length > MAX_KEYFRAMES_LISTED) return;
    const timestamp = fields[2] !== NO_TIMESTAMP ? fields[2] : fields[1];
    if (timestamp === undefined || timestamp === NO_TIMESTAMP) return;
    const ms = Math.round((Number(timestamp) * this.#timeBase.num * 1000) / this.#timeBase.den);
    if (Number.isFinite(ms) && ms >= 0) this.#times.push(ms);
  }

  /**
   * Ascending and unique, the first MAX_KEYFRAMES_LISTED. Null when no picture packet was
   * listed, and when every frame is a keyframe (intra-only: any cut already falls on one).
   */
  finish(): number[] | null {
    if (this.#packets === 0 || (this.#packets > 1 && this.#keys === this.#packets)) return null;
    return [...new Set(this.#times)].sort((a, b) => a - b).slice(0, MAX_KEYFRAMES_LISTED);
  }
}

/** The keyframe list of the packet file the artifact pass wrote; null where it wrote none (no picture). */
export async function readKeyframes(packetsPath: string): Promise<number[] | null> {
  if (!(await access(packetsPath).then(() => true, () => false))) return null;
  const list = new KeyframeList();
  const lines = createInterface({ input: createReadStream(packetsPath, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) list.push(line);
  return list.finish();
}
