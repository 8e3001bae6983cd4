import { randomUUID } from 'node:crypto';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { ownedBy } from '../accounts/ownership.ts';
import { MediaItem } from '../media/entities.ts';
import type { MediaLibrary } from '../media/library/library-service.ts';
import { offsetOf, type PageOfRows, type PageRequest } from '../shared/page.ts';
import { MediaGroup, MediaGroupMembership, type MediaGroupMembershipRow, type MediaGroupRow } from './entities.ts';

export interface GroupFields {
  name?: string;
  description?: string | null;
  defaultInstructions?: string | null;
  isDefault?: boolean;
  isPinned?: boolean;
  displayOrder?: number;
}

export interface GroupView {
  uuid: string;
  name: string;
  description: string | null;
  default_instructions: string | null;
  is_default: boolean;
  is_pinned: boolean;
  display_order: number;
  created_at: string;
  updated_at: string;
}

export interface MembershipView {
  media_group_id: string;
  media_item_id: string;
  created_at: string;
}

/** A user's media groups and which of their items belong to them. */
export class MediaGroups {
  readonly #library: MediaLibrary;

  constructor(library: MediaLibrary) {
    this.#library = library;
  }

  /** Pinned groups first, then by display_order, then oldest first. */
  async list(em: EntityManager, userId: string, request: PageRequest): Promise<PageOfRows<GroupView>> {
    const [rows, total] = await em.findAndCount(
      MediaGroup,
      { userId },
      { orderBy: [{ isPinned: 'desc' }, { displayOrder: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }], limit: request.items_per_page, offset: offsetOf(request) },
    );
    return { rows: rows.map(groupView), total };
  }

  async get(em: EntityManager, userId: string, groupId: string): Promise<GroupView> {
    return groupView(await this.#owned(em, userId, groupId));
  }

  async create(em: EntityManager, userId: string, fields: GroupFields & { name: string }): Promise<GroupView> {
    return em.transactional(async (tx) => {
      await lockGroupsOf(tx, userId);
      const [last] = await tx.find(MediaGroup, { userId }, { orderBy: { displayOrder: 'desc' }, limit: 1 });
      // A new group goes to the end unless the caller places it.
      const group = tx.create(MediaGroup, { id: randomUUID(), userId, name: fields.name, displayOrder: (last?.displayOrder ?? -1) + 1 });
      await applyFields(tx, group, fields);
      await tx.flush();
      return groupView(group);
    });
  }

  async update(em: EntityManager, userId: string, groupId: string, fields: GroupFields): Promise<GroupView> {
    return em.transactional(async (tx) => {
      await lockGroupsOf(tx, userId);
      const group = await this.#owned(tx, userId, groupId);
      await applyFields(tx, group, fields);
      await tx.flush();
      return groupView(group);
    });
  }

  /** The group goes; its items stay, without this membership (the foreign key cascades). */
  async delete(em: EntityManager, userId: string, groupId: string): Promise<void> {
    const group = await this.#owned(em, userId, groupId);
    await em.nativeDelete(MediaGroup, { id: group.id });
  }

  /**
   * Puts the item in the group; adding it again changes nothing. The group and the item are
   * share-locked first, so a delete of either waits for this commit (then removes the
   * membership with them) or, if it came first, this finds nothing: 404, never a foreign key error.
   */
  async addItem(em: EntityManager, userId: string, itemId: string, groupId: string): Promise<{ membership: MembershipView }> {
    return em.transactional(async (tx) => {
      const item = ownedBy(await tx.findOne(MediaItem, itemId, { lockMode: LockMode.PESSIMISTIC_READ }), userId, { notFound: 'library.item_not_found' });
      const group = ownedBy(await tx.findOne(MediaGroup, groupId, { lockMode: LockMode.PESSIMISTIC_READ }), userId, { notFound: 'library.group_not_found' });
      // Two adds racing for the same pair: the unique pair keeps one, the other reads it.
      await tx.getConnection().execute(
        'insert into media_group_memberships (id, media_group_id, media_item_id, created_at) values (?, ?, ?, ?) on conflict (media_group_id, media_item_id) do nothing',
        [randomUUID(), group.id, item.id, new Date()],
        'run',
        tx.getTransactionContext(),
      );
      const row = await tx.findOneOrFail(MediaGroupMembership, { group: group.id, item: item.id }, { refresh: true });
      return { membership: membershipView(row) };
    });
  }

  /** Takes the item out of the group: 204 also when it was not in it (the membership is absent either way). */
  async removeItem(em: EntityManager, userId: string, itemId: string, groupId: string): Promise<void> {
    const item = await this.#library.findOwned(em, userId, itemId);
    const group = await this.#owned(em, userId, groupId);
    await em.nativeDelete(MediaGroupMembership, { group: group.id, item: item.id });
  }

  /** Account deletion: the user's groups (memberships cascade). */
  async deleteAllOf(em: EntityManager, userId: string): Promise<void> {
    await em.nativeDelete(MediaGroup, { userId });
  }

  async #owned(em: EntityManager, userId: string, groupId: string): Promise<MediaGroupRow> {
    return ownedBy(await em.findOne(MediaGroup, groupId), userId, { notFound: 'library.group_not_found' });
  }
}

/** Serialises changes to one user's groups, so two requests cannot both leave a default. */
async function lockGroupsOf(em: EntityManager, userId: string): Promise<void> {
  await em.getConnection().execute(`select pg_advisory_xact_lock(hashtext('media_groups:' || ?))`, [userId], 'all', em.getTransactionContext());
}

async function applyFields(em: EntityManager, group: MediaGroupRow, fields: GroupFields): Promise<void> {
  if (fields.name !== undefined) group.name = fields.name;
  if (fields.description !== undefined) group.description = fields.description;
  if (fields.defaultInstructions !== undefined) group.defaultInstructions = fields.defaultInstructions;
  if (fields.isPinned !== undefined) group.isPinned = fields.isPinned;
  if (fields.displayOrder !== undefined) group.displayOrder = fields.displayOrder;
  if (fields.isDefault !== undefined) {
    // At most one default per user: choosing one clears the others.
    if (fields.isDefault) await em.nativeUpdate(MediaGroup, { userId: group.userId, isDefault: true, id: { $ne: group.id } }, { isDefault: false });
    group.isDefault = fields.isDefault;
  }
}

function groupView(group: MediaGroupRow): GroupView {
  return {
    uuid: group.id,
    name: group.name,
    description: group.description ?? null,
    default_instructions: group.defaultInstructions ?? null,
    is_default: group.isDefault,
    is_pinned: group.isPinned,
    display_order: group.displayOrder,
    created_at: group.createdAt.toISOString(),
    updated_at: group.updatedAt.toISOString(),
  };
}

function membershipView(membership: MediaGroupMembershipRow): MembershipView {
  return { media_group_id: membership.group.id, media_item_id: membership.item.id, created_at: membership.createdAt.toISOString() };
}
