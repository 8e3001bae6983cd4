import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { probeFile, sha256OfFile } from '../support/media.ts';
import { makeSpokenTrack, makeSpokenVideo, wordErrorRate, type SpokenTrack, type TimeSpan } from '../support/speech.ts';

const run = promisify(execFile);
const TRUTH_TOLERANCE_MS = 20;

/** What ffmpeg's silencedetect finds (the detector the analysis uses), the last silence clamped to the duration. */
async function detectedSilences(path: string, durationMs: number): Promise<TimeSpan[]> {
  const { stderr } = await run('ffmpeg', ['-hide_banner', '-nostats', '-i', path, '-af', 'silencedetect=noise=-35dB:d=0.5', '-f', 'null', '-']);
  const starts = [...stderr.matchAll(/silence_start: ([\d.]+)/g)].map(([, at]) => Number(at) * 1000);
  const ends = [...stderr.matchAll(/silence_end: ([\d.]+)/g)].map(([, at]) => Number(at) * 1000);
  return starts.map((startMs, index) => ({ startMs, endMs: Math.min(ends[index] ?? durationMs, durationMs) }));
}

function expectSpansClose(actual: readonly TimeSpan[], expected: readonly TimeSpan[]): void {
  expect(actual, JSON.stringify(actual)).to.have.length(expected.length);
  expected.forEach((span, index) => {
    expect(actual[index]!.startMs, `silence ${index} start`).to.be.closeTo(span.startMs, TRUTH_TOLERANCE_MS);
    expect(actual[index]!.endMs, `silence ${index} end`).to.be.closeTo(span.endMs, TRUTH_TOLERANCE_MS);
  });
}

describe('test speech: flite phrases and sox pauses with known times', function () {
  this.timeout(60_000);
  let dir: string;
  let track: SpokenTrack;
  const parts = [{ pauseMs: 600 }, { say: 'so today I want to talk about editing' }, { pauseMs: 1200 }, { say: 'first we cut the long pauses' }, { pauseMs: 800 }, { say: 'then we add captions' }];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-spoken-track-'));
    track = await makeSpokenTrack(dir, 'talk.wav', parts);
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('phrases and pauses tile the track in the order asked, pauses exactly as long as asked', async () => {
    const spans = [...track.phrases, ...track.pauses].sort((a, b) => a.startMs - b.startMs);
    expect(spans[0]!.startMs).to.equal(0);
    spans.slice(1).forEach((span, index) => expect(span.startMs).to.equal(spans[index]!.endMs));
    expect(spans.at(-1)!.endMs).to.equal(track.durationMs);
    expect(track.pauses.map((pause) => pause.endMs - pause.startMs)).to.deep.equal([600, 1200, 800]);
    expect(track.phrases.map((phrase) => phrase.text)).to.deep.equal(parts.flatMap((part) => ('say' in part ? [part.say] : [])));
    const probed = await probeFile(track.path);
    expect(probed.streams[0]).to.include({ codec_type: 'audio', sample_rate: '16000', channels: 1 });
    expect(Number(probed.format.duration) * 1000).to.be.closeTo(track.durationMs, 1);
  });

  it("the pauses are where ffmpeg's silencedetect finds silence, within 20 ms", async () => {
    expectSpansClose(await detectedSilences(track.path, track.durationMs), track.pauses);
  });

  it('muxed with testsrc2 into an H.264/AAC MP4, the pauses stay where they were, within 20 ms', async () => {
    const video = await makeSpokenVideo(dir, 'talk.mp4', track);
    const probed = await probeFile(video.path);
    expect(probed.streams.map((stream) => stream.codec_name).sort()).to.deep.equal(['aac', 'h264']);
    expectSpansClose(await detectedSilences(video.path, track.durationMs), track.pauses);
  });

  it('the same parts twice make two different files with the same truth', async () => {
    const again = await makeSpokenTrack(dir, 'talk-again.wav', parts);
    expect(await sha256OfFile(again.path)).to.not.equal(await sha256OfFile(track.path));
    expect({ ...again, path: '' }).to.deep.equal({ ...track, path: '' });
  });

  it('word error rate counts substitutions, drops and additions against the expected words', () => {
    expect(wordErrorRate('first we cut the long pauses', [' first', ' we', ' cut', ' the', ' long', ' pauses'])).to.equal(0);
    expect(wordErrorRate('first we cut the long pauses', [' first', ' we', ' caught', ' the', ' pauses'])).to.equal(2 / 6);
    expect(wordErrorRate('So, today!', [' so', ' today', ' um'])).to.equal(1 / 2);
  });
});
