import { z } from 'zod';
import type { PageRequest } from '../shared/page.ts';

const MAX_ITEMS_PER_PAGE = 100;

/** `page` (from 1) and `items_per_page` (bounded) of every list endpoint. */
export const pageQuery = {
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  items_per_page: z.coerce.number().int().min(1).max(MAX_ITEMS_PER_PAGE).default(20),
};

export type { PageRequest } from '../shared/page.ts';

export interface Page<T> {
  data: T[];
  total_count: number;
  has_more: boolean;
  page: number;
  items_per_page: number;
}

export function pageOf<T>(data: T[], total: number, request: PageRequest): Page<T> {
  return {
    data,
    total_count: total,
    has_more: request.page * request.items_per_page < total,
    page: request.page,
    items_per_page: request.items_per_page,
  };
}

/** The envelope's schema around an item schema, for the OpenAPI document (named when `id` is given). */
export function pageSchema<T extends z.ZodType>(item: T, id?: string) {
  const schema = z.object({
    data: z.array(item),
    total_count: z.number().int(),
    has_more: z.boolean(),
    page: z.number().int(),
    items_per_page: z.number().int(),
  });
  return id ? schema.meta({ id }) : schema;
}

/**
 * A whole list in the `data` envelope of every list endpoint, for the lists the contract
 * gives no page parameters (a project's edits, drafts, runs, canvases and spine; presets):
 * a client reads `data` from both kinds alike.
 */
export function listOf<T>(data: T[]): { data: T[] } {
  return { data };
}

/** The schema of listOf around an item schema. */
export function listSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item).describe('Every item; this list is not paginated.') });
}
