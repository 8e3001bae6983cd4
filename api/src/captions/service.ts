import { randomUUID } from 'node:crypto';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { ownedBy } from '../accounts/ownership.ts';
import { transcriptSchema, aiEditTypes } from '../../../crds/contract/programs/analyze.ts';
import { AnalysisRun } from '../analysis/entities.ts';
import { Edit } from '../edits/entities.ts';
import { Project } from '../projects/entities.ts';
import type { ProjectService } from '../projects/service.ts';
import { Conflict } from '../shared/errors.ts';
import { offsetOf, type PageOfRows, type PageRequest } from '../shared/page.ts';
import { CaptionLine, type CaptionLineRow } from './entities.ts';
import { correctionsOf, withCorrections } from './corrections.ts';
import { planCaptionLines } from './lines.ts';

/** Edits that remove timeline: the AI kinds and manual cuts (asset edits add, never remove). */
const cutTypes = ['manual', ...aiEditTypes];

export interface Generated {
  /** Lines written by this call (0 when the run's lines were kept). */
  created: number;
  /** The run already had lines and no force was given: they were kept. */
  kept: boolean;
  /** Lines the active run has now. */
  total: number;
}

/**
 * Caption lines of a project's active analysis run: generated from the run's transcript
 * words around its active cuts, listed in sequence, their text edited by the user.
 */
export class CaptionLines {
  readonly #projects: ProjectService;

  constructor(deps: { projects: ProjectService }) {
    this.#projects = deps.projects;
  }

  /**
   * Generates the active run's lines. Without `force` a run that has lines keeps them;
   * with it they are replaced. Text the user corrected on another run of the project is
   * carried onto a new line made of the same words at the same time. The project row is locked, so concurrent generations and an
   * activation settle one after another. 409 when the project has no completed run.
   */
  async generate(em: EntityManager, userId: string, projectId: string, options: { maxWords: number; force: boolean }): Promise<Generated> {
    await this.#projects.owned(em, userId, projectId);
    return em.transactional(async (tx) => {
      const project = await tx.findOneOrFail(Project, projectId, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      const run = project.activeRunId ? await tx.findOne(AnalysisRun, { id: project.activeRunId, project: projectId, status: 'completed' }) : null;
      const transcript = transcriptSchema.safeParse(run?.transcript);
      if (!run || !transcript.success) throw Conflict('caption.not_analyzed');
      const existing = await tx.count(CaptionLine, { run: run.id });
      if (existing > 0 && !options.force) return { created: 0, kept: true, total: existing };
      await tx.nativeDelete(CaptionLine, { run: run.id });
      const cuts = await tx.find(Edit, { project: projectId, active: true, type: { $in: cutTypes }, $or: [{ runId: run.id }, { runId: null }] });
      const planned = planCaptionLines(transcript.data.words, cuts.map((cut) => ({ start_ms: cut.startMs, end_ms: cut.endMs })), options.maxWords);
      // text the user corrected on another run follows where the words still match
      const lines = withCorrections(planned, await correctionsOf(tx, run.id));
      lines.forEach((line, sequence) => {
        tx.create(CaptionLine, { id: randomUUID(), project, run, sequence, startMs: line.start_ms, endMs: line.end_ms, text: line.text, originalText: line.original });
      });
      await tx.flush();
      return { created: lines.length, kept: false, total: lines.length };
    });
  }

  /** The active run's lines in sequence (none before the first analysis). */
  async list(em: EntityManager, userId: string, projectId: string, request: PageRequest): Promise<PageOfRows<CaptionLineRow>> {
    const project = await this.#projects.owned(em, userId, projectId);
    if (!project.activeRunId) return { rows: [], total: 0 };
    const [rows, total] = await em.findAndCount(CaptionLine, { run: project.activeRunId }, { orderBy: { sequence: 'asc' }, limit: request.items_per_page, offset: offsetOf(request) });
    return { rows, total };
  }

  /** Replaces a line's text; original_text stays what generation wrote. Another user's line is 404. */
  async editText(em: EntityManager, userId: string, lineId: string, text: string): Promise<CaptionLineRow> {
    const line = ownedBy(await em.findOne(CaptionLine, lineId, { populate: ['project'] }), userId, { owner: (row) => row.project.userId, notFound: 'caption.not_found' });
    line.text = text;
    await em.flush();
    return line;
  }
}
