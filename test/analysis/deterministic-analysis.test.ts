import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { analyzeTalk } from '../../hack/fixtures/recorded-analysis.ts';
import { startJobBucket, type JobBucket } from '../../hack/fixtures/job-program.ts';
import { assembleTalks, loadClips } from '../../hack/fixtures/recorded-speech.ts';
import { render, type Condition } from '../../hack/fixtures/recording-conditions.ts';

/** A process that keeps one core busy until it is stopped: the machine under load, as a busy cluster node is. */
function busyCore(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) Math.sqrt(Math.random())'], { stdio: 'ignore' });
}

/**
 * Analysis is a function of its input and settings (issue 38 item 6): the analyze program
 * twice on the same recording, against the same recognizer (Whisper base, which samples a
 * window again at a higher temperature where its first decoding fails its filters), each run
 * with every core kept busy by other processes.
 */
describe('the same media and settings give byte-identical edits (issue 38)', function () {
  this.timeout(600_000);
  let dir: string;
  let bucket: JobBucket;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-determinism-'));
    bucket = await startJobBucket('determinism-test');
  });
  after(async () => {
    await bucket.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a recorded talk under a babble of other voices at −38 dBFS, analyzed twice under CPU load: the same edits and the same transcript, byte for byte', async () => {
    const clips = await loadClips({ allisonMs: 3 * 60_000, voiceMs: 60_000 });
    const voices = clips.filter((clip) => clip.language !== 'en').map((clip) => clip.samples);
    const talk = assembleTalks(clips, 60_000).find((each) => each.english)!;
    const condition: Condition = { name: 'babble-38', peakDb: -3, noise: { kind: 'babble', rmsDb: -38 }, path: null };
    const path = join(dir, 'talk.wav');
    await writeFile(path, await render(talk, condition, 1000, dir, voices));
    await bucket.putFile('talk.wav', path, 'audio/wav');
    const runs: string[] = [];
    for (let run = 0; run < 2; run += 1) {
      const load = Array.from({ length: availableParallelism() }, busyCore);
      try {
        const analysis = await analyzeTalk(bucket, process.env.WHISPER_BASE_URL!, 'talk.wav', talk.durationMs, { pacing_level: 50, false_start_sensitivity: 100, language: 'en', analysis_mode: 'ai_edit' });
        runs.push(JSON.stringify({ edits: analysis.edits, words: analysis.words }));
      } finally {
        for (const child of load) child.kill('SIGKILL');
      }
    }
    expect(JSON.parse(runs[0]!).edits.length, 'the talk gives edits to compare').to.be.greaterThan(3);
    expect(runs[1]).to.equal(runs[0]);
  });
});
