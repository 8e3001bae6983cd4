import { JobFailure } from '../../../lib/job-failure.ts';
import { CEPSTRA_FRAME_MS, CepstraBuilder, type Cepstra } from './cepstra.ts';

/** The envelope's resolution: cut boundaries snap to these frames. */
const ENVELOPE_FRAME_MS = 10;

/** Loudness over time: the RMS of each `frame_ms` frame, 0..1 of full scale; the last frame may be shorter. */
export interface EnergyEnvelope {
  frame_ms: number;
  rms: Float32Array;
  /** Frames at or under this RMS are all the recording's floor, equally quiet for snapping (detectSpeech's `off_db`). */
  floor_rms?: number;
  /** A frame over this RMS can start speech (detectSpeech's `on_db`). */
  onset_rms?: number;
  /** Frames at or under this RMS are the room's noise: its floor + 6 dB (detectSpeech's `floor_db`). */
  noise_rms?: number;
  /** What the frames sound like (false starts are matched by it); absent where only loudness was measured. */
  cepstra?: Cepstra;
  /** Each frame's level above 1 kHz (CepstraBuilder.highBand: a word's hiss); absent where only loudness was measured. */
  high_rms?: Float32Array;
}

/** Where the samples of a 16-bit PCM WAV are, from its header. */
export interface WavLayout {
  sample_rate_hz: number;
  channels: number;
  /** Byte offset of the first sample. */
  data_offset: number;
  /** Bytes of samples (whole frames), clamped to what the buffer holds when the header overstates it. */
  data_bytes: number;
}

function corruptAudio(detail: string): JobFailure {
  return new JobFailure(`The audio could not be read: ${detail}`, { code: 'analysis.corrupt_audio' });
}

const WAVE_FORMAT_PCM = 1;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

/**
 * Reads a RIFF/WAVE header (the bytes up to and including the `data` chunk header;
 * 4 KiB is always enough for what ffmpeg and sox write): 16-bit integer PCM only.
 * A `data` size of 0 or 0xFFFFFFFF (written by a streaming encoder) means "to the end".
 */
export function readWavLayout(bytes: Uint8Array, totalBytes = bytes.length): WavLayout {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (offset: number): string => String.fromCharCode(...bytes.subarray(offset, offset + 4));
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw corruptAudio('not a WAV file');
  let offset = 12;
  let format: { channels: number; sampleRate: number } | null = null;
  while (offset + 8 <= bytes.length) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (body + 16 > bytes.length) throw corruptAudio('truncated format chunk');
      const formatTag = view.getUint16(body, true);
      const channels = view.getUint16(body + 2, true);
      const sampleRate = view.getUint32(body + 4, true);
      const bitsPerSample = view.getUint16(body + 14, true);
      const subFormat = formatTag === WAVE_FORMAT_EXTENSIBLE && body + 26 <= bytes.length ? view.getUint16(body + 24, true) : formatTag;
      if (subFormat !== WAVE_FORMAT_PCM || bitsPerSample !== 16) throw corruptAudio(`unsupported sample format (tag ${formatTag}, ${bitsPerSample} bits): 16-bit PCM expected`);
      if (channels < 1 || sampleRate < 1) throw corruptAudio('no channels or no sample rate');
      format = { channels, sampleRate };
    } else if (id === 'data') {
      if (!format) throw corruptAudio('samples before the format chunk');
      const available = Math.max(0, totalBytes - body);
      const declared = size === 0 || size === 0xffffffff ? available : Math.min(size, available);
      const frameBytes = 2 * format.channels;
      return { sample_rate_hz: format.sampleRate, channels: format.channels, data_offset: body, data_bytes: declared - (declared % frameBytes) };
    }
    offset = body + size + (size % 2);
  }
  throw corruptAudio('no data chunk');
}

/**
 * Folds 16-bit little-endian PCM, chunk by chunk (channels averaged), into an
 * energy envelope and its cepstra, so that hours of audio never sit in memory at once.
 */
export class EnergyEnvelopeBuilder {
  readonly frameMs: number;
  private readonly channels: number;
  private readonly samplesPerFrame: number;
  private readonly frames: number[] = [];
  private sumOfSquares = 0;
  private frameSamples = 0;
  private carry: Uint8Array | null = null;
  private readonly cepstra: CepstraBuilder | null;

  constructor(sampleRateHz: number, channels = 1, frameMs = ENVELOPE_FRAME_MS) {
    this.frameMs = frameMs;
    // the cepstra's frames line up with the envelope's at its own resolution only
    this.cepstra = frameMs === CEPSTRA_FRAME_MS ? new CepstraBuilder(sampleRateHz) : null;
    this.channels = channels;
    this.samplesPerFrame = Math.max(1, Math.round((sampleRateHz * frameMs) / 1000));
  }

  push(chunk: Uint8Array): void {
    let bytes = chunk;
    if (this.carry) {
      bytes = new Uint8Array(this.carry.length + chunk.length);
      bytes.set(this.carry);
      bytes.set(chunk, this.carry.length);
      this.carry = null;
    }
    const frameBytes = 2 * this.channels;
    const whole = bytes.length - (bytes.length % frameBytes);
    if (whole < bytes.length) this.carry = bytes.slice(whole);
    const view = new DataView(bytes.buffer, bytes.byteOffset, whole);
    const mono = new Float32Array(whole / frameBytes);
    for (let offset = 0; offset < whole; offset += frameBytes) {
      let sample = 0;
      for (let channel = 0; channel < this.channels; channel += 1) sample += view.getInt16(offset + 2 * channel, true);
      const value = sample / this.channels / 32768;
      mono[offset / frameBytes] = value;
      this.sumOfSquares += value * value;
      this.frameSamples += 1;
      if (this.frameSamples === this.samplesPerFrame) this.closeFrame();
    }
    this.cepstra?.push(mono);
  }

  finish(): EnergyEnvelope {
    if (this.frameSamples > 0) this.closeFrame();
    const envelope: EnergyEnvelope = { frame_ms: this.frameMs, rms: Float32Array.from(this.frames) };
    if (this.cepstra) {
      envelope.cepstra = this.cepstra.finish();
      envelope.high_rms = this.cepstra.highBand();
    }
    return envelope;
  }

  private closeFrame(): void {
    this.frames.push(Math.sqrt(this.sumOfSquares / this.frameSamples));
    this.sumOfSquares = 0;
    this.frameSamples = 0;
  }
}

/** The envelope of a whole WAV file held in memory. */
export function wavEnvelope(bytes: Uint8Array, frameMs = ENVELOPE_FRAME_MS): EnergyEnvelope {
  const layout = readWavLayout(bytes);
  const builder = new EnergyEnvelopeBuilder(layout.sample_rate_hz, layout.channels, frameMs);
  builder.push(bytes.subarray(layout.data_offset, layout.data_offset + layout.data_bytes));
  return builder.finish();
}

/** Decibels relative to full scale; silence is -Infinity. */
export function toDbfs(rms: number): number {
  return rms > 0 ? 20 * Math.log10(rms) : -Infinity;
}
