import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { analyzeTalk, emptyEndToEndScore, scoreAnalysis } from '../../../hack/fixtures/recorded-analysis.ts';
import { assembleTalks, loadClips, type Talk } from '../../../hack/fixtures/recorded-speech.ts';
import { emptyScore, envelopeOf, noiseFloor, pauseCuts, recognizedClips, recordedSpeech, render, scoreCuts, type Condition } from '../../../hack/fixtures/recording-conditions.ts';
import { startJobBucket } from '../job-process.ts';

/** A slice of bench/analysis-robustness: about a minute and a half of recorded speech from eight speakers (five English). */
const CONDITIONS: Condition[] = [
  { name: 'clean', peakDb: -3, noise: null, path: null },
  { name: 'pink floor −38 dBFS', peakDb: -3, noise: { kind: 'pink', rmsDb: -38 }, path: null },
  { name: 'quiet voice (−30 dBFS peak)', peakDb: -30, noise: null, path: null },
  { name: 'AAC 96 kbit/s over a −50 dBFS room bed', peakDb: -3, noise: { kind: 'room', rmsDb: -50 }, path: 'aac96' },
  { name: 'babble of six voices at −45 dBFS', peakDb: -3, noise: { kind: 'babble', rmsDb: -45 }, path: null },
];

describe('cuts that hold on recorded human speech (a slice of bench/analysis-robustness)', function () {
  this.timeout(300_000);
  let talks: Talk[];
  let voices: Float32Array[];
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cutroom-recorded-'));
    const clips = await loadClips({ allisonMs: Infinity, voiceMs: Infinity, prompts: 3 });
    voices = clips.filter((clip) => clip.language !== 'en').map((clip) => clip.samples);
    talks = assembleTalks(clips, 60_000);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the slice is recorded speech of several speakers, about a minute and a half, with natural and long pauses', () => {
    const speechBy = new Map<string, number>();
    for (const talk of talks) for (const span of talk.speech) speechBy.set(span.speaker, (speechBy.get(span.speaker) ?? 0) + span.end_ms - span.start_ms);
    const speechMs = [...speechBy.values()].reduce((sum, ms) => sum + ms, 0);
    expect(speechMs).to.be.within(45_000, 150_000);
    // at least three speakers with 5 % of the speech or more, none with more than 60 %
    expect([...speechBy.values()].filter((ms) => ms >= 0.05 * speechMs).length, JSON.stringify([...speechBy])).to.be.at.least(3);
    expect(Math.max(...speechBy.values()) / speechMs).to.be.at.most(0.6);
    const kinds = new Set(talks.flatMap((talk) => talk.pauses.map((pause) => pause.kind)));
    expect([...kinds]).to.include.members(['natural', 'long']);
  });

  for (const condition of CONDITIONS) {
    it(`${condition.name}: no cut removes more than 40 ms of speech, at least 0.8 of the long pauses lose half their length, and natural pauses stay`, async () => {
      const score = emptyScore();
      for (const [index, talk] of talks.entries()) {
        const envelope = envelopeOf(await render(talk, condition, 1000 + index, dir, voices));
        scoreCuts(talk, pauseCuts(talk, envelope, recognizedClips(talk, 77 + index), 50).cuts, score);
      }
      expect(score.speechCuts, 'cuts into speech').to.equal(0);
      expect(score.longHalved / score.long, `${score.longHalved} of ${score.long} long pauses halved`).to.be.at.least(0.8);
      expect(score.naturalKept / score.natural, `${score.naturalKept} of ${score.natural} natural pauses kept`).to.be.at.least(0.95);
    });
  }

  it('audible speech is the speech as the recording holds it over its floor: a clip tail under 300 Hz stands over a −30 dBFS floor on a full-band recording, not through the telephone band', async () => {
    // a clip: 800 ms of a 1 kHz tone, then 300 ms of a 50 Hz thump as loud, both inside its span
    const tone = (hz: number, ms: number) => Float32Array.from({ length: ms * 16 }, (_, at) => 0.5 * Math.sin((2 * Math.PI * hz * at) / 16_000));
    const samples = new Float32Array(2_000 * 16);
    samples.set(tone(1_000, 800), 500 * 16);
    samples.set(tone(50, 300), 1_300 * 16);
    const talk: Talk = { english: true, text: '', samples, durationMs: 2_000, speech: [{ start_ms: 500, end_ms: 1_600, speaker: 'tones' }], pauses: [] };
    const analysis = { seconds: 0, recognizerSeconds: 0, words: [], weak: false, edits: [{ type: 'silence' as const, start_ms: 1_320, end_ms: 1_900, active: true, reason: 'Pause of 0.6 s' }] };
    const scored = async (condition: Condition) => {
      const score = emptyEndToEndScore();
      const recorded = await recordedSpeech(talk, condition, dir);
      scoreAnalysis(talk, analysis, score, recorded, noiseFloor(condition, recorded.length, 5));
      return [score.speechCuts, score.audibleSpeechCuts];
    };
    const floor = { kind: 'pink' as const, rmsDb: -30 };
    // the cut takes 280 ms of the clip's span every time; only the full band still holds its sound over the floor
    expect(await scored({ name: 'full band', peakDb: -3, noise: floor, path: null })).to.deep.equal([1, 1]);
    expect(await scored({ name: 'telephone', peakDb: -3, noise: floor, path: 'telephone' })).to.deep.equal([1, 0]);
    // with no floor at all, what is left of the thump (31 dB down, within 45 dB of the tone) is the recording's sound
    expect(await scored({ name: 'telephone, digital silence', peakDb: -3, noise: null, path: 'telephone' })).to.deep.equal([1, 1]);
  });

  it('end to end with a quiet voice (−30 dBFS peak): the analyze program over the offline recognizer cuts no audible speech, halves the long pauses, keeps the natural ones, hears most words', async () => {
    const talk = talks.find((each) => each.english)!;
    const bucket = await startJobBucket();
    try {
      const path = join(dir, 'end-to-end.wav');
      await writeFile(path, await render(talk, CONDITIONS[2]!, 1000, dir, voices));
      await bucket.putFile('talk.wav', path, 'audio/wav');
      const score = emptyEndToEndScore();
      scoreAnalysis(talk, await analyzeTalk(bucket, process.env.WHISPER_BASE_URL!, 'talk.wav', talk.durationMs), score, await recordedSpeech(talk, CONDITIONS[2]!, dir));
      // no floor: every frame of a clip within 45 dB of the talk's level is its audible sound
      expect(score.audibleSpeechCuts, `cuts into audible speech (${score.speechCuts} into a clip's span)`).to.equal(0);
      expect(score.longHalved / score.long, `${score.longHalved} of ${score.long} long pauses halved`).to.be.at.least(0.8);
      expect(score.naturalKept / score.natural, `${score.naturalKept} of ${score.natural} natural pauses kept`).to.be.at.least(0.95);
      expect(score.wordErrors / score.words, 'word error rate').to.be.at.most(0.6);
    } finally {
      await bucket.close();
    }
  });
});
