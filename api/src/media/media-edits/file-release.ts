import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { MediaFile, MediaItem } from '../entities.ts';
import { objectKeysOf } from '../file-objects.ts';

/**
 * Removes a file that no item references any more (its row now, under its row lock so a
 * concurrent new reference cannot slip in) and returns its object keys, to delete
 * once the transaction has committed. A file still referenced is left alone.
 */
export async function removeFileIfUnreferenced(tx: EntityManager, fileId: string): Promise<string[]> {
  const file = await tx.findOne(MediaFile, fileId, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!file || (await tx.count(MediaItem, { file: fileId })) > 0) return [];
  const keys = objectKeysOf(file);
  tx.remove(file);
  await tx.flush();
  return keys;
}
