import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { appendSingleCanvas } from '../canvases/spine.ts';
import { MediaItem, type MediaFileRow, type MediaItemRow, type MediaScope } from './entities.ts';

export interface NewMediaItem {
  userId: string;
  file: MediaFileRow;
  scope: MediaScope;
  scopeProjectId?: string | null | undefined;
  displayName?: string | null | undefined;
  tags?: string[] | undefined;
  chargedBytes?: number;
}

/**
 * A user's new reference to a file; a project item also gets its SINGLE canvas at the
 * end of the project's spine. Runs in the caller's transaction.
 */
export async function placeMediaItem(tx: EntityManager, fields: NewMediaItem): Promise<MediaItemRow> {
  const item = tx.create(MediaItem, {
    id: randomUUID(),
    userId: fields.userId,
    file: fields.file,
    scope: fields.scope,
    scopeProjectId: fields.scopeProjectId ?? null,
    displayName: fields.displayName ?? null,
    tags: fields.tags ?? [],
    ...(fields.chargedBytes !== undefined ? { chargedBytes: fields.chargedBytes } : {}),
  });
  await tx.flush();
  if (fields.scopeProjectId) await appendSingleCanvas(tx, fields.scopeProjectId, item.id);
  return item;
}
