import { expect } from 'chai';
import { MAX_KEYFRAMES_LISTED } from '../../crds/contract/programs/artifact.ts';
import { KeyframeList } from '../../job-images/ffmpeg/src/artifact/keyframe-list.ts';

/** framecrc's header and one line per packet, as ffmpeg 5.1 writes them. */
const HEADER = ['#extradata 0:       39, 0xd8eb0b04', '#software: Lavf59.27.100', '#tb 0: 1/15360', '#media_type 0: video', '#codec_id 0: h264', '#dimensions 0: 160x120', '#sar 0: 1/1'];
const packet = (dts: number | string, pts: number | string, flags?: number, sideData = false) =>
  `0, ${String(dts).padStart(10)}, ${String(pts).padStart(10)},      512,     4822, 0x8ee76be0${flags === undefined ? '' : `, F=0x${flags.toString(16).toUpperCase()}`}${sideData ? ', S=1,        1' : ''}`;

function listOf(lines: string[]): number[] | null {
  const list = new KeyframeList();
  for (const line of lines) list.push(line);
  return list.finish();
}

describe('the keyframe list of the artifact pass (framecrc packet lines → keyframes_ms)', () => {
  it('key packets are the lines without F= (flags exactly KEY) or with the KEY bit in F; their pts in ms of the stream time base', () => {
    // 30 fps at 1/15360: 512 ticks a frame; keyframes at frames 0 and 30 (pts 15360 = 1 s); B-frames put dts before pts
    const lines = [...HEADER, packet(-1024, 0), packet(-512, 1536, 0), packet(0, 512, 0), packet(14848, 15360, undefined, true), packet(15360, 16896, 0), packet(30208, 30720, 0x5)];
    expect(listOf(lines)).to.deep.equal([0, 1000, 2000]);
  });

  it('a packet without a pts is placed by its dts; times before the container start are left out', () => {
    const noPts = '-9223372036854775808';
    expect(listOf([...HEADER, packet(-1536, -1536), packet(-1024, 0, 0), packet(7680, noPts), packet(8192, 8704, 0)])).to.deep.equal([500]);
  });

  it('null when no picture packet was listed, and when every frame is a keyframe (intra-only: any cut already falls on one)', () => {
    expect(listOf(HEADER)).to.equal(null);
    expect(listOf([...HEADER, packet(0, 0), packet(512, 512), packet(1024, 1024)])).to.equal(null);
  });

  it(`at most ${MAX_KEYFRAMES_LISTED}, the earliest: a longer list is cut there`, () => {
    const lines = [...HEADER];
    for (let index = 0; index < MAX_KEYFRAMES_LISTED + 50; index++) lines.push(packet(index * 1024, index * 1024), packet(index * 1024 + 512, index * 1024 + 512, 0));
    const listed = listOf(lines)!;
    expect(listed).to.have.lengthOf(MAX_KEYFRAMES_LISTED);
    expect(listed[0]).to.equal(0);
    expect(listed.at(-1)).to.equal(Math.round(((MAX_KEYFRAMES_LISTED - 1) * 1024 * 1000) / 15360));
  });
});
