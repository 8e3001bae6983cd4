// What the smart render reads from the source before planning: every picture packet's
// timestamps and key flag, and the parameter-set ids its GOPs refer to.
import { z } from 'zod';
import type { MediaProbe } from '../media/probe.ts';
import { runFfprobe, type MediaTools } from '../media/tools.ts';
import { pictureExtradataArgs, picturePacketsArgs } from './smart-args.ts';
import type { SourcePacket, SourcePicture } from './smart-plan.ts';

const packetsSchema = z.object({
  packets: z.array(z.object({ pts: z.number().int().optional(), dts: z.number().int().optional(), duration: z.number().int().optional(), flags: z.string().optional() })).default([]),
});

/** ffprobe's packet list, in decode order; packets without a timestamp cannot be placed and are refused by the caller. */
function parsePicturePackets(json: unknown): SourcePacket[] | null {
  const packets: SourcePacket[] = [];
  for (const packet of packetsSchema.parse(json).packets) {
    if (packet.pts === undefined || packet.dts === undefined) return null;
    packets.push({ pts: packet.pts, dts: packet.dts, keyframe: packet.flags?.startsWith('K') ?? false, duration: packet.duration ?? 0 });
  }
  return packets;
}

/** Bytes from ffprobe's `-show_data` hex dump: "00000000: 014d 401f …" then an ASCII column, hex 40 columns wide. */
function hexDumpBytes(dump: string): Uint8Array {
  const bytes: number[] = [];
  for (const line of dump.split('\n')) {
    if (!/^[0-9a-f]{8}: /i.test(line)) continue;
    for (const pair of line.slice(10, 50).replaceAll(' ', '').match(/[0-9a-f]{2}/gi) ?? []) bytes.push(Number.parseInt(pair, 16));
  }
  return Uint8Array.from(bytes);
}

/** Reads unsigned Exp-Golomb numbers (H.264 ue(v)) from a NAL payload with emulation-prevention bytes removed. */
function expGolombReader(payload: Uint8Array): () => number {
  let bit = 0;
  const next = (): number => {
    const byte = payload[bit >> 3] ?? 0;
    const value = (byte >> (7 - (bit & 7))) & 1;
    bit += 1;
    return value;
  };
  return () => {
    let zeros = 0;
    while (next() === 0 && zeros < 32) zeros += 1;
    let value = 1;
    for (let index = 0; index < zeros; index += 1) value = value * 2 + next();
    return value - 1;
  };
}

function withoutEmulationPrevention(nal: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let index = 0; index < nal.length; index += 1) {
    if (index >= 2 && nal[index] === 3 && nal[index - 1] === 0 && nal[index - 2] === 0) continue;
    out.push(nal[index] ?? 0);
  }
  return Uint8Array.from(out);
}

/** The SPS and PPS ids an avcC record (ISO 14496-15) carries; null when it is not one. */
function avcParameterSetIds(avcC: Uint8Array): { sps: number[]; pps: number[] } | null {
  if (avcC.length < 7 || avcC[0] !== 1) return null;
  const sps: number[] = [];
  const pps: number[] = [];
  let at = 6;
  const readSets = (count: number, skipHeader: number, into: number[]): void => {
    for (let index = 0; index < count && at + 2 <= avcC.length; index += 1) {
      const length = ((avcC[at] ?? 0) << 8) | (avcC[at + 1] ?? 0);
      const nal = withoutEmulationPrevention(avcC.subarray(at + 2, at + 2 + length));
      into.push(expGolombReader(nal.subarray(skipHeader))());
      at += 2 + length;
    }
  };
  // SPS: NAL header, profile_idc, constraint flags, level_idc, then seq_parameter_set_id.
  readSets((avcC[5] ?? 0) & 0x1f, 4, sps);
  const ppsCount = avcC[at] ?? 0;
  at += 1;
  // PPS: NAL header, then pic_parameter_set_id.
  readSets(ppsCount, 1, pps);
  return { sps, pps };
}

/** The lowest id (H.264 allows 0–31) that neither the source's SPS nor its PPS use. */
function freeParameterSetId(used: { sps: number[]; pps: number[] }): number {
  for (let id = 1; id < 32; id += 1) if (!used.sps.includes(id) && !used.pps.includes(id)) return id;
  return 0;
}

export interface SmartSource {
  picture: SourcePicture;
  /** An SPS/PPS id free in the source, for the re-encoded seams; null when the avcC could not be read. */
  seamParameterSetId: number | null;
}

/** Lists the packets (no decoding) and reads the avcC of the source's picture. */
export async function readSmartSource(tools: MediaTools, path: string, probe: MediaProbe, signal: AbortSignal): Promise<SmartSource | null> {
  const video = probe.video;
  if (!video?.timeBase) return null;
  const [packetsJson, extradataJson] = await Promise.all([
    runFfprobe(tools, picturePacketsArgs(path, video.index), signal),
    runFfprobe(tools, pictureExtradataArgs(path, video.index), signal),
  ]);
  const packets = parsePicturePackets(packetsJson);
  if (!packets) return null;
  const timeBase = video.timeBase;
  const startTicks = Math.round((probe.startSeconds * timeBase.den) / timeBase.num);
  const dump = z.object({ streams: z.array(z.object({ extradata: z.string().optional() })).default([]) }).parse(extradataJson).streams[0]?.extradata;
  const ids = dump ? avcParameterSetIds(hexDumpBytes(dump)) : null;
  return { picture: { timeBase, startTicks, packets }, seamParameterSetId: ids ? freeParameterSetId(ids) : null };
}
