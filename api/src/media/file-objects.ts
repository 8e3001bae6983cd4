import type { ObjectStorage } from '../storage/storage.ts';
import type { MediaFileRow } from './entities.ts';

/** Every stored object of a file: the source, its staging object while it has one, and its artifacts. */
export function objectKeysOf(file: MediaFileRow): string[] {
  return [file.storageKey, file.uploadKey, file.thumbnailKey, file.audioKey, file.proxyKey, file.spriteKey].filter((key): key is string => Boolean(key));
}

/** Best-effort removal of objects nothing references any more (after a commit; a failure leaves garbage, never an error). */
export async function deleteObjects(storage: ObjectStorage, keys: readonly string[]): Promise<void> {
  await Promise.all(keys.map((key) => storage.delete(key).catch(() => {})));
}
