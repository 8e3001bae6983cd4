import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import type { ProducedMediaResult } from '../../../../crds/contract/programs/media-edit.ts';
import { chargeStorage, refundStorage } from '../../accounts/storage-usage.ts';
import type { BillingService } from '../../billing/billing-service.ts';
import { removeItemCanvases } from '../../canvases/spine.ts';
import { settlementOf, type CompletionHandler, type JobFailed, type Settlement } from '../../jobs/completion.ts';
import type { OutcomeEvent } from '../../events/bus.ts';
import type { JobRow } from '../../jobs/entities.ts';
import { subjectOf } from '../../jobs/subjects.ts';
import { artifactCompletion, failedEvent, type ArtifactLoaded } from '../artifact-completion.ts';
import { MediaFile, MediaItem, type MediaFileRow, type MediaItemRow } from '../entities.ts';
import { deleteObjects } from '../file-objects.ts';
import { failureColumns, failureTextsForOwners } from '../failure-events.ts';
import { removeFileIfUnreferenced } from './file-release.ts';

type ArtifactDeps = Parameters<typeof artifactCompletion>[0];

/** The artifact completion's deps and the services' billing, whose plans (and clock) decide the quota. */
export type ProducedMediaDeps = ArtifactDeps & { billing: BillingService };

/** The item a media edit with save_mode replace repoints (the job's subject); none for copies and imports. */
function replaceItemIdOf(job: JobRow): string | undefined {
  return job.program === 'media-edit' ? subjectOf(job) : undefined;
}

/**
 * Items are read outside the identity map and written with single statements: the
 * artifact completion this hands over to folds identical content onto the file stored
 * first with a native update of the items, so an item left managed here would still
 * point at the folded-away file, and the next flush would write that (a not-null
 * violation on media_items.media_file_id that failed the job at every retry).
 */
const unmanaged = { disableIdentityMap: true } as const;

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

/**
 * Settles jobs that produce a new stored file (media-edit, media-import): the produced
 * object becomes the file's object, its size is charged to the job's user (over quota:
 * FAILED, objects deleted, media_failed), then the artifact completion records the
 * metadata and sends media_ready. For an edit with save_mode replace, the item is
 * repointed at the new file only now, and the file it leaves goes if that was its last item.
 */
export function producedMediaCompletion(deps: ProducedMediaDeps): CompletionHandler<'media-edit' | 'media-import', ArtifactLoaded> {
  const artifacts = artifactCompletion(deps);
  const { billing } = deps;

  return {
    load: (job, result) => artifacts.load(job, result.artifact),

    async succeeded(em, job, result, loaded) {
      const replaceItemId = replaceItemIdOf(job);
      if (!job.mediaFileId) return;
      const file = await em.findOne(MediaFile, job.mediaFileId, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const producedKeys = [result.output_key, ...artifactKeys(result)];
      const deleteProduced = () => deleteObjects(deps.storage, producedKeys);
      if (!file) {
        // deleted while the job ran (a replace's file by the stale-upload sweep): its item no longer waits for it
        if (replaceItemId) await clearPending(em, replaceItemId, job.mediaFileId);
        return deleteProduced;
      }

      const replaced = replaceItemId ? await lockReplaced(em, replaceItemId) : null;
      if (replaceItemId && !replaced) {
        // The item to replace was deleted meanwhile: the edit has nobody to serve.
        em.remove(file);
        await em.flush();
        return deleteProduced;
      }
      const quota = (await billing.limitsOf(em, job.userId)).storageQuotaBytes;
      if (!(await chargeStorage(em, job.userId, result.size_bytes, quota))) {
        const params = { size_mb: mb(result.size_bytes), quota_mb: mb(quota) };
        const error = `The result (${params.size_mb} MB) does not fit in your storage quota (${params.quota_mb} MB); free some space and try again.`;
        return { ...(await settleFailure(em, file, replaced, { error, code: 'edit.quota_exceeded', params })), afterCommit: deleteProduced };
      }

      file.storageKey = result.output_key;
      file.sizeBytes = result.size_bytes;
      file.declaredSizeBytes = result.size_bytes;
      await em.flush();
      let releasedKeys: string[] = [];
      if (replaced) {
        await refundStorage(em, replaced.userId, replaced.chargedBytes);
        // the item now plays what the edit made: what it was uploaded as no longer applies
        await em.nativeUpdate(MediaItem, { id: replaced.id }, { file: file.id, chargedBytes: result.size_bytes, uploadedFileId: null, uploadedFilename: null });
        await clearPending(em, replaced.id, file.id);
        releasedKeys = await removeFileIfUnreferenced(em, replaced.file.id);
      }
      const dropped = replaced ? null : await chargeItems(em, file.id, job.userId, result.size_bytes);
      const ready = settlementOf(await artifacts.succeeded(em, job, result.artifact, loaded));
      return {
        ...ready,
        events: [...(dropped ?? []), ...(ready.events ?? [])],
        afterCommit: async () => {
          if (ready.afterCommit) await ready.afterCommit();
          await deleteObjects(deps.storage, releasedKeys);
        },
      };
    },

    async failed(em, job, failure) {
      const replaceItemId = replaceItemIdOf(job);
      if (!replaceItemId) return artifacts.failed(em, job, failure);
      if (!job.mediaFileId) return;
      const file = await em.findOne(MediaFile, job.mediaFileId, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!file) return clearPending(em, replaceItemId, job.mediaFileId);
      return settleFailure(em, file, await em.findOne(MediaItem, replaceItemId, unmanaged), failure);
    },
  };

  /**
   * The item made with the file takes the charge made above; items deduplicated onto it
   * while it was processing (imports) are charged to their owners now, as a second
   * uploader of identical content is. One that does not fit its owner's quota is removed
   * (with its canvas) and its owner hears media_failed after the commit.
   */
  async function chargeItems(em: EntityManager, fileId: string, jobUserId: string, size: number): Promise<OutcomeEvent[]> {
    const uncharged = await em.find(MediaItem, { file: fileId, chargedBytes: 0 }, { orderBy: { createdAt: 'asc', id: 'asc' }, ...unmanaged });
    const producing = uncharged.find((item) => item.userId === jobUserId);
    // the job's own item was deleted while it ran: nothing holds the charge made for it
    if (producing) await em.nativeUpdate(MediaItem, { id: producing.id }, { chargedBytes: size });
    else await refundStorage(em, jobUserId, size);
    const refused: { item: MediaItemRow; failure: JobFailed }[] = [];
    for (const item of uncharged.filter((candidate) => candidate !== producing)) {
      const quota = (await billing.limitsOf(em, item.userId)).storageQuotaBytes;
      if (await chargeStorage(em, item.userId, size, quota)) {
        await em.nativeUpdate(MediaItem, { id: item.id }, { chargedBytes: size });
        continue;
      }
      if (item.scope === 'project' && item.scopeProjectId) await removeItemCanvases(em, item.id, item.scopeProjectId);
      await em.nativeDelete(MediaItem, { id: item.id });
      const params = { size_mb: mb(size), quota_mb: mb(quota) };
      const error = `The video (${params.size_mb} MB) does not fit in your storage quota (${params.quota_mb} MB); free some space and import it again.`;
      refused.push({ item, failure: { error, code: 'import.quota_exceeded', params } });
    }
    const texts = await Promise.all(refused.map(({ item, failure }) => failureTextsForOwners(em, [item.userId], failure).then((textFor) => textFor(item.userId))));
    return refused.map(({ item }, index) => failedEvent(item, fileId, texts[index]!));
  }

  /**
   * A copy's file stays FAILED with its item (the user sees why); a replace's file had
   * no item yet, so it goes and the replaced item, still on its old file and no longer
   * pending, hears media_failed.
   */
  async function settleFailure(em: EntityManager, file: MediaFileRow, replaced: MediaItemRow | null, failure: JobFailed): Promise<Settlement> {
    const items = replaced ? [replaced] : await em.find(MediaItem, { file: file.id }, unmanaged);
    const fileId = file.id;
    if (replaced) {
      await clearPending(em, replaced.id, fileId);
      em.remove(file);
    } else {
      em.assign(file, { status: 'FAILED', ...failureColumns(failure) });
    }
    await em.flush();
    const textFor = await failureTextsForOwners(em, items.map((item) => item.userId), failure);
    return { events: items.map((item) => failedEvent(item, fileId, textFor(item.userId))) };
  }
}

/**
 * The item a replace repoints, read under its current file's row lock, taken in the order
 * an item's delete takes them (file, then item): a concurrent delete either ends before
 * (null: nobody to serve) or sees the item repointed, so its refund is the charge made here.
 */
async function lockReplaced(em: EntityManager, itemId: string): Promise<MediaItemRow | null> {
  for (;;) {
    const item = await em.findOne(MediaItem, itemId, unmanaged);
    if (!item) return null;
    await em.findOne(MediaFile, item.file.id, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const locked = await em.findOne(MediaItem, itemId, unmanaged);
    if (!locked || locked.file.id === item.file.id) return locked;
  }
}

/** The replace has ended (repointed, or failed): the item no longer reads pending, unless a later replace made it so. */
async function clearPending(em: EntityManager, itemId: string, fileId: string): Promise<void> {
  await em.nativeUpdate(MediaItem, { id: itemId, pendingFileId: fileId }, { pendingFileId: null });
}

function artifactKeys(result: ProducedMediaResult): string[] {
  return Object.values(result.artifact.artifacts).filter((key): key is string => key !== null);
}
