import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AnalysisRun, type AnalysisRunRow } from '../../api/src/analysis/entities.ts';
import type { ProjectRow } from '../../api/src/projects/entities.ts';
import type { TranscriptWord } from '../../crds/contract/programs/analyze.ts';

/** A completed English run of the project with this transcript, as the analysis writes it (created in `em`, not flushed). */
export function completedRun(em: EntityManager, project: ProjectRow, userId: string, words: TranscriptWord[]): AnalysisRunRow {
  return em.create(AnalysisRun, {
    id: randomUUID(),
    project,
    userId,
    status: 'completed',
    pacingLevel: 50,
    falseStartSensitivity: 50,
    language: 'en',
    analysisMode: 'ai_edit',
    creditsReserved: 0.1,
    transcript: { language: 'en', text: words.map((word) => word.word).join(' '), words },
    completedAt: new Date(),
  });
}
