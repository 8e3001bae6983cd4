import type { EntityManager } from '@mikro-orm/postgresql';
import type { ObjectStorage } from '../storage/storage.ts';

interface StoredObject {
  key: string;
  size: number;
}

/** What the store holds that no row accounts for: nobody is charged for these bytes. */
export interface Reconciliation {
  objects: number;
  bytes: number;
  unaccounted: StoredObject[];
  unaccountedBytes: number;
}

/**
 * Walks the bucket and matches every object against the rows that account for it: a media
 * file's objects (source, staging, artifacts) and everything under a job's output prefix.
 * Used by `hack/storage-reconcile.ts`; the upload sweep keeps the answer at zero.
 */
export async function reconcileStorage(em: EntityManager, storage: ObjectStorage): Promise<Reconciliation> {
  const fileKeys = await em.getConnection().execute<{ key: string }[]>(
    `select unnest(array[storage_key, upload_key, thumbnail_key, audio_key, proxy_key, sprite_key]) as key from media_files`,
  );
  const keys = new Set(fileKeys.map((row) => row.key).filter(Boolean));
  const prefixes = new Set((await em.getConnection().execute<{ output_prefix: string }[]>(`select output_prefix from jobs`)).map((row) => row.output_prefix));
  const underJob = (key: string) => {
    for (let slash = key.lastIndexOf('/'); slash > 0; slash = key.lastIndexOf('/', slash - 1)) {
      if (prefixes.has(key.slice(0, slash))) return true;
    }
    return false;
  };
  const report: Reconciliation = { objects: 0, bytes: 0, unaccounted: [], unaccountedBytes: 0 };
  for await (const object of storage.listObjects('')) {
    report.objects += 1;
    report.bytes += object.size;
    if (keys.has(object.key) || underJob(object.key)) continue;
    report.unaccounted.push(object);
    report.unaccountedBytes += object.size;
  }
  return report;
}
