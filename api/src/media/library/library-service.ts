import type { EntityManager } from '@mikro-orm/postgresql';
import { ownedBy } from '../../accounts/ownership.ts';
import { MediaGroup, MediaGroupMembership } from '../../media-groups/entities.ts';
import { MediaItem, type MediaItemRow, type MediaScope } from '../entities.ts';
import { offsetOf, type PageOfRows, type PageRequest } from '../../shared/page.ts';
import type { Locale } from '../../i18n/index.ts';
import { mediaItemView, type MediaItemView } from './read-model.ts';

export interface LibraryFilters {
  scope?: MediaScope;
  scopeProjectId?: string;
  groupId?: string;
  /** Only items in no group. */
  ungrouped?: boolean;
  /** Only items whose behavior_defaults.when equals this. */
  behaviorWhen?: string;
  /** Only items whose behavior_defaults is empty. */
  unconfigured?: boolean;
}

export interface MediaItemChanges {
  displayName?: string | null;
  tags?: string[];
  behaviorDefaults?: Record<string, unknown>;
}

/** A user's media items as read models: listing with filters, one item, edits of its own fields. */
export class MediaLibrary {
  async list(em: EntityManager, userId: string, filters: LibraryFilters, request: PageRequest, locale: Locale = 'en'): Promise<PageOfRows<MediaItemView>> {
    // A group of another user answers like a missing one, not like an empty group.
    if (filters.groupId) ownedBy(await em.findOne(MediaGroup, filters.groupId), userId, { notFound: 'library.group_not_found' });
    const where = ['i.user_id = ?'];
    const params: unknown[] = [userId];
    if (filters.scope) {
      where.push('i.scope = ?');
      params.push(filters.scope);
    }
    if (filters.scopeProjectId) {
      where.push('i.scope_project_id = ?');
      params.push(filters.scopeProjectId);
    }
    if (filters.groupId) {
      where.push('exists (select 1 from media_group_memberships m where m.media_item_id = i.id and m.media_group_id = ?)');
      params.push(filters.groupId);
    }
    if (filters.ungrouped) where.push('not exists (select 1 from media_group_memberships m where m.media_item_id = i.id)');
    if (filters.behaviorWhen !== undefined) {
      where.push(`i.behavior_defaults ->> 'when' = ?`);
      params.push(filters.behaviorWhen);
    }
    if (filters.unconfigured) where.push(`i.behavior_defaults = '{}'::jsonb`);
    const connection = em.getConnection();
    const condition = where.join(' and ');
    const [counted] = await connection.execute<{ total: string }[]>(`select count(*) as total from media_items i where ${condition}`, params);
    const rows = await connection.execute<{ id: string }[]>(
      `select i.id from media_items i where ${condition} order by i.created_at desc, i.id desc limit ? offset ?`,
      [...params, request.items_per_page, offsetOf(request)],
    );
    const views = await this.#views(em, rows.map((row) => row.id), locale);
    return { rows: views, total: Number(counted?.total ?? 0) };
  }

  async get(em: EntityManager, userId: string, itemId: string, locale: Locale = 'en'): Promise<MediaItemView> {
    const item = await this.findOwned(em, userId, itemId);
    const [view] = await this.#views(em, [item.id], locale);
    return view!;
  }

  async update(em: EntityManager, userId: string, itemId: string, changes: MediaItemChanges, locale: Locale = 'en'): Promise<MediaItemView> {
    const item = await this.findOwned(em, userId, itemId);
    if (changes.displayName !== undefined) item.displayName = changes.displayName;
    if (changes.tags !== undefined) item.tags = changes.tags;
    if (changes.behaviorDefaults !== undefined) item.behaviorDefaults = changes.behaviorDefaults;
    await em.flush();
    return this.get(em, userId, itemId, locale);
  }

  /** The caller's item, or 404 (another user's item looks missing). */
  async findOwned(em: EntityManager, userId: string, itemId: string): Promise<MediaItemRow> {
    return ownedBy(await em.findOne(MediaItem, itemId), userId, { notFound: 'library.item_not_found' });
  }

  /** Read models of the given items, in the given order; failure texts in `locale`. */
  async #views(em: EntityManager, ids: string[], locale: Locale): Promise<MediaItemView[]> {
    if (ids.length === 0) return [];
    const items = await em.find(MediaItem, { id: { $in: ids } }, { populate: ['file'], refresh: true });
    const memberships = await em.find(MediaGroupMembership, { item: { $in: ids } }, { orderBy: { createdAt: 'asc' } });
    const groupsOf = new Map<string, string[]>();
    for (const membership of memberships) {
      const itemId = membership.item.id;
      groupsOf.set(itemId, [...(groupsOf.get(itemId) ?? []), membership.group.id]);
    }
    const byId = new Map(items.map((item) => [item.id, item]));
    return ids.flatMap((id) => {
      const item = byId.get(id);
      return item ? [mediaItemView(item, item.file, groupsOf.get(id) ?? [], locale)] : [];
    });
  }
}
