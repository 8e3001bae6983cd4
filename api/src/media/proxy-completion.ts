import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { CompletionHandler } from '../jobs/completion.ts';
import type { JobRow } from '../jobs/entities.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import { MediaFile } from './entities.ts';
import { deleteObjects } from './file-objects.ts';

/**
 * Settles proxy jobs: the file's proxy and sprite become playable (proxy_status ready).
 * A failed proxy leaves the file UPLOADED with proxy_status unknown: the source still plays.
 * A file deleted in the meantime has nothing left to settle: the job's outputs are removed.
 */
export function proxyCompletion(deps: { logger: Logger; storage: ObjectStorage }): CompletionHandler<'proxy'> {
  async function markUnknown(em: EntityManager, job: JobRow, error: string): Promise<void> {
    deps.logger.warn({ job_id: job.id, media_file_id: job.mediaFileId, error }, 'proxy job failed; the file plays from its source');
    if (!job.mediaFileId) return;
    await em.nativeUpdate(MediaFile, { id: job.mediaFileId }, { proxyStatus: 'unknown' });
  }

  return {
    async succeeded(em, job, result) {
      if (!job.mediaFileId) return;
      const file = await em.findOne(MediaFile, job.mediaFileId, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const { proxy_key, sprite_key, sprite } = result;
      // the file's delete ran before these existed, so nothing else will remove them
      if (!file) return () => deleteObjects(deps.storage, [proxy_key, sprite_key]);
      em.assign(file, { proxyKey: proxy_key, spriteKey: sprite_key, sprite, proxyStatus: 'ready' });
      await em.flush();
    },
    failed: (em, job, failure) => markUnknown(em, job, failure.error),
  };
}
