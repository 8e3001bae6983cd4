import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { chargeStorage, refundStorage } from '../../accounts/storage-usage.ts';
import type { BillingService } from '../../billing/billing-service.ts';
import { removeItemCanvases } from '../../canvases/spine.ts';
import { settlementOf, type AfterCommit, type CompletionHandler, type JobFailed } from '../../jobs/completion.ts';
import { artifactCompletion, type ArtifactLoaded } from '../artifact-completion.ts';
import { MediaFile, MediaItem, type MediaFileRow, type MediaItemRow } from '../entities.ts';
import { deleteObjects } from '../file-objects.ts';
import { failureColumns, failureTextsForOwners } from '../failure-events.ts';
import { removeFileIfUnreferenced } from './file-release.ts';

type ArtifactDeps = Parameters<typeof artifactCompletion>[0];

/** The artifact completion's deps and the services' billing, whose plans (and clock) decide the quota. */
export type ProducedMediaDeps = ArtifactDeps & { billing: BillingService };

/** What the media-edit and media-import programs return: the stored object and the artifact program's description of it. */
const producedResultSchema = z.object({
  output_key: z.string().min(1),
  size_bytes: z.number().int().min(0),
  content_type: z.string().min(1),
  artifact: z.record(z.string(), z.unknown()),
});

const bookkeepingSchema = z.object({ replaceItemId: z.uuid().optional() }).loose();

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

/**
 * Settles jobs that produce a new stored file (media-edit, media-import): the produced
 * object becomes the file's object, its size is charged to the job's user (over quota:
 * FAILED, objects deleted, media_failed), then the artifact completion records the
 * metadata and sends media_ready. For an edit with save_mode replace, the item is
 * repointed at the new file only now, and the file it leaves goes if that was its last item.
 */
export function producedMediaCompletion(deps: ProducedMediaDeps): CompletionHandler<ArtifactLoaded | undefined> {
  const artifacts = artifactCompletion(deps);
  const { billing } = deps;

  return {
    async load(job, raw) {
      const parsed = producedResultSchema.safeParse(raw);
      return parsed.success ? artifacts.load!(job, parsed.data.artifact) : undefined;
    },

    async succeeded(em, job, raw, loaded) {
      const parsed = producedResultSchema.safeParse(raw);
      if (!parsed.success) return this.failed(em, job, { error: `The job returned an unreadable result: ${z.prettifyError(parsed.error)}` });
      const result = parsed.data;
      const { replaceItemId } = bookkeepingSchema.parse(job.input);
      if (!job.mediaFileId) return;
      const file = await em.findOne(MediaFile, job.mediaFileId, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const producedKeys = [result.output_key, ...artifactKeys(result.artifact)];
      const deleteProduced = () => deleteObjects(deps.storage, producedKeys);
      if (!file) return deleteProduced; // deleted while the job ran

      const replaced = replaceItemId ? await em.findOne(MediaItem, replaceItemId) : null;
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
        const failed = await settleFailure(em, file, replaced, { error, code: 'edit.quota_exceeded', params });
        return async () => {
          await failed();
          await deleteProduced();
        };
      }

      file.storageKey = result.output_key;
      file.sizeBytes = result.size_bytes;
      file.declaredSizeBytes = result.size_bytes;
      let releasedKeys: string[] = [];
      if (replaced) {
        const previous = replaced.file.id;
        await refundStorage(em, replaced.userId, replaced.chargedBytes);
        replaced.file = file;
        replaced.chargedBytes = result.size_bytes;
        await em.flush();
        releasedKeys = await removeFileIfUnreferenced(em, previous);
      }
      const dropped = replaced ? null : await chargeItems(em, file.id, job.userId, result.size_bytes);
      await em.flush();
      const ready = settlementOf(await artifacts.succeeded(em, job, result.artifact, loaded));
      return {
        ...ready,
        afterCommit: async () => {
          if (dropped) await dropped();
          if (ready.afterCommit) await ready.afterCommit();
          await deleteObjects(deps.storage, releasedKeys);
        },
      };
    },

    async failed(em, job, failure) {
      const { replaceItemId } = bookkeepingSchema.parse(job.input);
      if (!replaceItemId) return artifacts.failed(em, job, failure);
      if (!job.mediaFileId) return;
      const file = await em.findOne(MediaFile, job.mediaFileId, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!file) return;
      return settleFailure(em, file, await em.findOne(MediaItem, replaceItemId), failure);
    },
  };

  /**
   * The item made with the file takes the charge made above; items deduplicated onto it
   * while it was processing (imports) are charged to their owners now, as a second
   * uploader of identical content is. One that does not fit its owner's quota is removed
   * (with its canvas) and its owner hears media_failed after the commit.
   */
  async function chargeItems(em: EntityManager, fileId: string, jobUserId: string, size: number): Promise<AfterCommit> {
    const uncharged = await em.find(MediaItem, { file: fileId, chargedBytes: 0 }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    const producing = uncharged.find((item) => item.userId === jobUserId);
    // the job's own item was deleted while it ran: nothing holds the charge made for it
    if (producing) producing.chargedBytes = size;
    else await refundStorage(em, jobUserId, size);
    const refused: { item: MediaItemRow; failure: JobFailed }[] = [];
    for (const item of uncharged.filter((candidate) => candidate !== producing)) {
      const quota = (await billing.limitsOf(em, item.userId)).storageQuotaBytes;
      if (await chargeStorage(em, item.userId, size, quota)) {
        item.chargedBytes = size;
        continue;
      }
      if (item.scope === 'project' && item.scopeProjectId) await removeItemCanvases(em, item.id, item.scopeProjectId);
      em.remove(item);
      const params = { size_mb: mb(size), quota_mb: mb(quota) };
      const error = `The video (${params.size_mb} MB) does not fit in your storage quota (${params.quota_mb} MB); free some space and import it again.`;
      refused.push({ item, failure: { error, code: 'import.quota_exceeded', params } });
    }
    await em.flush();
    const texts = await Promise.all(refused.map(({ item, failure }) => failureTextsForOwners(em, [item.userId], failure).then((textFor) => textFor(item.userId))));
    return async () => {
      for (const [index, { item }] of refused.entries()) {
        await deps.bus.publishToUser(item.userId, {
          type: 'media_failed',
          data: { media_file_uuid: fileId, media_item_uuid: item.id, display_name: item.displayName ?? null, error: texts[index]! },
        });
      }
    };
  }

  /**
   * A copy's file stays FAILED with its item (the user sees why); a replace's file had
   * no item yet, so it goes and the replaced item, still on its old file, hears media_failed.
   */
  async function settleFailure(em: EntityManager, file: MediaFileRow, replaced: MediaItemRow | null, failure: JobFailed): Promise<AfterCommit> {
    const items = replaced ? [replaced] : await em.find(MediaItem, { file: file.id });
    const fileId = file.id;
    if (replaced) {
      em.remove(file);
      await em.flush();
    } else {
      em.assign(file, { status: 'FAILED', ...failureColumns(failure) });
      await em.flush();
    }
    const textFor = await failureTextsForOwners(em, items.map((item) => item.userId), failure);
    return async () => {
      for (const item of items) {
        await deps.bus.publishToUser(item.userId, {
          type: 'media_failed',
          data: { media_file_uuid: fileId, media_item_uuid: item.id, display_name: item.displayName ?? null, error: textFor(item.userId) },
        });
      }
    };
  }
}

function artifactKeys(artifact: Record<string, unknown>): string[] {
  const keys = artifact.artifacts;
  if (!keys || typeof keys !== 'object') return [];
  return Object.values(keys).filter((key): key is string => typeof key === 'string');
}

