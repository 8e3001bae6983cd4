import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Invalid } from '../../shared/errors.ts';
import type { MessageKey, MessageParams } from '../../i18n/index.ts';
import { chargeStorage, storageUsed } from '../../accounts/storage-usage.ts';
import type { BillingService } from '../../billing/billing-service.ts';
import type { JobService } from '../../jobs/service.ts';
import type { ProjectService } from '../../projects/service.ts';
import { placeMediaItem } from '../items.ts';
import { MediaFile, mediaScopes, type MediaFileRow } from '../entities.ts';
import { VideoHostUnavailable, type ExternalVideo, type VideoHost } from './video-host.ts';

export const ImportRequest = z
  .object({
    url: z.url().max(2048),
    scope: z.enum([...mediaScopes]),
    scope_project_id: z.uuid().optional(),
    display_name: z.string().trim().min(1).max(255).optional(),
    tags: z.array(z.string().trim().min(1).max(64)).max(50).optional(),
  })
  .meta({ id: 'VideoHostImportRequest' });

export type ImportInput = z.infer<typeof ImportRequest>;

export const ImportAccepted = z
  .object({ media_file_id: z.uuid(), media_item_id: z.uuid(), deduplicated: z.boolean() })
  .meta({ id: 'VideoHostImportAccepted' });

/** Longest display name an item holds (media_items.display_name). */
const MAX_TITLE_LENGTH = 255;

/**
 * A host's title as an item's display name: control characters (NUL among them, which
 * PostgreSQL text cannot hold) removed, lone surrogates replaced, trimmed and cut to the
 * column's length; null when nothing is left. The host's data is not ours to trust.
 */
function storableTitle(title: string | null | undefined): string | null {
  // eslint-disable-next-line no-control-regex
  const cleaned = (title ?? '').replace(/[\u0000-\u001f\u007f-\u009f]/g, '').toWellFormed().trim();
  return cleaned === '' ? null : [...cleaned].slice(0, MAX_TITLE_LENGTH).join('').trim();
}

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const invalid = (key: MessageKey, params: MessageParams = {}) => Invalid(key, { code: 'ValidationError', params });

/** POST /media/videohost: metadata now (422 when unreadable or too long), then dedupe by external id or download as a job. */
export class MediaImportService {
  readonly #host: VideoHost;
  readonly #jobs: JobService;
  readonly #projects: ProjectService;
  readonly #billing: BillingService;
  readonly #limits: { maxDurationSeconds: number; maxBytes: number };

  constructor(deps: { host: VideoHost; jobs: JobService; projects: ProjectService; billing: BillingService; limits: { maxDurationSeconds: number; maxBytes: number } }) {
    this.#host = deps.host;
    this.#jobs = deps.jobs;
    this.#projects = deps.projects;
    this.#billing = deps.billing;
    this.#limits = deps.limits;
  }

  async importVideo(em: EntityManager, userId: string, input: ImportInput): Promise<z.infer<typeof ImportAccepted>> {
    if ((input.scope === 'project') !== Boolean(input.scope_project_id)) throw invalid('media_import.scope_project');
    // another user's project is 404 like a missing one, as for uploads
    if (input.scope_project_id) await this.#projects.owned(em, userId, input.scope_project_id);
    const parsed = this.#host.parse(input.url);
    if (!parsed) throw invalid('media_import.unsupported_url');
    let video;
    try {
      video = await this.#host.metadata(parsed.id);
    } catch (error) {
      if (error instanceof VideoHostUnavailable) throw invalid('media_import.metadata_unavailable', { host: this.#host.name });
      throw error;
    }
    const max = this.#limits.maxDurationSeconds;
    if (video.durationSeconds > max) throw invalid('media_import.too_long', { duration_s: Math.round(video.durationSeconds), max_s: max });

    const created = await this.#createItem(em, userId, input, video, parsed.id).catch((error: unknown) => {
      // a concurrent import of the same video created the file first: this one dedupes onto it
      if (error instanceof UniqueConstraintViolationException) return this.#createItem(em, userId, input, video, parsed.id);
      throw error;
    });
    return { media_file_id: created.file.id, media_item_id: created.item.id, deduplicated: created.deduplicated };
  }

  /** The item, on the live file of this external video or on a new one (unique per external id in the database). */
  #createItem(em: EntityManager, userId: string, input: ImportInput, video: ExternalVideo, playbackId: string) {
    const title = storableTitle(video.title);
    return em.transactional(async (tx) => {
      // the row lock orders this against the import's completion, which charges the items it finds
      const existing = await tx.findOne(MediaFile, { externalVideoId: video.externalId, status: { $ne: 'FAILED' } }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const chargedBytes = existing ? await this.#chargeDuplicate(tx, userId, existing) : 0;
      const file =
        existing ??
        tx.create(MediaFile, {
          id: randomUUID(),
          uploaderId: userId,
          status: 'PROCESSING',
          storageKey: `media/${randomUUID()}/imported`,
          contentType: 'video/mp4',
          originalFilename: `${(title ?? playbackId).replace(/[^\w .-]+/g, '_').slice(0, 200)}.mp4`,
          declaredSizeBytes: 0,
          externalVideoId: video.externalId,
        });
      const item = await placeMediaItem(tx, {
        userId,
        file,
        scope: input.scope,
        scopeProjectId: input.scope_project_id,
        displayName: input.display_name ?? title,
        tags: input.tags,
        chargedBytes,
      });
      // a new file's download job is written with it (the outbox dispatches it after the commit)
      if (!existing) {
        await this.#jobs.submit(tx, {
          program: 'media-import',
          userId,
          mediaFileId: file.id,
          input: { downloadUrl: video.downloadUrl, maxBytes: this.#limits.maxBytes },
        });
      }
      return { file, item, deduplicated: existing !== null };
    });
  }

  /**
   * A deduplicated item is charged the file's size, as a second uploader of identical
   * content is: now when the file is UPLOADED (over quota → 422, nothing created),
   * otherwise by the import's completion once the size is known.
   */
  async #chargeDuplicate(tx: EntityManager, userId: string, file: MediaFileRow): Promise<number> {
    const size = file.sizeBytes;
    if (file.status !== 'UPLOADED' || size === null || size === undefined) return 0;
    const quota = (await this.#billing.limitsOf(tx, userId)).storageQuotaBytes;
    if (await chargeStorage(tx, userId, size, quota)) return size;
    const free = Math.max(quota - (await storageUsed(tx, userId)), 0);
    throw invalid('media_import.quota', { needed_mb: mb(size), free_mb: mb(free), quota_mb: mb(quota) });
  }
}
