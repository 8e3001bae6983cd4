import { expect } from 'chai';
import {
  falseStartThreshold,
  findFalseStartCuts,
  findFalseTakes,
  MAX_FALSE_TAKE_MS,
  MAX_FALSE_TAKE_WORDS,
  phraseResemblance,
  sensitivityCurve,
  wordsSaidAgain,
} from '../../../job-images/whisper/src/analysis/false-starts.ts';
import type { Cut } from '../../../job-images/whisper/src/analysis/spans.ts';
import { WORD_LEAD_IN_MS, type SpokenWord } from '../../../job-images/whisper/src/analysis/words.ts';
import { generateSource, SeededRandom, speechCorpusEntry, spoken, type FalseTakeKind } from '../../analysis/transcripts.ts';

const DEFAULT_SENSITIVITY = 50;

function falseStarts(words: readonly SpokenWord[], sensitivity = DEFAULT_SENSITIVITY): Cut[] {
  return findFalseStartCuts(words, sensitivity, { duration_ms: words.at(-1)!.end_ms + 1000, envelope: null });
}

/** The texts of the words each false start drops. */
function dropped(words: readonly SpokenWord[], sensitivity = DEFAULT_SENSITIVITY): string[] {
  return falseStarts(words, sensitivity).map((cut) => words.slice(cut.words!.from, cut.words!.to).map((word) => word.text).join(' '));
}

/** Indices of every word the false starts drop at a level. */
function droppedIndices(words: readonly SpokenWord[], sensitivity: number): Set<number> {
  const threshold = falseStartThreshold(sensitivity);
  const runs = threshold === null ? [] : findFalseTakes(words, threshold);
  return new Set(runs.flatMap(({ from, to }) => Array.from({ length: to - from }, (_, offset) => from + offset)));
}

describe('false starts: a phrase restarted, the last take kept (false-starts.ts)', () => {
  it('an exact restart: the first take goes, from its lead-in to the lead-in of the restart; the reason quotes the take, the restart and the rule that matched', () => {
    const words = spoken('so today I want to talk about |600 so today I want to show you how it works', 1000);
    const [cut, ...more] = falseStarts(words);
    expect(more).to.deep.equal([]);
    const restart = words[7]!;
    expect(cut).to.deep.equal({
      type: 'false_start',
      start_ms: 1000 - WORD_LEAD_IN_MS,
      end_ms: restart.start_ms - WORD_LEAD_IN_MS,
      reason: 'False start, restarted: "so today I want to talk about", said again as "so today I want to show you how it works" (its first words said again)',
      words: { from: 0, to: 7 },
      rule: 'words-said-again',
    });
  });

  it('a restart with a recognizer error in one word ("want" heard as "wont") is still found at the default sensitivity', () => {
    expect(dropped(spoken('so today I want to talk about |600 so today I wont to show you how'))).to.deep.equal(['so today I want to talk about']);
    expect(dropped(spoken('we are going to cut |400 we are goin to cut the silences'))).to.deep.equal(['we are going to cut']);
  });

  it('a take broken off in the middle of a word ("sh-") is found', () => {
    expect(dropped(spoken('so today I want to sh- |400 so today I want to show you'))).to.deep.equal(['so today I want to sh-']);
  });

  it('a hesitation between the takes goes with the false take; inside the words compared it is skipped', () => {
    expect(dropped(spoken('so today I want um, |300 so today I want to show you'))).to.deep.equal(['so today I want um,']);
    expect(dropped(spoken('so um today I want |300 so today I want to show you'))).to.deep.equal(['so um today I want']);
  });

  it('takes restarted one after the other go as one edit, and the last one stays', () => {
    expect(dropped(spoken('so today |300 so today I |300 so today I want to show you'))).to.deep.equal(['so today so today I']);
  });

  it('a phrase repeated far apart is not a false start: more than MAX_FALSE_TAKE_MS later, or more than MAX_FALSE_TAKE_WORDS words later', () => {
    expect(MAX_FALSE_TAKE_MS).to.equal(10_000);
    expect(dropped(spoken('so today I want to talk about editing. |9500 so today I want to talk about cutting'), 100)).to.deep.equal([]);
    // 8 + 18 words from the first "so" to the second, said in under 5 s.
    const between = 'we then open the project panel and pick one clip from that list before dragging it onto our track';
    expect(MAX_FALSE_TAKE_WORDS).to.be.lessThan(8 + between.split(' ').length);
    expect(dropped(spoken(`so today I want to talk about editing. ${between} |300 so today I want to talk about cutting`, 0, 120, 20), 100)).to.deep.equal([]);
    expect(dropped(spoken(`so today I want to talk about editing. |300 so today I want to talk about cutting`, 0, 120, 20), 100)).to.have.length(1);
  });

  it('two sentences that open alike are not a false start at the default ("We fix the audio. We fix the video."); a sentence said again is (a retake)', () => {
    expect(dropped(spoken('We fix the audio. |500 We fix the video.'))).to.deep.equal([]);
    expect(dropped(spoken('This is the timeline. |500 This is the inspector.'))).to.deep.equal([]);
    expect(dropped(spoken('We fix the audio. |500 We fix the audio now.'))).to.deep.equal(['We fix the audio.']);
  });

  it('a clause said whole before one that opens alike (the recognizer\'s comma between them) is no take by its letters alone: only its sound could make it one', () => {
    // Whisper heard these with commas; the letters of each first clause come again in part in the next
    expect(dropped(spoken('To decrease your speaking volume to other participants, |540 to reset your speaking volume to the default level.'))).to.deep.equal([]);
    expect(dropped(spoken('3 to eject the last user, |500 4 or 6 to decrease or increase the conference volume, |500 7 or 9 to decrease or increase your volume.'))).to.deep.equal([]);
    // broken off without a clause mark, the same words are still a take
    expect(dropped(spoken('to reset your |400 to reset your speaking volume to the default level.'))).to.deep.equal(['to reset your']);
  });

  it('a take after a pause of PHRASE_GAP_MS (200 ms) starts a phrase: a recognizer stretches the words around a short pause into it', () => {
    expect(dropped(spoken('conference |210 to decrease your speaking volume |370 to decrease your speaking volume press two'))).to.deep.equal(['to decrease your speaking volume']);
    expect(dropped(spoken('and |210 so today I want |400 so today I want to show you'))).to.deep.equal(['so today I want']);
    expect(dropped(spoken('and |150 so today I want |400 so today I want to show you'))).to.deep.equal([]);
  });

  it('a restart after a pause whose first words were misheard is found by its letters ("please add" / "lee said")', () => {
    const take = 'please add your personal identification number of';
    const restart = 'lee said your personal identification number followed by the pound key';
    expect(dropped(spoken(`yourself |300 ${take} |500 ${restart}`))).to.deep.equal([take]);
    // no break before the restart: not a speaker who broke off, and the first words differ
    expect(dropped(spoken(`yourself |300 ${take} ${restart}`))).to.deep.equal([]);
  });

  it('letters run together across the words: a word heard split or joined ("pbx" / "p b x") still says the take again', () => {
    expect(dropped(spoken('the pbx routes |400 the p b x routes calls to you'))).to.deep.equal(['the pbx routes']);
  });

  it('a take that runs on past what the restart says again is a second sentence opening alike, unless the whole take comes again loosely', () => {
    expect(dropped(spoken('if you would like to learn more about asterisk dial one now |400 if you would like to test your line press two'))).to.deep.equal([]);
    const take = 'asterisk is an open source pbx that runs on their friends on a lion';
    expect(dropped(spoken(`${take} |450 asterisk is an open source pbx that runs on the linux operating system today`))).to.deep.equal([take]);
  });

  it('a long take said again only loosely needs a break before its restart: a phrase recurring inside running speech does not carry off the sentence before it', () => {
    // the reverberant recording's case: the end of one prompt ("to decrease or increase your volume …") and the take after it
    // were loosely "said again" by the take's own end running straight on into the restart
    const take = 'please press one to mute or unmute yourself four or six to decrease or increase the conference call';
    const words = spoken(`to decrease or increase your volume or a delay |600 ${take} |800 please press one to mute or unmute yourself four or six to decrease or increase the conference volume`);
    expect(dropped(words)).to.deep.equal([take]);
    // with a pause before that phrase, the speaker did stop: the long take before it, loosely said again, goes
    const paused = spoken(`to decrease or increase your volume or a delay please press one to mute or unmute yourself four or six |700 to decrease or increase the conference call please press one to mute or unmute yourself four or six`);
    expect(dropped(paused)[0]).to.match(/^to decrease or increase your volume/);
  });

  it('words heard in the room\'s noise alone (noiseWords) are skipped as hesitations are: they make no take, and glued to a take they do not hide its phrase start', () => {
    const cuts = (words: readonly SpokenWord[], noise: Set<number>) =>
      findFalseStartCuts(words, DEFAULT_SENSITIVITY, { duration_ms: words.at(-1)!.end_ms + 1000, envelope: null }, noise).map((cut) =>
        words.slice(cut.words!.from, cut.words!.to).map((word) => word.text).join(' '),
      );
    // a babble heard as "but I … but I" before the talk begins
    const babble = spoken('but I |400 but I do decrease the audio volume of another participant');
    expect(cuts(babble, new Set())).to.deep.equal(['but I']);
    expect(cuts(babble, new Set([0, 1]))).to.deep.equal([]);
    // a phantom "that" 30 ms before the take: its first word no longer follows a pause
    const glued = spoken('rounds |400 that |30 there is currently one other thing |300 there is currently one other participant in the conference');
    expect(cuts(glued, new Set())).to.deep.equal([]);
    expect(cuts(glued, new Set([1]))).to.deep.equal(['there is currently one other thing']);
  });

  it('unpunctuated, two phrases opening alike are not a false start at the default either: a restart heard by letters says the whole take, or COMPARE_WORDS of it ("we fix the audio" / "we fix the video")', () => {
    expect(dropped(spoken('we fix the audio |500 we fix the video'))).to.deep.equal([]);
    expect(dropped(spoken('this is the timeline |500 this is the inspector'))).to.deep.equal([]);
    // MIN_SAID_LETTERS: two short words said again by letters are too little to go on
    expect(dropped(spoken('so |300 we go |400 he go on now'))).to.deep.equal([]);
  });

  it('letters said again: the most take words whose letters the restart says with at most 1 − threshold of them wrong (a first word\'s misheard letters cheaper), and whether the whole take comes with twice that', () => {
    expect(wordsSaidAgain(['to', 'all', 'forward'], ['call', 'forward', 'and'], 0.75)).to.deep.equal({ words: 3, whole: false });
    expect(wordsSaidAgain(['so', 'we', 'fix', 'the', 'audio', 'now'], ['so', 'we', 'fix', 'the', 'video', 'now'], 0.875)).to.deep.equal({ words: 4, whole: true });
    expect(wordsSaidAgain(['so', 'we', 'fix', 'the', 'audio', 'now'], ['so', 'we', 'fix', 'the', 'video', 'now'], 0.95)).to.deep.equal({ words: 4, whole: false });
    // a misheard first word costs ONSET_COST a letter; a word before the take's costs 1 a letter
    expect(wordsSaidAgain(['lol', 'forward'], ['to', 'all', 'forward'], 0.875)).to.deep.equal({ words: 2, whole: false });
    expect(wordsSaidAgain(['and', 'so', 'today'], ['so', 'today', 'i'], 0.875)).to.deep.equal({ words: 0, whole: false });
    expect(wordsSaidAgain(['so', 'today', 'i', 'sh'], ['so', 'today', 'i', 'show', 'you'], 0.975)).to.deep.equal({ words: 4, whole: true });
    expect(wordsSaidAgain(['nothing', 'alike'], ['so', 'today'], 0.75)).to.deep.equal({ words: 0, whole: false });
  });

  it('both first words misheard as other words of about their length ("he said …"/"the city of …"): the rest said again finds the take; a first word far longer or shorter is no rendition of the same word', () => {
    const script = 'there |520 he said your personal identification number of |500 the city of personal identification number followed by the pound key';
    expect(dropped(spoken(script))).to.deep.equal(['he said your personal identification number of']);
    const withThe = (ms: number): SpokenWord[] => {
      const words = spoken(script);
      words[8]!.end_ms = words[8]!.start_ms + ms;
      return words;
    };
    const he = spoken(script)[1]!;
    expect(he.end_ms - he.start_ms, '"he" as spoken').to.equal(250);
    // "the" 1.5 times as long as "he" and 80 ms more: within what the recognizer's timing moves two word ends by
    expect(dropped(withThe(455))).to.deep.equal(['he said your personal identification number of']);
    // twice as long: another word
    expect(dropped(withThe(500))).to.deep.equal([]);
  });

  it('a take whose short first word the restart does not say again (the recognizer missed the restart\'s first word: "to decrease …" heard as "you decrease …" and "decrease …") is found from its second word on; a longer first word is no such slip', () => {
    const script = 'the conference |470 you decrease yours |440 decrease your speaking volume to other participants';
    const words = spoken(script);
    words[2]!.end_ms = words[2]!.start_ms + 120; // "you": 120 ms
    expect(dropped(words)).to.deep.equal(['you decrease yours']);
    // at 250 ms "you" may be a word of its own the restart leaves out: the take is not found
    expect(dropped(spoken(script))).to.deep.equal([]);
  });

  it('a take whose last word broke off and was heard as another, shorter word ("kick-" as "hit") is found; the same word said whole is not', () => {
    const script = 'key |700 you have been hit |480 u have been kicked from this conference';
    expect(dropped(spoken(script))).to.deep.equal([]);
    const words = spoken(script);
    words[4]!.end_ms = words[4]!.start_ms + 150; // "hit" lasts 150 ms, "kicked" 250 ms
    expect(dropped(words)).to.deep.equal(['you have been hit']);
  });

  it('a take never spans a sentence end, even at the highest sensitivity', () => {
    expect(dropped(spoken('so we export it. Then we |400 so we export the captions'), 100)).to.deep.equal([]);
  });

  it('a take starts at a phrase start: the first word, after a pause or punctuation; not in the middle of a phrase', () => {
    expect(dropped(spoken('and so today I want |400 so today I want to show you'))).to.deep.equal([]);
    expect(dropped(spoken('and, so today I want |400 so today I want to show you'))).to.deep.equal(['so today I want']);
    expect(dropped(spoken('and |300 so today I want |400 so today I want to show you'))).to.deep.equal(['so today I want']);
  });

  it('sensitivity 0 turns detection off, even for an exact restart', () => {
    expect(dropped(spoken('so today I want to |400 so today I want to show you'), 0)).to.deep.equal([]);
  });

  it('the sensitivity curve, as documented: 0 off, then 1 − s/400 (50 → 0.875, 100 → 0.75)', () => {
    expect(sensitivityCurve().map((point) => [point.false_start_sensitivity, point.threshold])).to.deep.equal([
      [0, null],
      [10, 0.975],
      [20, 0.95],
      [30, 0.925],
      [40, 0.9],
      [50, 0.875],
      [60, 0.85],
      [70, 0.825],
      [80, 0.8],
      [90, 0.775],
      [100, 0.75],
    ]);
    expect([falseStartThreshold(-3), falseStartThreshold(250), falseStartThreshold(Number.NaN)]).to.deep.equal([null, 0.75, null]);
  });

  it('resemblance: a misheard near neighbour costs part of a word, a different word a whole one, a broken-off last word nothing', () => {
    expect(phraseResemblance(['so', 'today', 'i', 'want'], ['so', 'today', 'i', 'want'])).to.equal(1);
    expect(phraseResemblance(['so', 'today', 'i', 'want'], ['so', 'today', 'i', 'wont'])).to.equal(0.9375);
    expect(phraseResemblance(['so', 'today', 'i', 'want'], ['so', 'today', 'i', 'show'])).to.equal(0.75);
    expect(phraseResemblance(['so', 'today', 'i', 'wa'], ['so', 'today', 'i', 'want'], { brokenOff: true })).to.equal(1);
    expect(phraseResemblance(['so', 'today', 'i', 'wa'], ['so', 'today', 'i', 'want'])).to.equal(0.875);
  });

  it('rising sensitivity finds a superset: every word dropped at one level is dropped at every higher level (generated transcripts)', () => {
    const random = new SeededRandom(41);
    for (let index = 0; index < 200; index += 1) {
      const { words } = index % 2 ? generateSource(random) : speechCorpusEntry(random);
      let lower = droppedIndices(words, 0);
      for (let level = 10; level <= 100; level += 10) {
        const higher = droppedIndices(words, level);
        for (const word of lower) expect(higher.has(word), `transcript ${index}: word ${word} dropped below ${level}, kept at ${level}`).to.equal(true);
        lower = higher;
      }
    }
  });

  it('recall and precision on 200 synthetic transcripts with planted false starts, at the default sensitivity', () => {
    const random = new SeededRandom(20240611);
    const found: Record<FalseTakeKind, [number, number]> = { prefix: [0, 0], diverging: [0, 0], retake: [0, 0], early_turn: [0, 0] };
    let detected = 0;
    let correct = 0;
    for (let index = 0; index < 200; index += 1) {
      const { words, planted } = speechCorpusEntry(random);
      const runs = falseStarts(words).map((cut) => cut.words!);
      const hits = (run: { from: number; to: number }, other: { from: number; to: number }): boolean => run.from < other.to && other.from < run.to;
      for (const take of planted) {
        found[take.kind][1] += 1;
        if (runs.some((run) => hits(run, take))) found[take.kind][0] += 1;
      }
      detected += runs.length;
      correct += runs.filter((run) => planted.some((take) => hits(run, take))).length;
    }
    const sum = (kinds: readonly FalseTakeKind[]): [number, number] => kinds.reduce(([hit, all], kind): [number, number] => [hit + found[kind][0], all + found[kind][1]], [0, 0]);
    const total = sum(['prefix', 'diverging', 'retake', 'early_turn']);
    const withinReach = sum(['prefix', 'diverging', 'retake']);
    const ratio = ([hit, all]: readonly [number, number]): string => `${(hit / all).toFixed(3)} (${hit}/${all})`;
    console.log(`      false starts at sensitivity ${DEFAULT_SENSITIVITY}: recall ${ratio(total)}, precision ${ratio([correct, detected])}`);
    console.log(`      recall by kind: ${Object.entries(found).map(([kind, counts]) => `${kind} ${ratio(counts)}`).join(', ')}`);
    expect(correct / detected, 'precision').to.be.at.least(0.9);
    expect(withinReach[0] / withinReach[1], 'recall of takes whose first words come again').to.be.at.least(0.9);
    expect(total[0] / total[1], 'recall, with the early turns no word window can tell from a list').to.be.at.least(0.85);
  });
});
