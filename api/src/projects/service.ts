import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ownedBy } from '../accounts/ownership.ts';
import type { BillingService } from '../billing/billing-service.ts';
import { canCreateProject, maxProjects } from '../billing/tiers.ts';
import { Forbidden } from '../shared/errors.ts';
import { offsetOf, type PageRequest } from '../shared/page.ts';
import { Project, type ProjectRow } from './entities.ts';

/** Projects of a user: creation within the tier's max_projects, listing, and owner-only reads. */
export class ProjectService {
  readonly #billing: BillingService;

  constructor(deps: { billing: BillingService }) {
    this.#billing = deps.billing;
  }

  count(em: EntityManager, userId: string): Promise<number> {
    return em.count(Project, { userId });
  }

  async create(em: EntityManager, userId: string, name: string): Promise<ProjectRow> {
    return em.transactional(async (tx) => {
      // the user's row lock serialises their creations, so two at once cannot both take the last slot
      await tx.execute(`select 1 from users where id = ? for update`, [userId]);
      const tier = await this.#billing.tierOf(tx, userId);
      const count = await this.count(tx, userId);
      if (!canCreateProject(tier, count)) throw Forbidden('project.limit_reached', { params: { tier, max: maxProjects(tier) }, code: 'ProjectLimitReached' });
      return tx.create(Project, { id: randomUUID(), userId, name });
    });
  }

  async list(em: EntityManager, userId: string, page: PageRequest): Promise<{ rows: ProjectRow[]; total: number }> {
    const [rows, total] = await em.findAndCount(
      Project,
      { userId },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: page.items_per_page, offset: offsetOf(page) },
    );
    return { rows, total };
  }

  /** The caller's project; another user's answers 404 like a missing one. */
  async owned(em: EntityManager, userId: string, projectId: string): Promise<ProjectRow> {
    return ownedBy(await em.findOne(Project, { id: projectId }), userId, { notFound: 'project.not_found' });
  }
}
