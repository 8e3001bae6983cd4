import { defineEntity, p } from '@mikro-orm/core';
import { Project } from '../projects/entities.ts';
import { MediaItem } from '../media/entities.ts';

export const canvasTypes = ['SINGLE', 'SPLIT', 'TALKING_HEAD', 'INSERT', 'GRID'] as const;
export type CanvasType = (typeof canvasTypes)[number];
export const canvasMediaRoles = ['CANVAS_FILL', 'CO_STAR', 'INSERT_ASSET'] as const;

/**
 * A composition tile over source time in a project's timeline, ordered by
 * sequence_position. Only the structural editor creates or changes canvases.
 */
export const Canvas = defineEntity({
  name: 'Canvas',
  tableName: 'canvases',
  properties: {
    id: p.uuid().primary(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    type: p.enum([...canvasTypes]),
    sequencePosition: p.integer(),
    params: p.json<Record<string, unknown>>().onCreate(() => ({})),
    crop: p.json<Record<string, unknown>>().nullable(),
    aspect: p.string().length(16).nullable(),
    letterbox: p.json<Record<string, unknown>>().nullable(),
    flags: p.json<Record<string, boolean>>().onCreate(() => ({})),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
  indexes: [{ properties: ['project', 'sequencePosition'] }],
});

export type CanvasRow = InstanceType<typeof Canvas.class>;

/** The media a canvas shows, by role; a SINGLE canvas has one CANVAS_FILL item. */
export const CanvasMedia = defineEntity({
  name: 'CanvasMedia',
  tableName: 'canvas_media',
  properties: {
    id: p.uuid().primary(),
    canvas: () => p.manyToOne(Canvas).deleteRule('cascade').index(),
    item: () => p.manyToOne(MediaItem).fieldName('media_item_id').deleteRule('cascade').index(),
    role: p.enum([...canvasMediaRoles]),
  },
  uniques: [{ properties: ['canvas', 'role', 'item'] }],
});

export type CanvasMediaRow = InstanceType<typeof CanvasMedia.class>;
