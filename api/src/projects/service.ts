import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ownedBy } from '../accounts/ownership.ts';
import type { BillingService } from '../billing/billing-service.ts';
import { maxProjects } from '../billing/tiers.ts';
import { query, statement, transaction, type Database } from '../db/statements.ts';
import { Forbidden } from '../shared/errors.ts';
import { offsetOf, type PageRequest } from '../shared/page.ts';
import { Project, type ProjectRow, type ProjectStatus } from './entities.ts';

/** A projects row as the prepared statements read it. */
interface ProjectRecord {
  id: string;
  user_id: string;
  name: string;
  status: ProjectStatus;
  settings: Record<string, unknown>;
  transcript: Record<string, unknown> | null;
  active_run_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const COUNT = statement<{ count: string }>('projects.count', 'select count(*) as count from projects where user_id = ?');

// One round trip for a page and the total; a page past the end has no row to carry the total, so COUNT answers then.
const PAGE = statement<ProjectRecord & { total: string }>(
  'projects.page',
  `select id, user_id, name, status, settings, transcript, active_run_id, created_at, updated_at, count(*) over () as total
     from projects where user_id = ? order by created_at desc, id desc limit ? offset ?`,
);

const LOCK_USER = statement<{ locked: number }>('projects.lock_user', 'select 1 as locked from users where id = ? for update');

// Inserts only while the user's count is under the limit (null: no limit); no row back means the limit is reached.
const INSERT_WITHIN_LIMIT = statement<{ id: string }>(
  'projects.insert_within_limit',
  `insert into projects (id, user_id, name, status, settings, created_at, updated_at)
     select ?, ?, ?, 'created', '{}', ?, ?
     where ?::int is null or (select count(*) from projects where user_id = ?) < ?::int
     returning id`,
);

/** Projects of a user: creation within the tier's max_projects, listing, and owner-only reads. */
export class ProjectService {
  readonly #billing: BillingService;

  constructor(deps: { billing: BillingService }) {
    this.#billing = deps.billing;
  }

  /** In a transaction of `database` when it is in one (billing's status reads it there too). */
  async count(database: Database, userId: string): Promise<number> {
    const [row] = await query(database, COUNT, [userId]);
    return Number(row?.count ?? 0);
  }

  /**
   * A new project, if the tier's max_projects allows it. The user's row lock serialises
   * their creations, so two at once cannot both take the last slot; only SQL runs while
   * it is held (the tier is read before).
   */
  async create(em: EntityManager, userId: string, name: string): Promise<ProjectRow> {
    const tier = await this.#billing.tierOf(em, userId);
    const limit = Number.isFinite(maxProjects(tier)) ? maxProjects(tier) : null;
    const now = new Date();
    const id = randomUUID();
    const inserted = await transaction(em, async (run) => {
      await run(LOCK_USER, [userId]);
      return (await run(INSERT_WITHIN_LIMIT, [id, userId, name, now, now, limit, userId, limit])).length > 0;
    });
    if (!inserted) throw Forbidden('project.limit_reached', { params: { tier, max: maxProjects(tier) }, code: 'ProjectLimitReached' });
    return { id, userId, name, status: 'created', settings: {}, transcript: null, activeRunId: null, createdAt: now, updatedAt: now } as ProjectRow;
  }

  async list(database: Database, userId: string, page: PageRequest): Promise<{ rows: ProjectRow[]; total: number }> {
    const records = await query(database, PAGE, [userId, page.items_per_page, offsetOf(page)]);
    const total = records[0] ? Number(records[0].total) : await this.count(database, userId);
    return { rows: records.map(projectOf), total };
  }

  /** The caller's project; another user's answers 404 like a missing one. */
  async owned(em: EntityManager, userId: string, projectId: string): Promise<ProjectRow> {
    return ownedBy(await em.findOne(Project, { id: projectId }), userId, { notFound: 'project.not_found' });
  }
}

function projectOf(record: ProjectRecord): ProjectRow {
  return {
    id: record.id,
    userId: record.user_id,
    name: record.name,
    status: record.status,
    settings: record.settings,
    transcript: record.transcript,
    activeRunId: record.active_run_id,
    createdAt: record.created_at,
    updatedAt: record.updated_at,
  } as ProjectRow;
}
