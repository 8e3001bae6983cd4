import { expect } from 'chai';
import { allisonPrompt, SAMPLE_RATE, type Clip } from '../../../hack/fixtures/recorded-speech.ts';
import { CepstraBuilder, SoundComparer, type Cepstra } from '../../../job-images/whisper/src/analysis/cepstra.ts';
import { EnergyEnvelopeBuilder, type EnergyEnvelope } from '../../../job-images/whisper/src/analysis/energy.ts';
import { findFalseStartCuts, findFalseTakes, falseStartThreshold, soundBars, soundsAlike } from '../../../job-images/whisper/src/analysis/false-starts.ts';
import type { Cut, Span } from '../../../job-images/whisper/src/analysis/spans.ts';
import { planStretch } from '../../../job-images/whisper/src/analysis/stretch.ts';
import type { SpokenWord } from '../../../job-images/whisper/src/analysis/words.ts';
import { SeededRandom } from '../../../hack/fixtures/seeded-random.ts';
import { spoken } from '../../analysis/transcripts.ts';

const ms = (samples: number): number => (samples / SAMPLE_RATE) * 1000;

/** Pieces of sound one after another, with where each sits (ms). */
function joined(pieces: readonly Float32Array[]): { samples: Float32Array; spans: Span[] } {
  const samples = new Float32Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
  const spans: Span[] = [];
  let at = 0;
  for (const piece of pieces) {
    samples.set(piece, at);
    spans.push({ start_ms: ms(at), end_ms: ms(at + piece.length) });
    at += piece.length;
  }
  return { samples, spans };
}

const pause = (seconds: number): Float32Array => new Float32Array(Math.round(seconds * SAMPLE_RATE));
/** The clip's first `share` of samples: a take broken off. */
const opening = (clip: Clip, share: number): Float32Array => clip.samples.slice(0, Math.round(share * clip.samples.length));

function cepstraOf(samples: Float32Array, chunk = samples.length): Cepstra {
  const builder = new CepstraBuilder(SAMPLE_RATE);
  for (let at = 0; at < samples.length; at += chunk) builder.push(samples.subarray(at, at + chunk));
  return builder.finish();
}

/** Pieces joined (joined) over a faint hiss. */
function overHiss(pieces: readonly Float32Array[]): { samples: Float32Array; spans: Span[] } {
  const heard = joined(pieces);
  const random = new SeededRandom(7);
  for (let index = 0; index < heard.samples.length; index += 1) heard.samples[index]! += (random.next() - 0.5) * 0.002;
  return heard;
}

/** A take, a 0.4 s pause and a restart, over a faint hiss: how the take's sound compares with the restart's opening. */
function takeThenRestart(take: Float32Array, restart: Float32Array): { samples: Float32Array; comparer: SoundComparer; take: Span; restartMs: number } {
  const { samples, spans } = overHiss([pause(0.5), take, pause(0.4), restart, pause(0.5)]);
  return { samples, comparer: new SoundComparer(cepstraOf(samples)), take: spans[1]!, restartMs: spans[3]!.start_ms };
}

/** A sentence, a 0.5 s pause, a take, a 0.4 s pause and a restart, over a faint hiss: where each sits (the pauses too), and the comparer. */
function sentenceTakeRestart(sentence: Float32Array, take: Float32Array, restart: Float32Array): { spans: [Span, Span, Span, Span, Span]; comparer: SoundComparer } {
  const { samples, spans } = overHiss([pause(0.3), sentence, pause(0.5), take, pause(0.4), restart, pause(0.5)]);
  const [, ...heard] = spans;
  return { spans: heard.slice(0, 5) as [Span, Span, Span, Span, Span], comparer: new SoundComparer(cepstraOf(samples)) };
}

/** The envelope (and cepstra) the analyze program would measure of these samples. */
function envelopeOf(samples: Float32Array): EnergyEnvelope {
  const pcm = Buffer.alloc(samples.length * 2);
  samples.forEach((value, index) => pcm.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(value * 32767))), 2 * index));
  const builder = new EnergyEnvelopeBuilder(SAMPLE_RATE);
  builder.push(pcm);
  return builder.finish();
}

/** Words a recognizer might give: `texts` spread evenly over `span`. */
function spread(texts: readonly string[], span: Span): SpokenWord[] {
  const step = (span.end_ms - span.start_ms) / texts.length;
  return texts.map((text, index) => ({ text, match: text, start_ms: span.start_ms + index * step, end_ms: span.start_ms + (index + 1) * step, probability: 0.8, punctuated: false, ends_sentence: false }));
}

const RESTART_WORDS = ['the', 'conference', 'will', 'begin', 'when', 'the', 'leader', 'arrives'];

const DEFAULT_BARS = soundBars(50)!;

describe('false starts matched by their sound (cepstra.ts, false-starts.ts)', function () {
  this.timeout(60_000);
  let prompts: Record<'leaderA' | 'leaderB' | 'password' | 'conferenceNumber' | 'recording' | 'pin', Clip>;

  before(async () => {
    const [leaderA, leaderB, password, conferenceNumber, recording, pin] = await Promise.all(
      ['conf-waitforleader', 'confbridge-begin-leader', 'agent-pass', 'conf-getconfno', 'conf-now-recording', 'confbridge-pin'].map((name) => allisonPrompt(name)),
    );
    prompts = { leaderA: leaderA!, leaderB: leaderB!, password: password!, conferenceNumber: conferenceNumber!, recording: recording!, pin: pin! };
  });

  it('cepstra: one frame per envelope frame, the same however the samples arrive, and loudness left out', () => {
    const random = new SeededRandom(3);
    // a vowel-like sound: a 140 Hz buzz through two resonances, and a hiss
    const samples = Float32Array.from({ length: 16_037 }, (_, index) => 0.3 * Math.sin((2 * Math.PI * 700 * index) / SAMPLE_RATE) * (0.6 + 0.4 * Math.sin((2 * Math.PI * 140 * index) / SAMPLE_RATE)) + 0.05 * Math.sin((2 * Math.PI * 1200 * index) / SAMPLE_RATE) + 0.01 * (random.next() - 0.5));
    const whole = cepstraOf(samples);
    const envelope = new EnergyEnvelopeBuilder(SAMPLE_RATE).finish();
    expect(envelope.cepstra?.values.length).to.equal(0);
    const heard = envelopeOf(samples);
    expect(heard.cepstra!.values.length / heard.cepstra!.dims).to.equal(heard.rms.length);
    expect(whole.values.length / whole.dims).to.equal(Math.ceil(samples.length / 160));
    const inPieces = cepstraOf(samples, 333);
    expect(Array.from(inPieces.values)).to.deep.equal(Array.from(whole.values));
    const quieter = cepstraOf(samples.map((value) => value * 0.05));
    const largest = whole.values.reduce((max, value, index) => Math.max(max, Math.abs(value - quieter.values[index]!)), 0);
    expect(largest).to.be.below(1e-3);
  });

  it('two renditions of the same words by one voice sound alike; a different sentence, or one that only opens alike, does not', () => {
    const { leaderA, leaderB, password, conferenceNumber, recording, pin } = prompts;
    const alike = (take: Float32Array, restart: Clip): boolean => {
      const heard = takeThenRestart(take, restart.samples);
      return soundsAlike({ comparer: heard.comparer, bars: DEFAULT_BARS }, heard.take, heard.restartMs);
    };
    // "the conference will begin" (one recording), then "the conference will begin when the leader arrives" (another)
    expect(alike(opening(leaderA, 0.5), leaderB)).to.equal(true);
    // "please enter your" (agent-pass), then "please enter your conference number …"
    expect(alike(opening(password, 0.3), conferenceNumber)).to.equal(true);
    // unrelated openings
    expect(alike(opening(password, 0.4), leaderB)).to.equal(false);
    expect(alike(opening(pin, 0.4), leaderA)).to.equal(false);
    // a whole sentence that opens as the next one does: "the conference is now being recorded" / "the conference will begin …"
    expect(alike(recording.samples, leaderB)).to.equal(false);
    expect(alike(password.samples, conferenceNumber)).to.equal(false);
  });

  it('a take the recognizer heard as other words than its restart is dropped when it sounds like the restart, and only then', () => {
    const { leaderA, leaderB, password } = prompts;
    // what a recognizer might make of "the conference will begin … | the conference will begin when the leader arrives"
    const wordsOver = (take: Span, restart: Span, heardTake: string[]): SpokenWord[] => [...spread(heardTake, take), ...spread(RESTART_WORDS, restart)];
    const threshold = falseStartThreshold(50)!;
    const dropped = (take: Float32Array, heardTake = ['in', 'cold', 'friends', 'sweet']): number[] => {
      const { comparer, take: span, restartMs } = takeThenRestart(take, leaderB.samples);
      const words = wordsOver(span, { start_ms: restartMs, end_ms: restartMs + ms(leaderB.samples.length) }, heardTake);
      expect(findFalseTakes(words, threshold), 'the words alike enough without the sound').to.deep.equal([]);
      return findFalseTakes(words, threshold, new Set(), { comparer, bars: DEFAULT_BARS, silences: [] }).map((run) => run.to - run.from);
    };
    expect(dropped(opening(leaderA, 0.5))).to.deep.equal([4]);
    // the take heard as one long word: the sound alone can tell
    expect(dropped(opening(leaderA, 0.5), ['conferencing'])).to.deep.equal([1]);
    // a take of one word heard as the restart's first word is that word said twice, left as the words leave it
    expect(dropped(opening(leaderA, 0.5), ['the'])).to.deep.equal([]);
    // the same words over a take that says something else: kept
    expect(dropped(opening(password, 0.5))).to.deep.equal([]);
    expect(dropped(opening(password, 0.5), ['conferencing'])).to.deep.equal([]);
  });

  it('a pause the detector heard is a break where the recognizer ran its words over it (a babble): the take is dropped by its sound', () => {
    const { leaderA, leaderB } = prompts;
    const { comparer, take, restartMs } = takeThenRestart(opening(leaderA, 0.5), leaderB.samples);
    const pause = { start_ms: take.end_ms, end_ms: restartMs };
    // a word heard in the pause leaves no gap of PHRASE_GAP_MS between take and restart
    const words = [
      ...spread(['in', 'cold', 'friends', 'sweet'], take),
      ...spread(['and'], { start_ms: take.end_ms + 50, end_ms: restartMs - 50 }),
      ...spread(RESTART_WORDS, { start_ms: restartMs, end_ms: restartMs + ms(leaderB.samples.length) }),
    ];
    const threshold = falseStartThreshold(50)!;
    const runs = (silences: Span[]): number[] => findFalseTakes(words, threshold, new Set(), { comparer, bars: DEFAULT_BARS, silences }).map((run) => run.to - run.from);
    expect(runs([]), 'no break without the pause').to.deep.equal([]);
    expect(runs([pause])).to.deep.equal([5]);
  });

  it("a word the recognizer ran through the pause between a take and its restart: the restart starts after the pause, and the cut ends where the detector heard it begin", () => {
    const { leaderA, leaderB } = prompts;
    const { comparer, take, restartMs } = takeThenRestart(opening(leaderA, 0.5), leaderB.samples);
    const pause = { start_ms: take.end_ms, end_ms: restartMs };
    const restartSpan = { start_ms: restartMs, end_ms: restartMs + ms(leaderB.samples.length) };
    const heardWith = (runOn: number): SpokenWord[] => [
      ...spread(['in', 'cold', 'friends'], { start_ms: take.start_ms, end_ms: take.end_ms - 200 }),
      // "sweet" from the take's end, through the 400 ms pause and `runOn` ms into the restart (no gap of PHRASE_GAP_MS either side)
      ...spread(['sweet'], { start_ms: take.end_ms - 200, end_ms: restartMs + runOn }),
      ...spread(RESTART_WORDS, { start_ms: restartMs + runOn, end_ms: restartSpan.end_ms }),
    ];
    const cuts = (words: SpokenWord[], silences = [pause]): Span[] =>
      findFalseStartCuts(words, 50, { duration_ms: restartSpan.end_ms + 500, envelope: null }, new Set(), { comparer, silences }).map(({ start_ms, end_ms }) => ({ start_ms, end_ms }));
    // "sweet" the take's last word run on (under a syllable past the pause), or the restart's first begun early (150 ms past it)
    for (const runOn of [0, 20, 90, 150]) {
      const [cut, ...more] = cuts(heardWith(runOn));
      expect(more, `run on ${runOn} ms`).to.deep.equal([]);
      expect(cut!.start_ms, `run on ${runOn} ms`).to.be.at.most(take.start_ms);
      // the take's sound all inside the cut, none of the restart's
      expect(cut!.end_ms, `run on ${runOn} ms`).to.be.within(take.end_ms, restartMs);
    }
    expect(cuts(heardWith(20), []), 'no break without the pause').to.deep.equal([]);
  });

  it('a restarted opening the recognizer wrote once (Whisper: "The conference" 1.9 s long over "The conference | The conference will begin"), its second word stretched from the take over the pause into the restart: the take is dropped by its sound, from where it begins to where the restart does, the stretched word counted whole', () => {
    const { leaderA, leaderB, password } = prompts;
    const cutsOf = (restart: Float32Array, silencesToo = true): Cut[] => {
      const { comparer, take, restartMs } = takeThenRestart(opening(leaderA, 0.5), restart);
      const end = restartMs + ms(restart.length);
      // "the" over the take's first 200 ms, "conference" from there through the pause to 1.1 s into the restart, the rest after
      const words = [
        ...spread(['the'], { start_ms: take.start_ms, end_ms: take.start_ms + 200 }),
        ...spread(['conference'], { start_ms: take.start_ms + 200, end_ms: restartMs + 1_100 }),
        ...spread(['will', 'begin', 'when', 'the', 'leader', 'arrives'], { start_ms: restartMs + 1_100, end_ms: end }),
      ];
      const silences = silencesToo ? [{ start_ms: take.end_ms, end_ms: restartMs }] : [];
      return findFalseStartCuts(words, 50, { duration_ms: end + 500, envelope: null }, new Set(), { comparer, silences });
    };
    const { take, restartMs } = takeThenRestart(opening(leaderA, 0.5), leaderB.samples);
    const [cut, ...more] = cutsOf(leaderB.samples);
    expect(more).to.deep.equal([]);
    expect(cut).to.deep.include({ rule: 'sounds-alike', words: { from: 0, to: 2 } });
    expect(cut!.start_ms).to.be.at.most(take.start_ms);
    expect(cut!.end_ms).to.be.within(take.end_ms, restartMs);
    // its words say nothing against it: it is no doubt, and its reason says what was heard
    expect(cut!.doubt).to.equal(undefined);
    expect(cut!.reason).to.equal('False start, restarted: "the conference", said again after the pause, the recognizer writing it once (it sounds like the restart)');
    // a sentence of its own after the pause, heard the same way, is no restart; nor is the take without the pause
    expect(cutsOf(password.samples)).to.deep.equal([]);
    expect(cutsOf(leaderB.samples, false)).to.deep.equal([]);
  });

  it('a word the recognizer ran through the pause before a take: the take starts after the pause, and the cut starts where the detector heard the speech before it stop', () => {
    const { leaderA, leaderB, password } = prompts;
    const { spans, comparer } = sentenceTakeRestart(password.samples, opening(leaderA, 0.5), leaderB.samples);
    const [before, gap, take, between, restart] = spans;
    const room = { duration_ms: restart.end_ms + 500, envelope: null };
    const cuts = (words: SpokenWord[], silences: Span[]): Span[] =>
      findFalseStartCuts(words, 50, room, new Set(), { comparer, silences }).map(({ start_ms, end_ms }) => ({ start_ms, end_ms }));
    const heard = (lastKept: Span, firstOfTake: Span): SpokenWord[] => [
      ...spread(['please', 'enter', 'your'], { start_ms: before.start_ms, end_ms: lastKept.start_ms }),
      ...spread(['password'], lastKept),
      ...spread(['in'], firstOfTake),
      ...spread(['cold', 'friends', 'sweet'], { start_ms: firstOfTake.end_ms, end_ms: take.end_ms }),
      ...spread(RESTART_WORDS, restart),
    ];
    const lastKept = { start_ms: before.end_ms - 600, end_ms: before.end_ms };
    // "in" begun 150 ms before the pause, in the speech before it, and run through it into the take
    const [through, ...more] = cuts(heard({ ...lastKept, end_ms: before.end_ms - 150 }, { start_ms: before.end_ms - 150, end_ms: take.start_ms + 300 }), [gap, between]);
    expect(more).to.deep.equal([]);
    expect(through!.start_ms).to.be.within(before.end_ms, take.start_ms);
    expect(through!.end_ms).to.be.within(take.end_ms, restart.start_ms);
    // "password" run 60 ms past the pause into the take: under a syllable, so the take's first word is the next one; the cut starts before the take does
    const [runOn] = cuts(heard({ ...lastKept, end_ms: take.start_ms + 60 }, { start_ms: take.start_ms + 60, end_ms: take.start_ms + 300 }), [gap, between]);
    expect(runOn!.start_ms).to.be.within(before.end_ms, take.start_ms);
    expect(runOn!.end_ms).to.be.within(take.end_ms, restart.start_ms);
  });

  it('a take and its restart 280 ms apart (under the 300 ms that makes a silence), the recognizer writing the opening once and running its last word over the gap: the detector hears the gap, and the take is dropped by its sound', () => {
    const { leaderA, leaderB, password } = prompts;
    const planOf = (restart: Float32Array): { cuts: Span[]; take: Span; restartMs: number } => {
      const { samples, spans } = overHiss([pause(0.5), opening(leaderA, 0.5), pause(0.28), restart, pause(0.5)]);
      const [, take, , heardRestart] = spans as [Span, Span, Span, Span];
      // "the" over the take's first 200 ms, "conference" from there over the gap to 1.1 s into the restart, the rest after
      const words = [
        ...spread(['the'], { start_ms: take.start_ms, end_ms: take.start_ms + 200 }),
        ...spread(['conference'], { start_ms: take.start_ms + 200, end_ms: heardRestart.start_ms + 1_100 }),
        ...spread(['will', 'begin', 'when', 'the', 'leader', 'arrives'], { start_ms: heardRestart.start_ms + 1_100, end_ms: heardRestart.end_ms }),
      ];
      const durationMs = Math.round((samples.length / SAMPLE_RATE) * 1000);
      const { plan } = planStretch(0, durationMs, envelopeOf(samples), words, { pacing_level: 50, false_start_sensitivity: 50 });
      const cuts = plan.edits.filter((edit) => edit.type === 'false_start' && edit.active).map(({ start_ms, end_ms }) => ({ start_ms, end_ms }));
      return { cuts, take, restartMs: heardRestart.start_ms };
    };
    const { cuts: [cut, ...more], take, restartMs } = planOf(leaderB.samples);
    expect(more).to.deep.equal([]);
    expect(cut, 'the take is cut').to.not.equal(undefined);
    expect(cut!.start_ms).to.be.at.most(take.start_ms);
    expect(cut!.end_ms).to.be.within(take.end_ms - 50, restartMs);
    // a sentence of its own after the gap, heard the same way, is no restart
    expect(planOf(password.samples).cuts).to.deep.equal([]);
  });

  it('a take whose first word the recognizer timed from 120 ms into the pause before it, the sentence before it ended 200 ms before its sound: the cut starts where the detector heard that sound stop, not inside it', () => {
    const { leaderA, leaderB, password } = prompts;
    const { spans, comparer } = sentenceTakeRestart(password.samples, opening(leaderA, 0.5), leaderB.samples);
    const [before, gap, take, between, restart] = spans;
    // Whisper's words of level-swing talk 9: "conference." ending 200 ms before its final "s" does, "The" begun 120 ms into
    // the pause, "conference" stretched from the take over the pause into the restart
    const words = [
      ...spread(['please', 'enter', 'your', 'password'], { start_ms: before.start_ms, end_ms: before.end_ms - 200 }),
      ...spread(['the'], { start_ms: gap.start_ms + 120, end_ms: take.start_ms + 70 }),
      ...spread(['conference'], { start_ms: take.start_ms + 70, end_ms: restart.start_ms + 1_100 }),
      ...spread(['will', 'begin', 'when', 'the', 'leader', 'arrives'], { start_ms: restart.start_ms + 1_100, end_ms: restart.end_ms }),
    ];
    const [cut, ...more] = findFalseStartCuts(words, 50, { duration_ms: restart.end_ms + 500, envelope: null }, new Set(), { comparer, silences: [gap, between] });
    expect(more).to.deep.equal([]);
    expect(cut).to.deep.include({ words: { from: 4, to: 6 } });
    expect(cut!.start_ms, JSON.stringify({ cut, gap })).to.be.within(gap.start_ms, take.start_ms);
    expect(cut!.end_ms).to.be.within(take.end_ms, restart.start_ms);
  });

  it('a take whose first word the recognizer stretched back over the pause before it: that pause is its break, and its sound is compared where the detector heard it', () => {
    const { leaderA, leaderB, password } = prompts;
    const { spans, comparer } = sentenceTakeRestart(password.samples, opening(leaderA, 0.5), leaderB.samples);
    const [before, gap, take, between, restart] = spans;
    const heardAt = (firstWord: Span): SpokenWord[] => [
      ...spread(['please', 'enter', 'your', 'password'], before),
      ...spread(['in'], firstWord),
      ...spread(['cold', 'friends', 'sweet'], { start_ms: firstWord.end_ms, end_ms: take.end_ms }),
      ...spread(RESTART_WORDS, restart),
    ];
    const runs = (words: SpokenWord[], silences: Span[]): number[] =>
      findFalseTakes(words, falseStartThreshold(50)!, new Set(), { comparer, bars: DEFAULT_BARS, silences }).map((run) => words.slice(run.from, run.to).length);
    const onTime = { start_ms: take.start_ms, end_ms: take.start_ms + 300 };
    expect(runs(heardAt(onTime), [gap, between])).to.deep.equal([4]);
    // "in" begun 400 ms early, inside the pause: no gap of PHRASE_GAP_MS after "password", yet the detector heard the break
    const early = { start_ms: take.start_ms - 400, end_ms: take.start_ms + 300 };
    expect(runs(heardAt(early), [gap, between])).to.deep.equal([4]);
    expect(runs(heardAt(early), []), 'no break without the pause').to.deep.equal([]);
  });

  it('a take whose words the recognizer squeezed (begun late, run into the restart), its restart heard from inside the pause: its sound is taken from the pause before it to the pause after it, and it is dropped', () => {
    const { leaderA, leaderB, password } = prompts;
    const { spans, comparer } = sentenceTakeRestart(password.samples, opening(leaderA, 0.5), leaderB.samples);
    const [before, gap, take, between, restart] = spans;
    // Whisper writing a restarted opening once: the take heard as two words in 300 ms, 200 ms after its pause ended,
    // and the restart's first word begun inside the pause after it
    const squeezed: SpokenWord[] = [
      ...spread(['please', 'enter', 'your', 'password'], before),
      ...spread(['in', 'cold'], { start_ms: take.start_ms + 200, end_ms: take.start_ms + 500 }),
      ...spread(['the'], { start_ms: between.start_ms + 100, end_ms: restart.start_ms + 250 }),
      ...spread(RESTART_WORDS.slice(1), { start_ms: restart.start_ms + 250, end_ms: restart.end_ms }),
    ];
    const runs = (silences: Span[]): string[][] =>
      findFalseTakes(squeezed, falseStartThreshold(50)!, new Set(), { comparer, bars: DEFAULT_BARS, silences }).map((run) => squeezed.slice(run.from, run.to).map((word) => word.text));
    expect(take.end_ms - take.start_ms, 'the take as spoken').to.be.above(700);
    expect(runs([gap, between])).to.deep.equal([['in', 'cold']]);
    expect(runs([]), 'no break without the pauses').to.deep.equal([]);
  });

  it('a take after a pause the detector heard, behind a word the recognizer glued to it, is matched by its words too', () => {
    const words = spoken('rounds |100 to |70 there is currently one of |460 there is currently one other participant');
    // no sound to go by: the comparer's cepstra end before the words begin
    const sounds = { comparer: new SoundComparer(cepstraOf(pause(0.1))), bars: DEFAULT_BARS };
    const dropped = (silences: Span[]): string[] =>
      findFalseTakes(words, falseStartThreshold(50)!, new Set(), { ...sounds, silences }).map((run) => words.slice(run.from, run.to).map((word) => word.text).join(' '));
    const to = words[1]!;
    const there = words[2]!;
    expect(dropped([]), 'the recognizer heard no break before "there"').to.deep.equal([]);
    expect(dropped([{ start_ms: to.start_ms + 100, end_ms: there.start_ms }])).to.deep.equal(['there is currently one of']);
  });

  it('words said again with no break before them (one stretch a recognizer may have heard twice) are a false start only where the sound agrees', () => {
    const { leaderA, leaderB, password } = prompts;
    const runs = (take: Float32Array, withSound: boolean): number[] => {
      const { samples, spans } = overHiss([pause(0.5), take, leaderB.samples, pause(0.5)]);
      const words = [...spread(['the', 'conference'], spans[1]!), ...spread(RESTART_WORDS, spans[2]!)];
      const sounds = withSound ? { comparer: new SoundComparer(cepstraOf(samples)), bars: DEFAULT_BARS, silences: [spans[0]!, spans[3]!] } : undefined;
      return findFalseTakes(words, falseStartThreshold(50)!, new Set(), sounds).map((run) => run.to - run.from);
    };
    // the words alone: "the conference | the conference will begin …" is a take said again
    expect(runs(opening(password, 0.4), false)).to.deep.equal([2]);
    // heard over another sentence's sound it is not; over the same words' sound it is
    expect(runs(opening(password, 0.4), true)).to.deep.equal([]);
    expect(runs(opening(leaderA, 0.4), true)).to.deep.equal([2]);
  });

  it("a false start's confidence follows its sound: the same words heard over a take that sounds like its restart are surer than over one that does not", () => {
    const { leaderA, leaderB, password } = prompts;
    const confidenceOver = (take: Float32Array): number[] => {
      const { samples, take: span, restartMs } = takeThenRestart(take, leaderB.samples);
      const durationMs = ms(samples.length);
      const words = [...spread(['the', 'conference', 'will', 'begin'], span), ...spread(RESTART_WORDS, { start_ms: restartMs, end_ms: restartMs + ms(leaderB.samples.length) })];
      const { plan } = planStretch(0, durationMs, envelopeOf(samples), words, { pacing_level: 50, false_start_sensitivity: 50 });
      return plan.edits.filter((edit) => edit.type === 'false_start').map((edit) => edit.confidence);
    };
    const [alike] = confidenceOver(opening(leaderA, 0.5));
    const [otherwise] = confidenceOver(opening(password, 0.5));
    // both are false starts by their words; the sound sets them apart
    expect(alike).to.be.a('number');
    expect(otherwise).to.be.a('number');
    expect(alike! - otherwise!).to.be.above(0.2);
  });

  it("a false start's sound is weighed where the finder heard it: a last word the recognizer ran through the pause leaves the confidence as it was", () => {
    const { leaderA, leaderB } = prompts;
    const { samples, take, restartMs } = takeThenRestart(opening(leaderA, 0.5), leaderB.samples);
    const durationMs = ms(samples.length);
    const envelope = envelopeOf(samples);
    // the take's last word "begin" ending at `lastEnd`, the restart's words from the restart's start or after "begin"
    const confidence = (lastEnd: number): number[] => {
      const words = [
        ...spread(['the', 'conference', 'will'], { start_ms: take.start_ms, end_ms: take.end_ms - 200 }),
        ...spread(['begin'], { start_ms: take.end_ms - 200, end_ms: lastEnd }),
        ...spread(RESTART_WORDS, { start_ms: Math.max(restartMs, lastEnd), end_ms: restartMs + ms(leaderB.samples.length) }),
      ];
      const { plan } = planStretch(0, durationMs, envelope, words, { pacing_level: 50, false_start_sensitivity: 50 });
      return plan.edits.filter((edit) => edit.type === 'false_start').map((edit) => edit.confidence);
    };
    const onTime = confidence(take.end_ms);
    expect(onTime).to.have.length(1);
    // "begin" run over the 400 ms pause and 60 ms into the restart: the take's sound is weighed as before, without the pause
    expect(confidence(restartMs + 60)).to.deep.equal(onTime);
  });

  it('sensitivity widens the sound bars monotonically, and 0 turns them off', () => {
    expect(soundBars(0)).to.equal(null);
    let previous = { mean: 0, worst: 0 };
    for (let level = 10; level <= 100; level += 10) {
      const bars = soundBars(level)!;
      expect(bars.mean).to.be.above(previous.mean);
      expect(bars.worst).to.be.above(previous.worst);
      previous = bars;
    }
  });
});
