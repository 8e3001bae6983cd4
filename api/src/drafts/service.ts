import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ownedBy } from '../accounts/ownership.ts';
import type { ProjectService } from '../projects/service.ts';
import { Invalid } from '../shared/errors.ts';
import { assertWithinTimeline, projectTimeline } from '../timeline/project-timeline.ts';
import type { EditOverrides } from '../timeline/timeline.ts';
import { Draft, type DraftRow } from './entities.ts';
import type { DraftCreateInput, DraftPatchInput } from './schemas.ts';

/**
 * Drafts of a project: saved on its active run, listed newest first (all of them, or one
 * run's plus the run-less ones), their overrides checked against the timeline (api.md
 * "Draft validation").
 */
export class DraftService {
  readonly #projects: ProjectService;

  constructor(deps: { projects: ProjectService }) {
    this.#projects = deps.projects;
  }

  /** Every draft of the project, newest first; with a run, that run's and those saved before any analysis. */
  async list(em: EntityManager, userId: string, projectId: string, runId: string | undefined): Promise<DraftRow[]> {
    await this.#projects.owned(em, userId, projectId);
    const runFilter = runId ? { $or: [{ runId }, { runId: null }] } : {};
    return em.find(Draft, { project: projectId, ...runFilter }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  }

  async create(em: EntityManager, userId: string, projectId: string, input: DraftCreateInput): Promise<DraftRow> {
    const project = await this.#projects.owned(em, userId, projectId);
    await checkEditOverrides(em, project.id, input.edit_overrides);
    const draft = em.create(Draft, {
      id: randomUUID(),
      project,
      runId: project.activeRunId ?? null,
      name: input.name,
      editOverrides: input.edit_overrides,
      exportSettings: input.export_settings,
    });
    await em.flush();
    return draft;
  }

  async get(em: EntityManager, userId: string, draftId: string): Promise<DraftRow> {
    return this.#owned(em, userId, draftId);
  }

  /** Each field given replaces the draft's; the run it was saved on stays. */
  async update(em: EntityManager, userId: string, draftId: string, patch: DraftPatchInput): Promise<DraftRow> {
    const draft = await this.#owned(em, userId, draftId);
    if (patch.edit_overrides) await checkEditOverrides(em, draft.project.id, patch.edit_overrides);
    em.assign(draft, {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.edit_overrides ? { editOverrides: patch.edit_overrides } : {}),
      ...(patch.export_settings ? { exportSettings: patch.export_settings } : {}),
    });
    await em.flush();
    return draft;
  }

  async #owned(em: EntityManager, userId: string, draftId: string): Promise<DraftRow> {
    const draft = await em.findOne(Draft, draftId, { populate: ['project'] });
    return ownedBy(draft, userId, { owner: (found) => found.project.userId, notFound: 'drafts.not_found' });
  }
}

/**
 * A draft's or an inline export's overrides (api.md "Draft validation"): end_ms <= start_ms
 * when both are given → 422; then 400 for a project with no media, whatever the overrides
 * (none, or only toggles: a draft of nothing cannot be exported), and every start_ms and
 * end_ms, each on its own, within the timeline.
 */
export async function checkEditOverrides(em: EntityManager, projectId: string, overrides: EditOverrides): Promise<void> {
  const entries = Object.entries(overrides);
  for (const [editId, { start_ms, end_ms }] of entries) {
    if (start_ms !== undefined && end_ms !== undefined && end_ms <= start_ms) {
      throw Invalid('drafts.end_before_start', { code: 'ValidationError', params: { edit_uuid: editId, start_ms, end_ms } });
    }
  }
  const times = entries.flatMap(([editId, override]) =>
    (['start_ms', 'end_ms'] as const).map((field) => ({ field: `edit_overrides.${editId}.${field}`, ms: override[field] })).filter((value) => value.ms !== undefined),
  );
  assertWithinTimeline(await projectTimeline(em, projectId), times);
}
