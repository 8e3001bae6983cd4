import { expect } from 'chai';
import { FILLER_APPLY_CONFIDENCE, FILLER_MAX_MS, FILLER_MIN_MS } from '../../job-images/whisper/src/analysis/filler-sounds.ts';
import { planStretch } from '../../job-images/whisper/src/analysis/stretch.ts';
import { spansOverlap, type Span } from '../../job-images/whisper/src/analysis/spans.ts';
import { normalizeWords, type SpokenWord } from '../../job-images/whisper/src/analysis/words.ts';
import { SAMPLE_RATE } from '../../hack/fixtures/recorded-speech.ts';
import { highPassed, noise } from '../../hack/fixtures/recording-conditions.ts';
import { envelopeOfSamples, overlapMs, promptTalk, promptWords, type PromptTalk } from './talks.ts';

const SETTINGS = { pacing_level: 50, false_start_sensitivity: 50 };
const PROMPTS = ['conf-waitforleader', 'conf-onlyone', 'conf-now-recording', 'conf-placeintoconf'];

/** A vowel's formants and bandwidths, Hz: "uh" [ʌ] and the nasal murmur of "mm" (textbook averages for a male voice). */
const UH: [number, number][] = [
  [640, 80],
  [1190, 90],
  [2390, 120],
];
const MM: [number, number][] = [
  [250, 60],
  [1100, 150],
  [2200, 200],
];

const WOBBLE_HZ = 6;

/**
 * A held voiced sound, synthesized (a filled pause where no recording of one is installed):
 * a glottal pulse train at `f0` Hz with a little jitter, through a cascade of formant
 * resonators (Klatt's two-pole form), faded in and out over 30 ms, at `rmsDb` dBFS RMS. With
 * `wobble`, the formants swing by that share WOBBLE_HZ times a second (a voice unsure of its vowel).
 */
function heldVowel(ms: number, formants: readonly [number, number][], rmsDb: number, { f0 = 120, wobble = 0, seed = 1 } = {}): Float32Array {
  const length = Math.round((ms / 1000) * SAMPLE_RATE);
  const out = new Float32Array(length);
  let state = seed;
  const random = (): number => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  let next = 0;
  let tilt = 0;
  const memory = formants.map(() => [0, 0]);
  for (let index = 0; index < length; index += 1) {
    let source = 0;
    if (index >= next) {
      source = 1;
      next = index + (SAMPLE_RATE / f0) * (1 + 0.01 * random());
    }
    // a glottal pulse's spectrum falls off: one pole at 0.97
    tilt = source + 0.97 * tilt;
    let value = tilt;
    formants.forEach(([frequency, bandwidth], at) => {
      const f = frequency * (1 + wobble * Math.sin((2 * Math.PI * WOBBLE_HZ * index) / SAMPLE_RATE + at));
      const c = -Math.exp((-2 * Math.PI * bandwidth) / SAMPLE_RATE);
      const b = 2 * Math.exp((-Math.PI * bandwidth) / SAMPLE_RATE) * Math.cos((2 * Math.PI * f) / SAMPLE_RATE);
      const [y1, y2] = memory[at]!;
      const y = (1 - b - c) * value + b * y1! + c * y2!;
      memory[at] = [y, y1!];
      value = y;
    });
    out[index] = value;
  }
  return levelled(faded(out), rmsDb);
}

/** 30 ms fades at both ends. */
function faded(samples: Float32Array): Float32Array {
  const ramp = Math.round(0.03 * SAMPLE_RATE);
  return samples.map((value, index) => value * Math.min(1, index / ramp, (samples.length - 1 - index) / ramp));
}

function levelled(samples: Float32Array, rmsDb: number): Float32Array {
  const rms = Math.sqrt(samples.reduce((sum, value) => sum + value * value, 0) / samples.length) || 1;
  const gain = 10 ** (rmsDb / 20) / rms;
  return samples.map((value) => value * gain);
}

/** A mains hum's burst: 120 Hz and its harmonics up to 360 Hz (a transformer's buzz), steady, at `rmsDb`. */
function humBurst(ms: number, rmsDb: number): Float32Array {
  const length = Math.round((ms / 1000) * SAMPLE_RATE);
  const tone = Float32Array.from({ length }, (_, index) => [120, 240, 360].reduce((sum, hz, at) => sum + Math.sin((2 * Math.PI * hz * index) / SAMPLE_RATE) / (at + 1), 0));
  return levelled(faded(tone), rmsDb);
}

/** Where a sound put `offsetMs` into the pause after prompt `index` lies. */
const putAt = (talk: PromptTalk, index: number, offsetMs: number, sound: Float32Array): Span => {
  const start = talk.pauses[index]!.start_ms + offsetMs;
  return { start_ms: start, end_ms: start + (sound.length / SAMPLE_RATE) * 1000 };
};

function fillerEdits(talk: PromptTalk, words: readonly SpokenWord[]) {
  return planStretch(0, talk.durationMs, envelopeOfSamples(talk.samples), words, SETTINGS).plan.edits.filter((edit) => edit.type === 'filler');
}

describe('fillers found by their sound (issue 39)', function () {
  this.timeout(120_000);

  it('a held "uh" and a held "mm" between sentences, the recognizer hearing no word there: each is offered as a filler of its own, its length in the reason, applied when its confidence reaches the bar', async () => {
    const uh = heldVowel(420, UH, -24);
    const mm = heldVowel(380, MM, -26, { f0: 110, seed: 2 });
    const talk = await promptTalk(PROMPTS, { pauseMs: 900, floor: { kind: 'pink', rmsDb: -60 }, inPauses: (index) => (index === 0 ? [[240, uh]] : index === 2 ? [[260, mm]] : []) });
    const edits = fillerEdits(talk, promptWords(talk));
    for (const at of [putAt(talk, 0, 240, uh), putAt(talk, 2, 260, mm)]) {
      const found = edits.filter((edit) => overlapMs(edit, at) >= (at.end_ms - at.start_ms) / 2);
      expect(found, `the filler at ${JSON.stringify(at)}: ${JSON.stringify(edits)}`).to.have.length(1);
      const edit = found[0]!;
      expect(edit.reason).to.match(/^filler '(um|uh|mm)' \d+ ms$/);
      expect(edit.end_ms - edit.start_ms).to.be.within(FILLER_MIN_MS, FILLER_MAX_MS);
      // held this steadily, a filler is as sure as one gets: applied
      expect(edit.confidence, JSON.stringify(edit)).to.be.at.least(FILLER_APPLY_CONFIDENCE);
      expect(edit.active).to.equal(true);
    }
    expect(edits, 'nothing else is a filler').to.have.length(2);
  });

  it('a filler whose vowel wavers between sentences is offered, not applied: its confidence is under the bar and its reason says so', async () => {
    const wavering = heldVowel(420, UH, -24, { wobble: 0.085, seed: 3 });
    const talk = await promptTalk(PROMPTS.slice(0, 2), { pauseMs: 1000, floor: { kind: 'pink', rmsDb: -60 }, inPauses: () => [[280, wavering]] });
    const at = putAt(talk, 0, 280, wavering);
    const edits = fillerEdits(talk, promptWords(talk));
    expect(edits, JSON.stringify(edits)).to.have.length(1);
    const edit = edits[0]!;
    expect(overlapMs(edit, at)).to.be.at.least((at.end_ms - at.start_ms) / 2);
    expect(edit.confidence).to.be.below(FILLER_APPLY_CONFIDENCE);
    expect(edit.active).to.equal(false);
    expect(edit.reason).to.match(/^filler '(um|uh|mm)' \d+ ms \(offered, not cut: confidence 0\.\d\d is under (0\.\d+)\)$/);
    expect(edit.reason).to.include(`is under ${FILLER_APPLY_CONFIDENCE})`);
  });

  it('a sustained vowel inside a word ("sooo": the recognizer\'s "so" running over all of it, or ending 80 or 200 ms before it does) is never offered', async () => {
    // an "s" (hiss above 3 kHz) straight into a vowel held half a second
    const hiss = levelled(faded(highPassed(noise('pink', Math.round(0.12 * SAMPLE_RATE), -30, 9), 3000)), -34);
    const held = heldVowel(500, UH, -20, { seed: 4 });
    const so = new Float32Array(hiss.length + held.length);
    so.set(hiss);
    so.set(held, hiss.length);
    const talk = await promptTalk(PROMPTS.slice(0, 3), { pauseMs: 1400, floor: { kind: 'pink', rmsDb: -60 }, inPauses: (index) => (index === 0 ? [[400, so]] : []) });
    const word = putAt(talk, 0, 400, so);
    for (const endEarly of [0, 80, 200]) {
      const words = normalizeWords([
        ...talk.prompts.map((prompt, index) => ({ word: ` p${index}`, start: prompt.start_ms / 1000, end: prompt.end_ms / 1000, probability: 0.95 })),
        { word: ' so', start: word.start_ms / 1000, end: (word.end_ms - endEarly) / 1000, probability: 0.9 },
      ].sort((a, b) => a.start - b.start));
      expect(fillerEdits(talk, words).filter((edit) => overlapMs(edit, word) > 0), `"so" ending ${endEarly} ms early`).to.deep.equal([]);
    }
  });

  it('a hum (120 Hz with its harmonics) and a steady noise (a brown rumble) at a voice\'s level in the pauses are no filler, nor is 60 Hz mains hum under the talk', async () => {
    const hum = humBurst(500, -24);
    const rumble = levelled(faded(noise('brown', Math.round(0.5 * SAMPLE_RATE), -24, 7)), -24);
    const talk = await promptTalk(PROMPTS, { pauseMs: 1000, floor: { kind: 'hum60', rmsDb: -35 }, inPauses: (index) => (index === 0 ? [[250, hum]] : index === 1 ? [[250, rumble]] : []) });
    expect(fillerEdits(talk, promptWords(talk))).to.deep.equal([]);
  });

  it('a filler never overlaps a heard word: a short word heard inside it leaves it unoffered, and a word timed over it (Whisper gives a filler\'s time to the word after it) keeps its own sound', async () => {
    const uh = heldVowel(600, UH, -24, { seed: 5 });
    const talk = await promptTalk(PROMPTS.slice(0, 3), { pauseMs: 1100, floor: { kind: 'pink', rmsDb: -60 }, inPauses: (index) => (index < 2 ? [[250, uh]] : []) });
    const [first, second] = [putAt(talk, 0, 250, uh), putAt(talk, 1, 250, uh)];
    const words = normalizeWords(
      [
        // the second sentence's word timed from the first filler's start, as Whisper times "I" in "um, I"
        ...talk.prompts.map((prompt, index) => ({ word: ` p${index}`, start: (index === 1 ? first.start_ms : prompt.start_ms) / 1000, end: prompt.end_ms / 1000, probability: 0.9 })),
        // a short word heard in the second filler's last third, with no sound of its own besides
        { word: ' a', start: (second.end_ms - 180) / 1000, end: (second.end_ms - 100) / 1000, probability: 0.3 },
      ].sort((a, b) => a.start - b.start),
    );
    const edits = fillerEdits(talk, words);
    const a = words.find((word) => word.match === 'a')!;
    for (const edit of edits) {
      expect(spansOverlap(edit, a), `${JSON.stringify(edit)} against "a"`).to.equal(false);
      for (const prompt of talk.prompts) expect(overlapMs(edit, prompt), `${JSON.stringify(edit)} against the sound of ${JSON.stringify(prompt)}`).to.equal(0);
    }
    expect(edits.filter((edit) => overlapMs(edit, first) >= (first.end_ms - first.start_ms) / 2), 'the first filler, inside the span of the word timed over it').to.have.length(1);
    expect(edits.filter((edit) => overlapMs(edit, second) > 0), 'the second filler, a word heard in it').to.deep.equal([]);
  });

  it('a filler the recognizer wrote as an unsure word of its own at its start (Whisper\'s "To" p 0.73 over an "uh") is offered: the word is the sound as heard', async () => {
    const uh = heldVowel(450, UH, -24, { seed: 6 });
    const talk = await promptTalk(PROMPTS.slice(0, 2), { pauseMs: 1100, floor: { kind: 'pink', rmsDb: -60 }, inPauses: () => [[300, uh]] });
    const at = putAt(talk, 0, 300, uh);
    const words = normalizeWords(
      [
        ...talk.prompts.map((prompt, index) => ({ word: ` p${index}`, start: prompt.start_ms / 1000, end: prompt.end_ms / 1000, probability: 0.95 })),
        // timed from the sound's start to two thirds into it, nothing else in its span
        { word: ' To', start: at.start_ms / 1000, end: (at.start_ms + 300) / 1000, probability: 0.73 },
      ].sort((a, b) => a.start - b.start),
    );
    const edits = fillerEdits(talk, words);
    expect(edits.filter((edit) => overlapMs(edit, at) >= (at.end_ms - at.start_ms) / 2), JSON.stringify(edits)).to.have.length(1);
    for (const edit of edits) for (const prompt of talk.prompts) expect(overlapMs(edit, prompt), `${JSON.stringify(edit)} against ${JSON.stringify(prompt)}`).to.equal(0);
  });

  it('a hesitation after a word, a pause apart, that the recognizer timed into the word\'s end ("you" drawn over an "er") is offered; a phrase\'s last word, punctuated, keeps the held sound at its end', async () => {
    const uh = heldVowel(450, UH, -24, { seed: 7 });
    const talk = await promptTalk(PROMPTS.slice(0, 3), { pauseMs: 1100, floor: { kind: 'pink', rmsDb: -60 }, inPauses: (index) => (index < 2 ? [[120, uh]] : []) });
    const [first, second] = [putAt(talk, 0, 120, uh), putAt(talk, 1, 120, uh)];
    const said = (text: string, start: number, end: number) => ({ word: ` ${text}`, start: start / 1000, end: end / 1000, probability: 0.9 });
    const [p0, p1, p2] = talk.prompts as [Span, Span, Span];
    const words = normalizeWords([
      // the first prompt's last word, 250 ms of its own sound, its end drawn 200 ms into the hesitation after it
      said('p0', p0.start_ms, p0.end_ms - 250),
      said('you', p0.end_ms - 250, first.start_ms + 200),
      // the second prompt's last word punctuated, its span over the held sound after it to its end
      said('p1', p1.start_ms, p1.end_ms - 250),
      said('level,', p1.end_ms - 250, second.end_ms),
      said('p2', p2.start_ms, p2.end_ms),
    ]);
    const edits = fillerEdits(talk, words);
    expect(edits.filter((edit) => overlapMs(edit, first) >= (first.end_ms - first.start_ms) / 2), `after "you": ${JSON.stringify(edits)}`).to.have.length(1);
    expect(edits.filter((edit) => overlapMs(edit, second) > 0), 'at the end of "level,"').to.deep.equal([]);
    for (const edit of edits) for (const prompt of talk.prompts) expect(overlapMs(edit, prompt), `${JSON.stringify(edit)} against ${JSON.stringify(prompt)}`).to.equal(0);
  });

  it('a word\'s own last syllable after a stop, under mains hum, is no filler: a word timed to end within 100 ms of the held sound\'s end says that sound (issue 38: "system" losing its "-em")', async () => {
    const em = heldVowel(280, MM, -26, { f0: 110, seed: 3 });
    // 60 Hz hum with harmonics at −35 dBFS raises the floor, so the stop's 50 ms closure before the syllable reads as a pause at the floor
    const talk = await promptTalk(PROMPTS.slice(0, 2), { pauseMs: 1400, floor: { kind: 'hum60', rmsDb: -35 }, inPauses: (index) => (index === 0 ? [[50, em]] : []) });
    const syllable = putAt(talk, 0, 50, em);
    const said = (text: string, start: number, end: number) => ({ word: ` ${text}`, start: start / 1000, end: end / 1000, probability: 0.9 });
    const [p0, p1] = talk.prompts as [Span, Span];
    for (const early of [0, 40, 80]) {
      const words = normalizeWords([said('p0', p0.start_ms, p0.end_ms - 300), said('system', p0.end_ms - 300, syllable.end_ms - early), said('p1', p1.start_ms, p1.end_ms)]);
      const edits = fillerEdits(talk, words);
      expect(edits.filter((edit) => overlapMs(edit, syllable) > 0), `"system" timed to end ${early} ms before its "-em" does: ${JSON.stringify(edits)}`).to.deep.equal([]);
    }
  });
});
