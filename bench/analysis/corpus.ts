// The benchmark's speech with known truth: several tracks of flite sentences joined by
// pauses of 200 ms to 3 s, with false starts planted ("so today I want to talk about" …
// "so today I want to show you how to edit"). The script is drawn from a fixed seed, and
// the made tracks are cached under .data/bench-corpus/<hash of the script> so reruns
// skip making them.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeSpokenTrack, type SpokenPart, type TimeSpan } from '../../hack/fixtures/speech.ts';

/** Sentences said once each per track, in a shuffled order; their openings differ, so none restarts another. */
const SENTENCES = [
  'the timeline shows every clip in the order it plays',
  'captions are generated from the words the recognizer hears',
  'long pauses make a video feel slow and heavy',
  'we export the final cut as a web friendly file',
  'good lighting matters more than an expensive camera',
  'remember to check the audio levels before recording',
  'a quiet room gives the cleanest voice track',
  'most viewers decide in the first few seconds',
  'keep your sentences short and your points clear',
  'background music should never cover the voice',
  'every project starts with a rough first draft',
  'upload the raw footage and let the analysis run',
  'the pacing slider decides how many pauses are removed',
  'this is where the inspector shows the selected clip',
  'after the render finishes you get a download link',
  'color correction comes after the story is locked',
  'nobody likes watching someone search for the right word',
  'the best edits are the ones you never notice',
  'short videos need a strong hook at the beginning',
  'you can undo any cut with a single click',
  'our servers keep your exports for thirty days',
  'interviews often have two cameras and one microphone',
  'a steady tripod saves hours of stabilization later',
  'people remember stories much better than numbers',
  'please subscribe if this tutorial helped you',
  'next week we will look at sound design',
  'my favorite trick is cutting on the action',
  'zoom in slowly when the speaker makes a point',
  'transitions should feel natural and never distract',
  'every second you remove makes the message stronger',
  'there is no need to buy special software',
  'it only takes a few minutes to learn',
  'write down your main idea before you film',
  'viewers notice bad audio long before bad video',
  'let the computer find the boring parts for you',
  'here is the finished version after all the cuts',
  'thanks again for watching until the very end',
  'an outline keeps the recording focused and brief',
  'jump cuts work well for fast talking videos',
  'check the captions for names the machine did not know',
] as const;

/**
 * Planted false starts: a take broken off, then the phrase restarted. Each pair shares
 * at least its first four words, the span our rule compares (docs/decisions.md,
 * "False starts"); takes that turn away sooner are out of its documented reach.
 */
const FALSE_STARTS: readonly (readonly [dropped: string, kept: string])[] = [
  ['so today I want to talk about', 'so today I want to show you how to edit'],
  ['the first thing you need is', 'the first thing you should do is plan your shots'],
  ['if you look at the', 'if you look at the waveform you can see the pauses'],
  ['what we are going to', 'what we are going to build is a simple intro'],
  ['let me show you the', 'let me show you the settings I use every day'],
  ['one of the biggest mistakes', 'one of the biggest problems is a noisy background'],
  ['now I am going to', 'now I am going to split this clip in two'],
  ['before we get started the', 'before we get started make sure your files are uploaded'],
  ['when you open the project', 'when you open the editor the clips are already sorted'],
  ['another good reason to cut', 'another good reason to trim silence is attention span'],
  ['this button right here will', 'this button right here opens the export settings'],
  ['in my own experience the', 'in my own experience most videos are too long'],
  ['the main reason people', 'the main reason people leave is slow pacing'],
  ['as you can see the', 'as you can see the pauses are gone now'],
  ['for this example we will', 'for this example we recorded a short interview'],
  ['I usually start by', 'I usually start by muting the music'],
  ['the next step is to', 'the next step is choosing the music'],
  ['do not worry about the', 'do not worry about a messy first take'],
  ['once the analysis has', 'once the analysis has finished you can review every cut'],
  ['a lot of creators', 'a lot of creators skip this step entirely'],
  ['to change the pacing you', 'to change the pacing just move the slider'],
  ['the reason I like this', 'the reason I like this tool is its speed'],
  ['at the end of the', 'at the end of the day content matters most'],
  ['you might be wondering why', 'you might be wondering how the captions are timed'],
  ['the big question is', 'the big question is where to put the title'],
];

const TRACKS = 5;
const SENTENCES_PER_TRACK = 24;
const SEED = 20_261_124;
/** Pauses between phrases: log-uniform over this range (more short pauses than long, as people speak). */
const PAUSE_MS = [200, 3000] as const;
/** Before a false take: a speaker starts a phrase after a breath, and our rule looks for takes at phrase starts. */
const PAUSE_BEFORE_TAKE_MS = [500, 3000] as const;
/** Between a false take and its restart: the short gap of someone catching themselves. */
const RESTART_GAP_MS = [200, 700] as const;

/** A phrase of a track with its exact span; `dropped`: a planted false take an editor cuts. */
export interface CorpusPhrase extends TimeSpan {
  text: string;
  dropped: boolean;
}

export interface CorpusTrack {
  /** 16 kHz mono 16-bit WAV. */
  path: string;
  durationMs: number;
  phrases: CorpusPhrase[];
  pauses: TimeSpan[];
}

export interface Corpus {
  tracks: CorpusTrack[];
  /** Distinct phrase texts said. */
  distinctPhrases: number;
}

interface TrackScript {
  parts: SpokenPart[];
  /** Per phrase, in order: whether it is a planted false take. */
  dropped: boolean[];
}

/** mulberry32: the same script on every machine. */
function randomSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}

/** Whole 10 ms steps, log-uniform in [low, high]. */
function pauseMs([low, high]: readonly [number, number], random: () => number): number {
  return Math.round((low * (high / low) ** random()) / 10) * 10;
}

/** Every track: sentences and false starts in a drawn order, a pause before each and one at the end. */
function corpusScript(): TrackScript[] {
  const random = randomSource(SEED);
  const falseStarts = shuffled(FALSE_STARTS, random);
  const perTrack = Math.ceil(falseStarts.length / TRACKS);
  return Array.from({ length: TRACKS }, (_, track) => {
    type Item = { sentence: string } | { falseStart: readonly [string, string] };
    const items: Item[] = shuffled<Item>(
      [
        ...shuffled(SENTENCES, random).slice(0, SENTENCES_PER_TRACK).map((sentence) => ({ sentence })),
        ...falseStarts.slice(track * perTrack, (track + 1) * perTrack).map((falseStart) => ({ falseStart })),
      ],
      random,
    );
    const parts: SpokenPart[] = [];
    const dropped: boolean[] = [];
    for (const item of items) {
      if ('sentence' in item) {
        parts.push({ pauseMs: pauseMs(PAUSE_MS, random) }, { say: item.sentence });
        dropped.push(false);
      } else {
        const [take, restart] = item.falseStart;
        parts.push({ pauseMs: pauseMs(PAUSE_BEFORE_TAKE_MS, random) }, { say: take }, { pauseMs: pauseMs(RESTART_GAP_MS, random) }, { say: restart });
        dropped.push(true, false);
      }
    }
    parts.push({ pauseMs: pauseMs(PAUSE_MS, random) });
    return { parts, dropped };
  });
}

/** What makes the tracks: a change to it makes them again. */
const GENERATOR = ['../../hack/fixtures/speech.ts', '../../hack/fixtures/media.ts'].map((path) => new URL(path, import.meta.url));

/**
 * The corpus, made once per script (and generator) into `cacheRoot/<hash>`; `parallel`
 * tracks are made at once. A half-made cache (no corpus.json) is made again.
 */
export async function loadCorpus(cacheRoot: string, parallel: number, log: (line: string) => void): Promise<Corpus> {
  const script = corpusScript();
  const hash = createHash('sha256').update(JSON.stringify(script));
  for (const source of GENERATOR) hash.update(await readFile(source));
  const directory = join(cacheRoot, hash.digest('hex').slice(0, 16));
  const index = join(directory, 'corpus.json');
  const distinctPhrases = new Set(script.flatMap(({ parts }) => parts.flatMap((part) => ('say' in part ? [part.say] : [])))).size;
  try {
    const tracks = JSON.parse(await readFile(index, 'utf8')) as CorpusTrack[];
    log(`corpus: cached in ${directory}`);
    return { tracks, distinctPhrases };
  } catch {
    // not made yet
  }
  log(`corpus: making ${script.length} tracks in ${directory}…`);
  await rm(directory, { recursive: true, force: true });
  await mkdir(directory, { recursive: true });
  const tracks: CorpusTrack[] = new Array(script.length);
  let next = 0;
  const worker = async () => {
    for (let position = next++; position < script.length; position = next++) {
      const { parts, dropped } = script[position]!;
      const made = await makeSpokenTrack(directory, `track-${position + 1}.wav`, parts);
      tracks[position] = {
        path: made.path,
        durationMs: made.durationMs,
        pauses: made.pauses,
        phrases: made.phrases.map((phrase, phraseIndex) => ({ ...phrase, dropped: dropped[phraseIndex]! })),
      };
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  await writeFile(`${index}.partial`, JSON.stringify(tracks));
  await rename(`${index}.partial`, index);
  return { tracks, distinctPhrases };
}
