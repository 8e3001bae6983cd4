import type { EntityManager } from '@mikro-orm/postgresql';
import type { PlannedLine } from './lines.ts';

/** A caption line the user corrected on some run: what generation wrote, what they made of it, where it lies (timeline ms). */
export interface CorrectedLine {
  text: string;
  original_text: string;
  start_ms: number;
  end_ms: number;
}

/** Most corrections looked at: a project's lines across its runs stay well below it. */
const MAX_CORRECTIONS = 5000;

/**
 * The lines the user corrected on the other runs of the run's project, newest correction
 * first. A re-analysis makes new lines (lines belong to their run); these let the user's text follow.
 */
export async function correctionsOf(em: EntityManager, runId: string): Promise<CorrectedLine[]> {
  return em.getConnection().execute<CorrectedLine[]>(
    `select text, original_text, start_ms, end_ms from caption_lines
      where project_id = (select project_id from analysis_runs where id = ?) and run_id <> ? and text <> original_text
      order by updated_at desc, id limit ${MAX_CORRECTIONS}`,
    [runId, runId],
    'all',
    em.getTransactionContext(),
  );
}

/** The words of a line as compared: case, accents and edge punctuation aside. */
function wordsOf(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/\s+/)
    .map((word) => word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter(Boolean)
    .join(' ');
}

/**
 * New lines with the user's corrections carried over: a line whose words are the words a
 * corrected line was generated with, at an overlapping time, takes the corrected text (the
 * newest correction first). Where the new transcript heard other words, or the line breaks
 * fell elsewhere, the line keeps the new text. `original` stays what was planned.
 */
export function withCorrections<L extends PlannedLine>(lines: readonly L[], corrected: readonly CorrectedLine[]): (L & { original: string })[] {
  const byWords = new Map<string, CorrectedLine[]>();
  for (const line of corrected) {
    const key = wordsOf(line.original_text);
    byWords.set(key, [...(byWords.get(key) ?? []), line]);
  }
  return lines.map((line) => {
    const match = byWords.get(wordsOf(line.text))?.find((old) => old.start_ms < line.end_ms && line.start_ms < old.end_ms);
    return { ...line, original: line.text, text: match ? match.text : line.text };
  });
}
