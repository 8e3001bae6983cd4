import { defineEntity, p } from '@mikro-orm/core';
import { MediaItem } from '../media/entities.ts';

/** A user's named collection of media items; at most one per user is the default. */
export const MediaGroup = defineEntity({
  name: 'MediaGroup',
  tableName: 'media_groups',
  properties: {
    id: p.uuid().primary(),
    userId: p.uuid().index(),
    name: p.string().length(200),
    description: p.text().nullable(),
    defaultInstructions: p.text().nullable(),
    isDefault: p.boolean().default(false),
    isPinned: p.boolean().default(false),
    displayOrder: p.integer().default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export type MediaGroupRow = InstanceType<typeof MediaGroup.class>;

/** An item's place in a group; removing either side removes the membership. */
export const MediaGroupMembership = defineEntity({
  name: 'MediaGroupMembership',
  tableName: 'media_group_memberships',
  properties: {
    id: p.uuid().primary(),
    group: () => p.manyToOne(MediaGroup).fieldName('media_group_id').deleteRule('cascade').index(),
    item: () => p.manyToOne(MediaItem).fieldName('media_item_id').deleteRule('cascade').index(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ properties: ['group', 'item'] }],
});

export type MediaGroupMembershipRow = InstanceType<typeof MediaGroupMembership.class>;
