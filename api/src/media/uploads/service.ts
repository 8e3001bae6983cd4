import { randomUUID } from 'node:crypto';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { ownedBy } from '../../accounts/ownership.ts';
import { chargeStorage, refundStorage, storageUsed } from '../../accounts/storage-usage.ts';
import type { BillingService } from '../../billing/billing-service.ts';
import { removeItemCanvases } from '../../canvases/spine.ts';
import { placeMediaItem } from '../items.ts';
import { InvalidInput, Conflict, NotFound, Invalid } from '../../shared/errors.ts';
import type { JobService } from '../../jobs/service.ts';
import { releaseWaitingJobs } from '../../jobs/requests.ts';
import type { ProjectService } from '../../projects/service.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ObjectStorage } from '../../storage/storage.ts';
import { objectKeysOf } from '../file-objects.ts';
import { MediaFile, MediaItem, type MediaFileRow, type MediaFileStatus, type MediaItemRow } from '../entities.ts';
import { allowedContentTypes, isPlainFilename, normalizeContentType } from './content-types.ts';
import { PartsRejected, type MultipartStore, type UploadedPart } from './multipart-store.ts';
import type { UploadInput } from './schemas.ts';

const MiB = 1024 * 1024;
/** Lifetimes and batch sizes of the spec's Limits table. */
const SINGLE_PUT_URL_SECONDS = 3600;
const PART_URL_SECONDS = 7200;
const INITIAL_PART_URLS = 50;
/** Uploads one user may have started and not finished (presigned, or multipart initiated). */
const MAX_UNFINISHED_UPLOADS = 10;
/** A single PUT not confirmed this long after its URL expired is swept: nothing can write it any more. */
const SINGLE_PUT_SWEEP_GRACE_SECONDS = 15 * 60;

interface UploadLimits {
  maxUploadBytes: number;
  multipartCutoffBytes: number;
  partSizeBytes: number;
  maxParts: number;
  staleHours: number;
}

export interface UploadDeps {
  storage: ObjectStorage;
  store: MultipartStore;
  billing: BillingService;
  jobs: JobService;
  projects: ProjectService;
  clock: Clock;
  logger: Logger;
  limits: UploadLimits;
}

/** What a removed file leaves at the store, deleted once the rows are gone. */
interface Leftovers {
  keys: string[];
  prefixes: string[];
  uploads: { key: string; uploadId: string }[];
}

const mb = (bytes: number) => Math.round((bytes / MiB) * 10) / 10;
const validation = (key: Parameters<typeof Invalid>[0], params: Record<string, string | number> = {}) => Invalid(key, { code: 'ValidationError', params });

/**
 * Uploads: single-PUT (presign, confirm) and multipart (initiate, parts, complete, abort),
 * storage accounting and deletion of media items with the files they are last to use.
 *
 * Accounting: at confirm or complete the uploader is charged the stored object's real
 * size (atomically against the tier quota) and the item records it as charged_bytes;
 * deleting an item refunds exactly its charged_bytes. Nothing is charged before the
 * object exists, so a PENDING, MULTIPART_INITIATED or quota-FAILED item refunds 0.
 */
export class UploadService {
  readonly #d: UploadDeps;

  constructor(deps: UploadDeps) {
    this.#d = deps;
  }

  async presign(em: EntityManager, userId: string, input: UploadInput) {
    const contentType = await this.#checkRequest(em, userId, input);
    if (input.size_bytes >= this.#d.limits.multipartCutoffBytes) throw validation('upload.use_multipart', { cutoff_bytes: this.#d.limits.multipartCutoffBytes });
    const { file, item } = await this.#createUpload(em, userId, input, contentType, 'PENDING', {});
    // the URL writes only this upload's staging key, with the declared length and type signed
    const uploadUrl = await this.#d.storage.presignSizedPut(file.uploadKey!, contentType, input.size_bytes, SINGLE_PUT_URL_SECONDS);
    return { media_file_id: file.id, media_item_id: item.id, upload_url: uploadUrl, content_type: contentType, expires_in: SINGLE_PUT_URL_SECONDS };
  }

  /** The stored object's real size is charged; over quota the object is deleted and the file FAILED. */
  async confirm(em: EntityManager, userId: string, fileId: string): Promise<MediaFileRow> {
    return this.#settle(em, userId, fileId, 'PENDING', async (file) => {
      const size = await this.#d.storage.sizeOf(file.uploadKey!);
      if (size === null) throw InvalidInput('upload.object_missing', { code: 'ValidationError' });
      return size;
    });
  }

  async initiate(em: EntityManager, userId: string, input: UploadInput) {
    const contentType = await this.#checkRequest(em, userId, input);
    const { multipartCutoffBytes, partSizeBytes, maxParts } = this.#d.limits;
    if (input.size_bytes < multipartCutoffBytes) throw validation('upload.use_presign', { cutoff_bytes: multipartCutoffBytes });
    const partsCount = Math.ceil(input.size_bytes / partSizeBytes);
    if (partsCount > maxParts) throw validation('upload.too_many_parts', { parts: partsCount, max: maxParts });
    const fileId = randomUUID();
    const key = stagingKey(fileId);
    const uploadId = await this.#d.store.create(key, contentType);
    let created;
    try {
      created = await this.#createUpload(em, userId, input, contentType, 'MULTIPART_INITIATED', { id: fileId, uploadKey: key, uploadId, partsCount, partSizeBytes });
    } catch (error) {
      await this.#d.store.abort(key, uploadId).catch(() => {});
      throw error;
    }
    const parts = await this.#partUrls(created.file, 1, Math.min(partsCount, INITIAL_PART_URLS));
    return {
      media_file_id: fileId,
      media_item_id: created.item.id,
      upload_id: uploadId,
      key,
      part_size_bytes: partSizeBytes,
      parts_count: partsCount,
      parts,
      expires_in: PART_URL_SECONDS,
    };
  }

  async uploadedParts(em: EntityManager, userId: string, fileId: string): Promise<UploadedPart[]> {
    const file = await this.#multipartFile(em, userId, fileId);
    return this.#d.store.listParts(file.uploadKey!, file.uploadId!);
  }

  async freshPartUrls(em: EntityManager, userId: string, fileId: string, from: number, to: number) {
    const file = await this.#multipartFile(em, userId, fileId);
    const partsCount = file.partsCount ?? 0;
    // the spec's three refusals only; parts_count (at most MULTIPART_MAX_PARTS) bounds the range
    if (from < 1 || to > partsCount || from > to) throw InvalidInput('upload.part_range', { code: 'ValidationError', params: { parts_count: partsCount } });
    return { parts: await this.#partUrls(file, from, to), expires_in: PART_URL_SECONDS };
  }

  /** Assembles the parts at the store, then charges the real size like confirm; idempotent once done. */
  async complete(em: EntityManager, userId: string, fileId: string, parts: { part_number: number; etag: string }[]): Promise<MediaFileRow> {
    return this.#settle(em, userId, fileId, 'MULTIPART_INITIATED', async (file) => {
      const partsCount = file.partsCount ?? 0;
      const seen = new Set<number>();
      for (const part of parts) {
        if (part.part_number < 1 || part.part_number > partsCount || seen.has(part.part_number)) {
          throw InvalidInput('upload.unknown_part', { code: 'ValidationError', params: { part_number: part.part_number, parts_count: partsCount } });
        }
        seen.add(part.part_number);
      }
      try {
        await this.#d.store.complete(file.uploadKey!, file.uploadId!, [...parts].sort((a, b) => a.part_number - b.part_number));
      } catch (error) {
        if (!(error instanceof PartsRejected)) throw error;
        // a concurrent duplicate complete consumed the upload: its object is there, settle on it
        const size = await this.#d.storage.sizeOf(file.uploadKey!);
        if (size !== null) return size;
        throw Conflict('upload.complete_rejected', { code: 'MultipartCompleteError', params: { reason: error.message } });
      }
      return (await this.#d.storage.sizeOf(file.uploadKey!)) ?? 0;
    });
  }

  /** Rows go first (committed), then the store; a store failure leaves the rows deleted. */
  async abort(em: EntityManager, userId: string, fileId: string): Promise<void> {
    const leftovers = await em.transactional(async (tx) => {
      const file = ownedBy(await tx.findOne(MediaFile, fileId, { lockMode: LockMode.PESSIMISTIC_WRITE }), userId, { owner: (f) => f.uploaderId, notFound: 'upload.file_not_found' });
      if (file.status !== 'MULTIPART_INITIATED') throw Conflict('upload.wrong_state', { params: { status: file.status } });
      return this.#removeFile(tx, file);
    });
    await this.#cleanUp(leftovers);
  }

  /**
   * Deletes the caller's item: its charged_bytes are refunded, a project item's canvas
   * is removed and the spine re-tiled, and the file goes with its last item.
   */
  async deleteItem(em: EntityManager, userId: string, itemId: string): Promise<void> {
    const leftovers = await em.transactional(async (tx) => {
      let item = ownedBy(await tx.findOne(MediaItem, itemId), userId, { notFound: 'upload.item_not_found' });
      let fileId: string;
      let file: MediaFileRow | null;
      do {
        fileId = item.file.id;
        // the file's row lock makes "is this the last item?" exact under concurrent deletes
        file = await tx.findOne(MediaFile, fileId, { lockMode: LockMode.PESSIMISTIC_WRITE });
        // re-read under the lock: a confirm or complete that held it may have charged (or a replace repointed) the item meanwhile
        item = ownedBy(await tx.findOne(MediaItem, itemId, { refresh: true }), userId, { notFound: 'upload.item_not_found' });
      } while (item.file.id !== fileId);
      await refundStorage(tx, userId, item.chargedBytes);
      await this.#removeItem(tx, item);
      if (!file || (await tx.count(MediaItem, { file: file.id })) > 0) return null;
      return this.#removeFile(tx, file);
    });
    if (leftovers) await this.#cleanUp(leftovers);
  }

  /**
   * Removes uploads never finished: single PUTs still PENDING 15 minutes after their URL
   * expired, multipart uploads still MULTIPART_INITIATED after MULTIPART_STALE_HOURS — rows
   * first (committed), then the store; then deletes staging objects that no upload in progress
   * owns (written through an upload URL after its upload was confirmed, deleted or swept).
   * Returns how many uploads went.
   */
  async sweepStaleUploads(em: EntityManager, now: Date = this.#d.clock.now()): Promise<number> {
    const multipartBefore = new Date(now.getTime() - this.#d.limits.staleHours * 3600_000);
    const singlePutBefore = new Date(now.getTime() - (SINGLE_PUT_URL_SECONDS + SINGLE_PUT_SWEEP_GRACE_SECONDS) * 1000);
    const unfinished = ['PENDING', 'MULTIPART_INITIATED'] as const;
    const stale = await em.fork().find(
      MediaFile,
      { $or: [{ status: 'PENDING', createdAt: { $lt: singlePutBefore } }, { status: 'MULTIPART_INITIATED', createdAt: { $lt: multipartBefore } }] },
      { fields: ['id'], limit: 500 },
    );
    let swept = 0;
    for (const { id } of stale) {
      const leftovers = await em.fork().transactional(async (tx) => {
        const file = await tx.findOne(MediaFile, id, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!file || !(unfinished as readonly MediaFileStatus[]).includes(file.status)) return null;
        return this.#removeFile(tx, file);
      });
      if (!leftovers) continue;
      swept += 1;
      await this.#cleanUp(leftovers);
    }
    await this.#sweepOrphanStaging(em);
    return swept;
  }

  /**
   * Staging objects whose key no file row holds any more. A row gets its key before any
   * URL to it exists and loses it only once its job has read it, so this never races an upload.
   */
  async #sweepOrphanStaging(em: EntityManager): Promise<void> {
    const batch: string[] = [];
    const flush = async () => {
      const owned = await em.fork().find(MediaFile, { uploadKey: { $in: batch } }, { fields: ['uploadKey'] });
      const ownedKeys = new Set(owned.map((file) => file.uploadKey));
      const orphans = batch.filter((key) => !ownedKeys.has(key));
      if (orphans.length) {
        this.#d.logger.info({ objects: orphans.length }, 'staging objects no upload owns removed');
        await this.#cleanUp({ keys: orphans, prefixes: [], uploads: [] });
      }
      batch.length = 0;
    };
    for await (const object of this.#d.storage.listObjects(STAGING_PREFIX)) {
      batch.push(object.key);
      if (batch.length === 500) await flush();
    }
    if (batch.length) await flush();
  }

  /**
   * The account-deletion step: the user's projects (canvases go with them), items and
   * jobs; files whose last item was theirs. Runs in the deleting transaction and returns
   * the removal of those files' objects, to run once that transaction has committed.
   */
  async deleteAccountMedia(tx: EntityManager, userId: string): Promise<() => Promise<void>> {
    const fileIds = (await tx.execute<{ id: string }[]>(
      `select distinct media_file_id as id from media_items where user_id = ? union select id from media_files where uploader_id = ?`,
      [userId, userId],
    )).map((row) => row.id);
    await tx.execute(`delete from media_items where user_id = ?`, [userId]);
    const leftovers: Leftovers = { keys: [], prefixes: [], uploads: [] };
    for (const id of fileIds) {
      const file = await tx.findOne(MediaFile, id, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!file || (await tx.count(MediaItem, { file: id })) > 0) continue;
      const left = await this.#removeFile(tx, file);
      leftovers.keys.push(...left.keys);
      leftovers.prefixes.push(...left.prefixes);
      leftovers.uploads.push(...left.uploads);
    }
    await tx.execute(`delete from projects where user_id = ?`, [userId]);
    await tx.execute(`delete from jobs where user_id = ?`, [userId]);
    // a later deletion step may still roll the rows back: the objects must outlive them until the commit
    return () => this.#cleanUp(leftovers);
  }

  /** Content type, file name, scope, per-file maximum and the declared size against the quota. */
  async #checkRequest(em: EntityManager, userId: string, input: UploadInput): Promise<string> {
    const contentType = normalizeContentType(input.content_type);
    if (!contentType) throw validation('upload.content_type', { content_type: input.content_type, allowed: allowedContentTypes.join(', ') });
    if (!isPlainFilename(input.filename)) throw validation('upload.filename');
    if ((input.scope === 'project') !== Boolean(input.scope_project_id)) throw validation('upload.scope_project');
    if (input.scope_project_id) await this.#d.projects.owned(em, userId, input.scope_project_id);
    const { maxUploadBytes } = this.#d.limits;
    if (input.size_bytes > maxUploadBytes) throw validation('upload.too_large', { size_mb: mb(input.size_bytes), max_mb: mb(maxUploadBytes) });
    return contentType;
  }

  /**
   * Room for a new upload, in the transaction that creates it, one at a time per user: at most
   * MAX_UNFINISHED_UPLOADS unfinished, and the declared bytes of those still unfinished count
   * against the quota with what is stored, until they are confirmed, completed, aborted or swept.
   */
  async #reserveRoom(tx: EntityManager, userId: string, sizeBytes: number): Promise<void> {
    await tx.execute(`select pg_advisory_xact_lock(hashtext(?))`, [`uploads:${userId}`]);
    const [unfinished] = await tx.execute<{ count: string; bytes: string }[]>(
      `select count(*) as count, coalesce(sum(declared_size_bytes), 0) as bytes from media_files where uploader_id = ? and status in ('PENDING', 'MULTIPART_INITIATED')`,
      [userId],
    );
    if (Number(unfinished!.count) >= MAX_UNFINISHED_UPLOADS) throw Conflict('upload.too_many_unfinished', { params: { max: MAX_UNFINISHED_UPLOADS } });
    const quota = (await this.#d.billing.limitsOf(tx, userId)).storageQuotaBytes;
    const taken = (await storageUsed(tx, userId)) + Number(unfinished!.bytes);
    if (taken + sizeBytes > quota) {
      throw validation('upload.quota', { needed_mb: mb(sizeBytes), free_mb: mb(Math.max(quota - taken, 0)), quota_mb: mb(quota) });
    }
  }

  async #createUpload(
    em: EntityManager,
    userId: string,
    input: UploadInput,
    contentType: string,
    status: MediaFileStatus,
    multipart: { id?: string; uploadKey?: string; uploadId?: string; partsCount?: number; partSizeBytes?: number },
  ): Promise<{ file: MediaFileRow; item: MediaItemRow }> {
    return em.transactional(async (tx) => {
      await this.#reserveRoom(tx, userId, input.size_bytes);
      const id = multipart.id ?? randomUUID();
      const file = tx.create(MediaFile, {
        id,
        uploaderId: userId,
        status,
        storageKey: sourceKey(id),
        uploadKey: multipart.uploadKey ?? stagingKey(id),
        contentType,
        originalFilename: input.filename.trim(),
        declaredSizeBytes: input.size_bytes,
        uploadId: multipart.uploadId ?? null,
        partsCount: multipart.partsCount ?? null,
        partSizeBytes: multipart.partSizeBytes ?? null,
      });
      const item = await placeMediaItem(tx, {
        userId,
        file,
        scope: input.scope,
        scopeProjectId: input.scope_project_id,
        displayName: input.display_name,
        tags: input.tags,
      });
      return { file, item };
    });
  }

  /**
   * Confirm and complete alike. `finish` makes the object final at the store and returns
   * its real size, with no row lock or pooled connection held; then, under the file's row
   * lock, the status is checked again, the size charged atomically against the quota and
   * the file moved to PROCESSING with its artifact job row (dispatched after the commit). Over
   * quota the file becomes FAILED, the object is deleted and the request fails. A file
   * already PROCESSING or UPLOADED (before or after the store call) is returned as it is.
   */
  async #settle(em: EntityManager, userId: string, fileId: string, from: MediaFileStatus, finish: (file: MediaFileRow) => Promise<number>): Promise<MediaFileRow> {
    const found = await em.fork().findOne(MediaFile, fileId);
    // a repeated confirm or complete of an upload whose content folded onto a file stored before: settled, as it was uploaded
    const folded = found ? undefined : await foldedUpload(em, userId, fileId);
    if (folded) return folded;
    const seen = ownedBy(found, userId, { owner: (f) => f.uploaderId, notFound: 'upload.file_not_found' });
    if (isSettled(seen.status)) return seen;
    if (seen.status !== from) throw Conflict('upload.wrong_state', { params: { status: seen.status } });
    const size = await finish(seen);
    // the declared size was an early check only: the stored object must fit the path and the per-file maximum too
    const pathMax = from === 'PENDING' ? Math.min(this.#d.limits.maxUploadBytes, this.#d.limits.multipartCutoffBytes - 1) : this.#d.limits.maxUploadBytes;
    const outcome = await em.transactional(async (tx) => {
      const file = await tx.findOne(MediaFile, fileId, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!file) return { file: null, overQuota: null, overPath: null };
      // a concurrent duplicate settled it while we were at the store: it holds the charge
      if (isSettled(file.status)) return { file, overQuota: null, overPath: null };
      if (file.status !== from) throw Conflict('upload.wrong_state', { params: { status: file.status } });
      if (size > pathMax) {
        tx.assign(file, { status: 'FAILED', sizeBytes: size, error: 'The uploaded file is larger than its upload path takes.', errorCode: 'upload.too_large', errorParams: null });
        return { file, overQuota: null, overPath: { size_bytes: size, max_bytes: pathMax } };
      }
      const quota = (await this.#d.billing.limitsOf(tx, userId)).storageQuotaBytes;
      if (!(await chargeStorage(tx, userId, size, quota))) {
        const free = Math.max(quota - (await storageUsed(tx, userId)), 0);
        tx.assign(file, { status: 'FAILED', sizeBytes: size, error: 'The uploaded file does not fit the storage quota.', errorCode: 'upload.quota_exceeded', errorParams: null });
        return { file, overQuota: { size_mb: mb(size), free_mb: mb(free) }, overPath: null };
      }
      tx.assign(file, { status: 'PROCESSING', sizeBytes: size, uploadId: null });
      // the upload's one item (made with the file) carries the charge
      await tx.nativeUpdate(MediaItem, { file: file.id, userId }, { chargedBytes: size });
      // the artifact job is written with the move to PROCESSING (the outbox dispatches it after the commit);
      // it hashes the staging object's bytes while copying them to the served key
      await this.#d.jobs.submit(tx, {
        program: 'artifact',
        userId,
        mediaFileId: file.id,
        input: { sourceKey: file.uploadKey!, storeKey: file.storageKey, contentType: file.contentType, expectedSizeBytes: size },
      });
      return { file, overQuota: null, overPath: null };
    });
    const { file } = outcome;
    if (!file) {
      // deleted while we were at the store: its delete may have cleaned up before our object existed
      await this.#d.storage.delete(seen.uploadKey!).catch((error: unknown) => this.#d.logger.warn({ err: error, key: seen.uploadKey }, 'could not delete the object of a deleted upload'));
      throw NotFound('upload.file_not_found');
    }
    if (outcome.overQuota || outcome.overPath) {
      await this.#d.storage.delete(file.uploadKey!).catch((error: unknown) => this.#d.logger.warn({ err: error, key: file.uploadKey }, 'could not delete a refused upload'));
      if (outcome.overPath) throw InvalidInput('upload.stored_not_as_declared', { code: 'ValidationError', params: outcome.overPath });
      throw InvalidInput('upload.quota_recheck', { code: 'ValidationError', params: outcome.overQuota! });
    }
    return file;
  }

  async #multipartFile(em: EntityManager, userId: string, fileId: string): Promise<MediaFileRow> {
    const file = ownedBy(await em.findOne(MediaFile, fileId), userId, { owner: (f) => f.uploaderId, notFound: 'upload.file_not_found' });
    if (file.status !== 'MULTIPART_INITIATED' || !file.uploadId) throw Conflict('upload.wrong_state', { params: { status: file.status } });
    return file;
  }

  /** Part URLs of the upload's staging key, each with its part's length signed (the last part holds the rest of the declared size). */
  #partUrls(file: MediaFileRow, from: number, to: number) {
    const partSize = file.partSizeBytes!;
    const lengthOf = (part: number) => (part < file.partsCount! ? partSize : file.declaredSizeBytes - partSize * (file.partsCount! - 1));
    const numbers = Array.from({ length: to - from + 1 }, (_, index) => from + index);
    return Promise.all(
      numbers.map(async (part_number) => ({ part_number, url: await this.#d.store.partUrl(file.uploadKey!, file.uploadId!, part_number, lengthOf(part_number), PART_URL_SECONDS) })),
    );
  }

  async #removeItem(tx: EntityManager, item: MediaItemRow): Promise<void> {
    if (item.scope === 'project' && item.scopeProjectId) await removeItemCanvases(tx, item.id, item.scopeProjectId);
    await tx.nativeDelete(MediaItem, { id: item.id });
  }

  /** Deletes the file's rows (items, canvases) and says what to remove at the store. */
  async #removeFile(tx: EntityManager, file: MediaFileRow): Promise<Leftovers> {
    for (const item of await tx.find(MediaItem, { file: file.id })) await this.#removeItem(tx, item);
    // every job of the file (artifact, proxy, media-edit, media-import) wrote only that file's objects under its prefix
    const jobs = await tx.execute<{ output_prefix: string }[]>(`select output_prefix from jobs where media_file_id = ?`, [file.id]);
    await releaseWaitingJobs(tx, file.id);
    await tx.nativeDelete(MediaFile, { id: file.id });
    return {
      keys: objectKeysOf(file),
      prefixes: jobs.map((job) => `${job.output_prefix}/`),
      uploads: file.status === 'MULTIPART_INITIATED' && file.uploadId && file.uploadKey ? [{ key: file.uploadKey, uploadId: file.uploadId }] : [],
    };
  }

  async #cleanUp(leftovers: Leftovers): Promise<void> {
    for (const upload of leftovers.uploads) {
      await this.#d.store.abort(upload.key, upload.uploadId).catch((error: unknown) => this.#d.logger.warn({ err: error, ...upload }, 'could not abort a multipart upload at the store'));
    }
    await this.#d.store.deleteObjects(leftovers.keys, leftovers.prefixes).catch((error: unknown) => this.#d.logger.warn({ err: error, keys: leftovers.keys }, 'could not delete stored objects'));
  }
}

/**
 * The caller's upload `fileId` if its content folded onto identical content stored before:
 * the stored file as that upload reads (its own id and name), so a repeated confirm stays
 * idempotent and says nothing of the earlier file. Undefined for any other id.
 */
async function foldedUpload(em: EntityManager, userId: string, fileId: string): Promise<MediaFileRow | undefined> {
  const item = await em.fork().findOne(MediaItem, { uploadedFileId: fileId, userId }, { populate: ['file'] });
  if (!item) return undefined;
  // its own dates too: the stored file's would tell it was there before
  return { ...item.file, id: fileId, originalFilename: item.uploadedFilename ?? item.file.originalFilename, createdAt: item.createdAt, updatedAt: item.updatedAt } as MediaFileRow;
}

const isSettled = (status: MediaFileStatus) => status === 'PROCESSING' || status === 'UPLOADED';

/** Object keys come from ids, never from the client's file name. */
function sourceKey(fileId: string): string {
  return `media/${fileId}/source`;
}

/** Where an upload's presigned URLs write: one upload's own key, unguessable, never served. */
function stagingKey(fileId: string): string {
  return `${STAGING_PREFIX}${fileId}/${randomUUID()}`;
}

const STAGING_PREFIX = 'uploads/';
