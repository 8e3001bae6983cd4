import type { MediaFileRow } from './entities.ts';

/** Every stored object of a file: the source and its artifacts. */
export function objectKeysOf(file: MediaFileRow): string[] {
  return [file.storageKey, file.thumbnailKey, file.audioKey, file.proxyKey, file.spriteKey].filter((key): key is string => Boolean(key));
}
