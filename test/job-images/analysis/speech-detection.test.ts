import { expect } from 'chai';
import type { EnergyEnvelope } from '../../../job-images/whisper/src/analysis/energy.ts';
import { minimumPauseMs } from '../../../job-images/whisper/src/analysis/pacing.ts';
import { planSourceEdits } from '../../../job-images/whisper/src/analysis/plan.ts';
import { DETECTED_END_LAG_MS, DETECTED_ONSET_LEAD_MS, findSilenceCuts, MIN_SILENCE_MS, SHORTEST_KEPT_SIDE_MS } from '../../../job-images/whisper/src/analysis/silences.ts';
import { detectSpeech, silencesBetween, withFloor } from '../../../job-images/whisper/src/analysis/speech.ts';
import type { Cut, Span } from '../../../job-images/whisper/src/analysis/spans.ts';
import { WORD_LEAD_IN_MS, WORD_TAIL_MS, type SpokenWord } from '../../../job-images/whisper/src/analysis/words.ts';
import { SeededRandom, wordsAt } from '../../analysis/transcripts.ts';

const FRAME_MS = 10;

/** A spoken word as sound: a soft onset, a body, and a tail decaying at `tailDbPerFrame`. */
interface SoundWord {
  start_ms: number;
  /** Where the body ends and the tail begins. */
  body_end_ms: number;
  /** Level of the body relative to the talk's peak, dB (≤ 0). */
  level_db: number;
  onset_frames: number;
  tail_db_per_frame: number;
}

interface Talk {
  duration_ms: number;
  words: SoundWord[];
  /** Breaths and clicks: [start_ms, end_ms, level_db relative to peak]. */
  noises: [number, number, number][];
}

function dbToRms(db: number): number {
  return 10 ** (db / 20);
}

/**
 * The 10 ms RMS envelope of a talk at `peakDb` dBFS, over a noise floor of `floorDb` dBFS
 * RMS (null: digital silence) that wavers by ±1.5 dB frame to frame, as pink noise does.
 */
function render(talk: Talk, peakDb: number, floorDb: number | null, seed = 7): EnergyEnvelope {
  const random = new SeededRandom(seed);
  const frames = Math.ceil(talk.duration_ms / FRAME_MS);
  const power = new Float64Array(frames);
  for (const word of talk.words) {
    const first = Math.floor(word.start_ms / FRAME_MS);
    const bodyEnd = Math.ceil(word.body_end_ms / FRAME_MS);
    for (let frame = first; frame < frames; frame += 1) {
      let db: number;
      if (frame < first + word.onset_frames) db = word.level_db - 30 * (1 - (frame - first + 1) / (word.onset_frames + 1));
      else if (frame < bodyEnd) db = word.level_db - 4 * Math.abs(Math.sin(frame));
      else db = word.level_db - word.tail_db_per_frame * (frame - bodyEnd + 1);
      if (db < word.level_db - 90) break;
      power[frame]! += dbToRms(peakDb + db) ** 2;
    }
  }
  for (const [start, end, level] of talk.noises) {
    for (let frame = Math.floor(start / FRAME_MS); frame < Math.min(frames, Math.ceil(end / FRAME_MS)); frame += 1) power[frame]! += dbToRms(peakDb + level) ** 2;
  }
  const rms = new Float32Array(frames);
  for (let frame = 0; frame < frames; frame += 1) {
    const noise = floorDb === null ? 0 : dbToRms(floorDb + (random.next() * 3 - 1.5)) ** 2;
    rms[frame] = Math.sqrt(power[frame]! + noise);
  }
  return { frame_ms: FRAME_MS, rms };
}

/** Where a word's sound stays within `belowDb` of its body level. */
function audibleSpan(word: SoundWord, belowDb: number): Span {
  return { start_ms: word.start_ms, end_ms: word.body_end_ms + Math.ceil(belowDb / word.tail_db_per_frame) * FRAME_MS };
}

/**
 * A talk: phrases of 2–8 words (0.15–0.6 s each, 0–0.4 s apart, body levels −2 to −16 dB
 * under the peak), soft onsets of 0–80 ms, tails decaying 0.5–4 dB per frame (a nasal
 * tail 20 dB down takes 50–400 ms); between phrases natural pauses (0.2–0.6 s) or long
 * ones (1–4 s), some with a breath (−35 dB) or a click (−12 dB, 10–20 ms); room tone
 * at both ends.
 */
function generateTalk(random: SeededRandom): Talk {
  const words: SoundWord[] = [];
  const noises: [number, number, number][] = [];
  let at = random.int(500, 2000);
  const phrases = random.int(2, 8);
  for (let phrase = 0; phrase < phrases; phrase += 1) {
    const count = random.int(2, 8);
    for (let index = 0; index < count; index += 1) {
      const length = random.int(150, 600);
      words.push({ start_ms: at, body_end_ms: at + length, level_db: -random.int(2, 16), onset_frames: random.int(0, 8), tail_db_per_frame: 1 + random.next() * 3 });
      at += length + random.int(0, 400);
    }
    if (random.chance(0.5)) {
      at += random.int(200, 600);
    } else {
      const pause = random.int(1000, 4000);
      if (random.chance(0.3)) noises.push([at + pause / 2, at + pause / 2 + random.int(200, 400), -35]);
      if (random.chance(0.3)) noises.push([at + pause / 3, at + pause / 3 + random.int(10, 20), -12]);
      at += pause;
    }
  }
  return { duration_ms: at + random.int(500, 2000), words, noises };
}

/** What a recognizer would say of a talk: each word, its ends off by up to ±`errorMs`. */
function recognized(talk: Talk, random: SeededRandom, errorMs: number): SpokenWord[] {
  return wordsAt(
    talk.words.map((word, index) => {
      const start = Math.max(0, word.start_ms + random.int(-errorMs, errorMs));
      return [`w${index}`, start, Math.max(start, word.body_end_ms + random.int(-errorMs, errorMs))] as const;
    }),
  );
}

function silenceCuts(talk: Talk, envelope: EnergyEnvelope, words: readonly SpokenWord[], pacing = 50): Cut[] {
  const detection = detectSpeech(envelope, talk.duration_ms);
  const silences = silencesBetween(detection.speech, talk.duration_ms, MIN_SILENCE_MS);
  return findSilenceCuts({ duration_ms: talk.duration_ms, words, silences, envelope: withFloor(envelope, detection), minimum_pause_ms: minimumPauseMs(pacing) });
}

function overlapMs(a: Span, b: Span): number {
  return Math.max(0, Math.min(a.end_ms, b.end_ms) - Math.max(a.start_ms, b.start_ms));
}

const TALKS = 60;

/** A stretch of sound: [from ms, to ms, broadband dBFS, its level above 1 kHz relative to it, dB]. */
type Stretch = [number, number, number, number];

/** A 4 s envelope of `parts` over a steady floor of `floorDb` dBFS, `highFloorDb` above 1 kHz. */
function stretchesOver(floorDb: number, highFloorDb: number, parts: readonly Stretch[]): EnergyEnvelope {
  const frames = 400;
  const rms = new Float32Array(frames).fill(dbToRms(floorDb));
  const high = new Float32Array(frames).fill(dbToRms(highFloorDb));
  for (const [from, to, level, hiss] of parts) {
    for (let frame = from / FRAME_MS; frame < to / FRAME_MS; frame += 1) {
      rms[frame] = dbToRms(level);
      high[frame] = dbToRms(level + hiss);
    }
  }
  return { frame_ms: FRAME_MS, rms, high_rms: high };
}

describe('speech is found relative to each recording (speech.ts)', () => {
  const talks = Array.from({ length: TALKS }, (_, seed) => generateTalk(new SeededRandom(1000 + seed)));

  it('gain alone does not change what is speech: the same talk at −30 and at −3 dB peak has the same speech regions', () => {
    for (const talk of talks) {
      const loud = detectSpeech(render(talk, -3, null), talk.duration_ms).speech;
      for (const peak of [-30, -20, -10]) expect(detectSpeech(render(talk, peak, null), talk.duration_ms).speech, `peak ${peak}`).to.deep.equal(loud);
    }
  });

  it('gain and noise floor alone do not change what is cut: levels from −30 to −3 dB peak over floors from digital silence to −38 dBFS RMS, the same cuts within 50 ms per boundary (a pause within 100 ms of the shortest cut may go either way)', () => {
    const random = new SeededRandom(5);
    const borderline = (cut: Cut): boolean => Math.abs(Number(/([\d.]+) s/.exec(cut.reason)![1]) * 1000 - minimumPauseMs(50)) <= 100;
    const unmatched = (cuts: readonly Cut[], others: readonly Cut[]): Cut[] => cuts.filter((cut) => !others.some((other) => overlapMs(cut, other) > 0));
    for (const talk of talks) {
      const words = recognized(talk, random, 60);
      const reference = silenceCuts(talk, render(talk, -3, null), words);
      for (const [peak, floor] of [[-3, -38], [-3, -60], [-10, -45], [-20, -60], [-30, -80], [-30, null]] as const) {
        const cuts = silenceCuts(talk, render(talk, peak, floor), words);
        const context = `peak ${peak}, floor ${floor}: ${JSON.stringify(cuts)} vs ${JSON.stringify(reference)}`;
        expect([...unmatched(cuts, reference), ...unmatched(reference, cuts)].every(borderline), context).to.equal(true);
        for (const cut of cuts) {
          const twin = reference.find((other) => overlapMs(cut, other) > 0);
          if (!twin) continue;
          expect(Math.abs(cut.start_ms - twin.start_ms), `${context}: start`).to.be.at.most(50);
          expect(Math.abs(cut.end_ms - twin.end_ms), `${context}: end`).to.be.at.most(50);
        }
      }
    }
  });

  it('a fan-like floor at −34 dBFS RMS under a normal voice: every long pause is still cut (the fixed −35 dBFS rule cut none)', () => {
    const talk: Talk = {
      duration_ms: 9000,
      words: [1000, 3600, 6200].map((start) => ({ start_ms: start, body_end_ms: start + 600, level_db: -6, onset_frames: 3, tail_db_per_frame: 2 })),
      noises: [],
    };
    const words = wordsAt(talk.words.map((word, index) => [`w${index}`, word.start_ms, word.body_end_ms] as const));
    const cuts = silenceCuts(talk, render(talk, -3, -34), words);
    const long = [
      { start_ms: 1600, end_ms: 3600 },
      { start_ms: 4200, end_ms: 6200 },
    ];
    for (const pause of long) expect(cuts.reduce((sum, cut) => sum + overlapMs(cut, pause), 0), JSON.stringify(cuts)).to.be.at.least(1000);
  });

  it('a quiet recording: a word whose nasal tail runs 200 ms past where the recognizer ended it keeps its tail', () => {
    // speech RMS about −37 dBFS: body −26 dBFS, a tail 6–20 dB under it for 210 ms
    const talk: Talk = {
      duration_ms: 6000,
      words: [
        { start_ms: 1000, body_end_ms: 1500, level_db: -3, onset_frames: 2, tail_db_per_frame: 0.7 },
        { start_ms: 4000, body_end_ms: 4500, level_db: -3, onset_frames: 2, tail_db_per_frame: 2 },
      ],
      noises: [],
    };
    // the recognizer ends the first word 100 ms early
    const words = wordsAt([
      ['one', 1000, 1400],
      ['two', 4000, 4500],
    ]);
    const cuts = silenceCuts(talk, render(talk, -23, -75), words);
    const tail = audibleSpan(talk.words[0]!, 20);
    expect(cuts.some((cut) => cut.start_ms > 1500 && cut.end_ms < 4000), 'the pause is still cut').to.equal(true);
    for (const cut of cuts) expect(overlapMs(cut, tail), JSON.stringify(cut)).to.equal(0);
    expect(cuts.every((cut) => cut.end_ms <= tail.end_ms || cut.start_ms >= tail.end_ms + WORD_TAIL_MS)).to.equal(true);
  });

  it(`over ${TALKS * 6} generated envelopes (quiet tails, soft onsets, breaths, clicks, gains, floors, words a recognizer heard in the noise of long pauses, words it stretched over them): a region the detector marks as speech, widened by the guard bands (a shortened pause: by what it keeps of itself), is never inside a silence cut, and no cut removes a word's sound within 20 dB of it`, () => {
    const random = new SeededRandom(11);
    let cutCount = 0;
    let phantomsCut = 0;
    let stretchedCut = 0;
    for (const talk of talks) {
      for (const [peak, floor] of [[-3, null], [-3, -38], [-30, -90], [-12, -50], [-20, -60], [-6, -45]] as const) {
        const envelope = render(talk, peak, floor, random.int(0, 1000));
        // a word "heard" in the middle of every pause over a second: no sound of the talk under it
        const phantoms = talk.words.slice(1).flatMap((word, index) => {
          const after = audibleSpan(talk.words[index]!, 60).end_ms;
          const middle = (after + word.start_ms) / 2;
          return word.start_ms - after > 1000 ? [[`noise${index}`, Math.round(middle - 150), Math.round(middle + 150)] as const] : [];
        });
        // the word before every other such pause stretched over it, to 200 ms before the next word (pocketsphinx in a babble)
        const stretched = new Set(phantoms.filter((_, index) => index % 2 === 1).map(([name]) => Number(name.slice('noise'.length))));
        const heard = recognized(talk, random, 120).map((word, index) => (stretched.has(index) ? { ...word, end_ms: Math.max(word.end_ms, talk.words[index + 1]!.start_ms - 200) } : word));
        const words = [...heard, ...(phantoms.length ? wordsAt(phantoms) : [])].sort((a, b) => a.start_ms - b.start_ms);
        const detection = detectSpeech(envelope, talk.duration_ms);
        const { speech } = detection;
        for (const pacing of [0, 50, 100]) {
          const { edits } = planSourceEdits({ source_index: 0, duration_ms: talk.duration_ms, words, silences: silencesBetween(speech, talk.duration_ms, MIN_SILENCE_MS), envelope: withFloor(envelope, detection), detected_silences: true }, { pacing_level: pacing, false_start_sensitivity: 50 });
          for (const cut of edits.filter((edit) => edit.type === 'silence')) {
            cutCount += 1;
            for (const region of speech) {
              // a shortened pause (issue 39) keeps at least SHORTEST_KEPT_SIDE_MS of itself next to speech, measured from the detector's edges less their measured lead and lag; a pause removed whole kept the guard bands
              const [leadIn, tail] = cut.pause ? [SHORTEST_KEPT_SIDE_MS - DETECTED_ONSET_LEAD_MS, SHORTEST_KEPT_SIDE_MS - DETECTED_END_LAG_MS] : [WORD_LEAD_IN_MS, WORD_TAIL_MS];
              const guarded = { start_ms: region.start_ms - (region.start_ms > 0 ? leadIn : 0), end_ms: region.end_ms + (region.end_ms < talk.duration_ms ? tail : 0) };
              expect(overlapMs(cut, guarded), `cut ${JSON.stringify(cut)} vs speech ${JSON.stringify(region)}`).to.equal(0);
            }
            for (const word of talk.words) expect(overlapMs(cut, audibleSpan(word, 20)), `cut ${JSON.stringify(cut)} vs word ${JSON.stringify(word)}`).to.equal(0);
            phantomsCut += words.filter((word) => word.match.startsWith('noise') && overlapMs(cut, word) > 0).length;
            stretchedCut += [...stretched].filter((index) => overlapMs(cut, heard[index]!) > 0).length;
          }
        }
      }
    }
    expect(cutCount).to.be.greaterThan(TALKS * 6);
    expect(phantomsCut, 'the words heard in noise keep no pause uncut').to.be.greaterThan(TALKS * 6);
    expect(stretchedCut, 'the words stretched over a pause keep it uncut no longer').to.be.greaterThan(TALKS * 3);
  });

  it('a word\'s final "s" with a low thump after it (pocketsphinx\'s "go forward ten meters"), parted from the word by a dip to the floor, is speech, not a breath; a breath alone still is one', () => {
    // [from ms, to ms, broadband dBFS, its level above 1 kHz relative to it, dB], over a −45 dBFS floor with little above 1 kHz
    const stretches: Stretch[] = [
      [500, 1200, -12, -20], // the word's voiced body
      [1380, 1580, -30, -1], // its final "s", hissing in most of the region's frames
      [1580, 1700, -28, -35], // a low thump, where the region is loudest
      [3000, 3500, -12, -20], // the next word
    ];
    const envelopeOf = (parts: readonly Stretch[]): EnergyEnvelope => stretchesOver(-45, -58, parts);
    const detection = detectSpeech(envelopeOf(stretches), 4_000);
    expect(detection.breaths).to.deep.equal([]);
    expect(detection.speech.some((region) => region.start_ms <= 1_380 && region.end_ms >= 1_700)).to.equal(true);
    // the same place holding a breath's hiss alone, loudest where it hisses: a breath
    const breath = detectSpeech(envelopeOf([stretches[0]!, [1_500, 1_850, -32, -2], stretches[3]!]), 4_000);
    expect(breath.breaths).to.have.length(1);
    expect(breath.speech.some((region) => region.start_ms < 1_850 && region.end_ms > 1_500)).to.equal(false);
  });

  it('"go forward ten meters" over pink noise at −38 dBFS: the word\'s quiet continuation after a dip, and its final "s" 230 ms after it (a stop\'s closure between), both under the level that starts speech, belong to the word; a click 250 ms after a word and a breath 500 ms after one do not', () => {
    // over a −39 dBFS floor (−45.5 above 1 kHz, pink)
    const envelopeOf = (parts: readonly Stretch[]): EnergyEnvelope => stretchesOver(-39, -45.5, parts);
    const word: Stretch = [500, 1_100, -14, -15];
    const next: Stretch = [3_200, 3_800, -14, -15];
    const meters = detectSpeech(
      envelopeOf([
        word,
        [1_130, 1_260, -30, -12], // the word goes on under the onset level, after a 30 ms dip to the floor
        [1_490, 1_610, -30, 1], // its final "s", 230 ms on
        [1_640, 1_680, -24, -40], // a low thump
        next,
      ]),
      4_000,
    );
    expect(meters.on_db).to.be.greaterThan(-30);
    // the pause after the word begins after the thump
    expect(silencesBetween(meters.speech, 4_000, MIN_SILENCE_MS).map((silence) => silence.start_ms)).to.deep.equal([0, 1_690]);
    expect(meters.breaths).to.deep.equal([]);
    const click = detectSpeech(envelopeOf([word, [1_350, 1_370, -12, 0], next]), 4_000);
    expect(click.speech[0]!.end_ms).to.be.below(1_350);
    const breath = detectSpeech(envelopeOf([word, [1_600, 1_950, -34, 1], next]), 4_000);
    expect(breath.speech[0]!.end_ms).to.be.below(1_600);
    expect(breath.breaths).to.have.length(1);
  });

  it('under 60 Hz mains hum at −35 dBFS: a word whose broadband level stays under the level that starts speech, clear above 1 kHz where the hum has nothing, is speech', () => {
    // two words at the talk's level, and "ten meters" between them (−40 dBFS above 1 kHz), over the hum (nothing of it up there)
    const envelope = stretchesOver(-35, -100, [
      [500, 1_100, -11, -18],
      [1_600, 2_100, -26, -14],
      [3_000, 3_600, -11, -18],
    ]);
    const detection = detectSpeech(envelope, 4_000);
    expect(detection.on_db).to.be.greaterThan(-26);
    expect(detection.speech.some((region) => region.start_ms <= 1_600 && region.end_ms >= 2_100)).to.equal(true);
    // the same word without its level above 1 kHz stays under the onset: nothing else made it speech
    envelope.high_rms!.fill(dbToRms(-100), 160, 210);
    expect(detectSpeech(envelope, 4_000).speech.some((region) => region.start_ms < 2_100 && region.end_ms > 1_600)).to.equal(false);
  });

  it('speech that cannot be told from its noise is reported weak, with why; a clear recording is not', () => {
    const talk = talks[0]!;
    expect(detectSpeech(render(talk, -3, null), talk.duration_ms).weak).to.equal(null);
    expect(detectSpeech(render(talk, -3, -38), talk.duration_ms).weak).to.equal(null);
    expect(detectSpeech(render(talk, -3, -25), talk.duration_ms).weak).to.match(/noise floor -2\d dBFS is above -30 dBFS/);
    expect(detectSpeech(render(talk, -40, -55), talk.duration_ms).weak).to.match(/speech only \d+ dB over the noise floor/);
  });
});
