import { expect } from 'chai';
import { aiEditSchema } from '../../../crds/contract/programs/analyze.ts';
import { findFalseStartCuts } from '../../../job-images/whisper/src/analysis/false-starts.ts';
import { findFillerCuts } from '../../../job-images/whisper/src/analysis/fillers.ts';
import { minimumPauseMs } from '../../../job-images/whisper/src/analysis/pacing.ts';
import { ACTIVE_BY_DEFAULT, planSourceCuts, sourcePlanOf, type PlanSettings, type SourceSignals } from '../../../job-images/whisper/src/analysis/plan.ts';
import { findSilenceCuts } from '../../../job-images/whisper/src/analysis/silences.ts';
import type { Cut } from '../../../job-images/whisper/src/analysis/spans.ts';
import { generateSource, SeededRandom, speechCorpusEntry } from '../../analysis/transcripts.ts';
import { expectCutsSafe } from './cut-safety.ts';

const SOURCES = 3000;

interface Case {
  label: string;
  signals: SourceSignals;
  settings: PlanSettings;
  /** planSourceCuts(signals, settings), once. */
  planned?: Cut[];
}

function plannedCuts(item: Case): Cut[] {
  return (item.planned ??= planSourceCuts(item.signals, item.settings));
}

/** Sloppy sources (four in five) and clean speech with false starts, each with settings drawn for it. */
function generateCases(seed: number): Case[] {
  const random = new SeededRandom(seed);
  return Array.from({ length: SOURCES }, (_, index): Case => {
    let source;
    if (index % 5 === 4) {
      const { words, duration_ms } = speechCorpusEntry(random);
      const silences = words.slice(1).map((word, at) => ({ start_ms: words[at]!.end_ms, end_ms: word.start_ms }));
      source = { words, duration_ms, silences, envelope: null };
    } else source = generateSource(random);
    const level = (): number => (random.chance(0.1) ? random.pick([0, 100]) : random.int(0, 100));
    const settings = { pacing_level: level(), false_start_sensitivity: level() };
    return {
      label: `source ${index} of seed ${seed} (pacing ${settings.pacing_level}, sensitivity ${settings.false_start_sensitivity})`,
      signals: { source_index: index % 7, ...source },
      settings,
    };
  });
}

/** Runs `check` on every case, naming the case that fails. */
function everyCase(cases: readonly Case[], check: (item: Case) => void): void {
  for (const item of cases) {
    try {
      check(item);
    } catch (error) {
      throw new Error(`${item.label}: ${(error as Error).message}`);
    }
  }
}

describe('no cut ever clips a recognized word (property, generated transcripts)', () => {
  const cases = generateCases(7);

  it(`over ${SOURCES} sloppy transcripts, all pacing and sensitivity levels: every cut inside the source, sorted and disjoint; silence cuts touch no word and keep its guard bands; word cuts touch only words they remove, and remove them whole`, () => {
    let cuts = 0;
    everyCase(cases, (item) => {
      expectCutsSafe(item.signals.words, item.signals.duration_ms, plannedCuts(item), { everyWordCovered: false });
      cuts += plannedCuts(item).length;
    });
    expect(cuts, 'the generated sources give cuts to check').to.be.greaterThan(SOURCES * 5);
  });

  it('each finder alone (what a person gets turning the other edits off) is as safe, and covers every word it removes', () => {
    everyCase(cases, ({ signals: { words, duration_ms, silences, envelope }, settings }) => {
      const room = { duration_ms, envelope };
      expectCutsSafe(words, duration_ms, findFalseStartCuts(words, settings.false_start_sensitivity, room), { everyWordCovered: true });
      expectCutsSafe(words, duration_ms, findFillerCuts(words, room), { everyWordCovered: true });
      const pauses = findSilenceCuts({ duration_ms, words, silences, envelope, minimum_pause_ms: minimumPauseMs(settings.pacing_level) });
      expectCutsSafe(words, duration_ms, pauses, { everyWordCovered: true });
    });
  });

  it('every planned edit is a valid AI edit of the contract, of its source, active unless a filler or offered on weak evidence (its reason says so), and counted by type', () => {
    everyCase(cases, (item) => {
      const { signals } = item;
      const { edits, counts } = sourcePlanOf(plannedCuts(item), signals);
      for (const { source_index: sourceIndex, ...edit } of edits) {
        expect(aiEditSchema.safeParse(edit).success, JSON.stringify(edit)).to.equal(true);
        expect(sourceIndex).to.equal(signals.source_index);
        // an edit on weak evidence is offered inactive, and its reason says so
        expect(edit.active).to.equal(ACTIVE_BY_DEFAULT[edit.type] && !edit.reason.includes('(offered, not cut: '));
      }
      for (const type of ['silence', 'false_start', 'filler'] as const) expect(counts[type]).to.equal(edits.filter((edit) => edit.type === type).length);
    });
  });
});
