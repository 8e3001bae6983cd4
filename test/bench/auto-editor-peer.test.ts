import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { autoEditorCuts, cutsFromChunks, type PeerCut, type PeerResult } from '../../bench/analysis-robustness/auto-editor/auto-editor.ts';
import { makeSpokenTrack, makeSpokenVideo, type SpokenTrack, type TimeSpan } from '../support/speech.ts';

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** auto-editor's default margin: the loud sections grow by 0.2 s at each end before it cuts. */
const MARGIN_MS = 200;

const overlapMs = (a: TimeSpan, b: TimeSpan): number => Math.max(0, Math.min(a.endMs, b.endMs) - Math.max(a.startMs, b.startMs));
const removedFrom = (span: TimeSpan, cuts: readonly PeerCut[]): number => cuts.reduce((sum, cut) => sum + overlapMs(span, cut), 0);

/**
 * What the module claims, on speech of known timing: the long pause mostly goes (all of it
 * but the margins), the short one stays (shorter than the two margins), no cut reaches into
 * a phrase, and the cuts and the kept time add up to the timeline, counted in frames of
 * `frameMs`. `slackMs` allows for where the encoding moves the sound (AAC's padding).
 */
function expectDefaultCuts(result: PeerResult, track: SpokenTrack, frameMs: number, slackMs: number): void {
  const [long, short] = track.pauses;
  const said = JSON.stringify(result.cuts);
  expect(removedFrom(long!, result.cuts), `removed from the 2.5 s pause: ${said}`).to.be.at.least(0.8 * (long!.endMs - long!.startMs));
  expect(removedFrom(long!, result.cuts), `removed from the 2.5 s pause: ${said}`).to.be.at.least(long!.endMs - long!.startMs - 2 * MARGIN_MS - 2 * frameMs - slackMs);
  expect(removedFrom(short!, result.cuts), `removed from the 0.3 s pause: ${said}`).to.equal(0);
  for (const phrase of track.phrases) {
    // the margin keeps 0.2 s of silence beside speech: a cut stops well before a phrase, the middle of one above all
    const reach = { startMs: phrase.startMs - MARGIN_MS + frameMs + slackMs, endMs: phrase.endMs + MARGIN_MS - frameMs - slackMs };
    expect(removedFrom(reach, result.cuts), `cut into "${phrase.text}" (${phrase.startMs}–${phrase.endMs} ms): ${said}`).to.equal(0);
  }
  const cutMs = result.cuts.reduce((sum, cut) => sum + cut.endMs - cut.startMs, 0);
  expect(result.keptMs + cutMs).to.be.closeTo(result.durationMs, 1e-6);
  expect(result.durationMs).to.be.closeTo(track.durationMs, frameMs + slackMs);
  for (const cut of result.cuts) {
    expect(cut.startMs / frameMs, 'cuts fall on frames').to.be.closeTo(Math.round(cut.startMs / frameMs), 1e-9);
    expect(cut.endMs / frameMs, 'cuts fall on frames').to.be.closeTo(Math.round(cut.endMs / frameMs), 1e-9);
  }
  expect(result.elapsedMs).to.be.greaterThan(0);
}

describe("bench peer: auto-editor's cuts at its defaults, in ms of the input", function () {
  // the before hook may make the virtual environment from nothing (a minute, more on a busy machine)
  this.timeout(600_000);
  let dir: string;
  let track: SpokenTrack;
  const parts = [{ say: 'so today I want to talk about editing' }, { pauseMs: 2500 }, { say: 'first we cut the long pauses' }, { pauseMs: 300 }, { say: 'then we add captions' }];

  before(async () => {
    await run('bash', [join(ROOT, 'bench/analysis-robustness/auto-editor/setup.sh')], { cwd: ROOT });
    dir = await mkdtemp(join(tmpdir(), 'cutroom-auto-editor-peer-'));
    track = await makeSpokenTrack(dir, 'talk.wav', parts);
  });

  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a 16 kHz WAV, counted at 30 frames a second: the 2.5 s pause goes but for the margins, the 0.3 s one stays, no phrase is cut', async () => {
    const result = await autoEditorCuts(track.path, { workDir: dir });
    expect(result.timebase).to.equal('30');
    expect(result.cuts, JSON.stringify(result.cuts)).to.have.length(1);
    expectDefaultCuts(result, track, 1000 / 30, 0);
  });

  it('an H.264/AAC MP4 at 25 fps, counted at its frame rate: the same cuts', async () => {
    const video = await makeSpokenVideo(dir, 'talk.mp4', track);
    const result = await autoEditorCuts(video.path, { workDir: dir });
    expect(result.timebase).to.equal('25');
    expect(result.cuts, JSON.stringify(result.cuts)).to.have.length(1);
    expectDefaultCuts(result, video, 40, 50);
  });

  it('v1 chunks become removed spans: frames by the timebase, cut-speed chunks merged, the rest kept', () => {
    const converted = cutsFromChunks([[0, 30, 1], [30, 60, 99_999], [60, 61, 99_999], [61, 90, 1], [90, 120, 99_999]], '30000/1001');
    const frameMs = 1001 / 30;
    expect(converted.cuts).to.have.length(2);
    expect(converted.cuts[0]!.startMs).to.be.closeTo(30 * frameMs, 1e-9);
    expect(converted.cuts[0]!.endMs).to.be.closeTo(61 * frameMs, 1e-9);
    expect(converted.cuts[1]!.startMs).to.be.closeTo(90 * frameMs, 1e-9);
    expect(converted.cuts[1]!.endMs).to.be.closeTo(120 * frameMs, 1e-9);
    expect(converted.keptMs).to.be.closeTo(59 * frameMs, 1e-9);
    expect(converted.durationMs).to.be.closeTo(4004, 1e-9);
  });

  it('chunks that do not tile the timeline, or an unreadable timebase, are refused rather than guessed at', () => {
    expect(() => cutsFromChunks([[0, 30, 1], [31, 60, 99_999]], '30')).to.throw(/do not tile/);
    expect(() => cutsFromChunks([[5, 30, 1]], '30')).to.throw(/do not tile/);
    expect(() => cutsFromChunks([[0, 30, 1]], '0')).to.throw(/not a timebase/);
  });

  it('a missing virtual environment says how to make one', async () => {
    let error: unknown;
    try {
      await autoEditorCuts(track.path, { python: join(dir, 'no-venv', 'bin', 'python') });
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(Error).with.property('message').that.matches(/bench\/analysis-robustness\/auto-editor\/setup\.sh/);
  });
});
