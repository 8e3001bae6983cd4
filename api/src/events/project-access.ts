import type { EntityManager } from '@mikro-orm/postgresql';
import { Project } from '../projects/entities.ts';
import { Forbidden, NotFound } from '../shared/errors.ts';

/**
 * Who may follow a project's stream (spec, Authentication rule 8): its owner. Unlike the
 * project routes, another user's project is 403 here, a missing one 404.
 */
export async function authorizeProjectStream(em: EntityManager, userId: string, projectId: string): Promise<void> {
  const project = await em.findOne(Project, projectId, { fields: ['userId'] });
  if (!project) throw NotFound('project.not_found');
  if (project.userId !== userId) throw Forbidden();
}
