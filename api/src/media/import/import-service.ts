import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Unprocessable } from '../../http/errors.ts';
import type { MessageKey, MessageParams } from '../../i18n/index.ts';
import type { JobService } from '../../jobs/service.ts';
import { MediaFile, MediaItem, mediaScopes } from '../entities.ts';
import { VideoHostUnavailable, type VideoHost } from './video-host.ts';

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

const invalid = (key: MessageKey, params: MessageParams = {}) => Unprocessable(key, { code: 'ValidationError', params });

/** POST /media/videohost: metadata now (422 when unreadable or too long), then dedupe by external id or download as a job. */
export class MediaImportService {
  readonly #host: VideoHost;
  readonly #jobs: JobService;
  readonly #limits: { maxDurationSeconds: number; maxBytes: number };

  constructor(deps: { host: VideoHost; jobs: JobService; limits: { maxDurationSeconds: number; maxBytes: number } }) {
    this.#host = deps.host;
    this.#jobs = deps.jobs;
    this.#limits = deps.limits;
  }

  async importVideo(em: EntityManager, userId: string, input: ImportInput): Promise<z.infer<typeof ImportAccepted>> {
    if ((input.scope === 'project') !== Boolean(input.scope_project_id)) throw invalid('media_import.scope_project');
    // Project items need their SINGLE canvas; until the spine helper is wired here, library only.
    if (input.scope === 'project') throw invalid('media_import.project_scope_unavailable');
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

    const created = await em.transactional(async (tx) => {
      const existing = await tx.findOne(MediaFile, { externalVideoId: video.externalId, status: { $ne: 'FAILED' } }, { orderBy: { createdAt: 'asc' } });
      const file =
        existing ??
        tx.create(MediaFile, {
          id: randomUUID(),
          uploaderId: userId,
          status: 'PROCESSING',
          storageKey: `media/${randomUUID()}/imported`,
          contentType: 'video/mp4',
          originalFilename: `${(video.title ?? parsed.id).replace(/[^\w .-]+/g, '_').slice(0, 200)}.mp4`,
          declaredSizeBytes: 0,
          externalVideoId: video.externalId,
        });
      const item = tx.create(MediaItem, {
        id: randomUUID(),
        userId,
        file,
        scope: 'library',
        displayName: input.display_name ?? video.title,
        tags: input.tags ?? [],
      });
      await tx.flush();
      return { file, item, deduplicated: existing !== null };
    });
    if (!created.deduplicated) {
      await this.#jobs.submit(em, {
        program: 'media-import',
        userId,
        mediaFileId: created.file.id,
        input: { downloadUrl: video.downloadUrl, maxBytes: this.#limits.maxBytes },
      });
    }
    return { media_file_id: created.file.id, media_item_id: created.item.id, deduplicated: created.deduplicated };
  }
}
