import { z } from 'zod';
import type { Locale } from '../../i18n/index.ts';
import type { MediaFileRow, MediaFileStatus, MediaItemRow } from '../entities.ts';
import { failureText } from '../../i18n/job-texts.ts';

/** The lowercase status read models show: an upload not yet confirmed or completed is pending. */
const itemStatus: Record<MediaFileStatus, 'pending' | 'processing' | 'uploaded' | 'failed'> = {
  PENDING: 'pending',
  MULTIPART_INITIATED: 'pending',
  PROCESSING: 'processing',
  UPLOADED: 'uploaded',
  FAILED: 'failed',
};

export const MediaItemSchema = z
  .object({
    uuid: z.uuid(),
    media_file_id: z.uuid(),
    display_name: z.string().nullable(),
    tags: z.array(z.string()),
    behavior_defaults: z.record(z.string(), z.unknown()),
    scope: z.enum(['library', 'project']),
    scope_project_id: z.uuid().nullable(),
    status: z.enum(['pending', 'processing', 'uploaded', 'failed']),
    error: z.string().nullable().describe('Why processing failed, when status is failed.'),
    kind: z.string().nullable().describe('video, audio or image, once processed.'),
    content_type: z.string(),
    original_filename: z.string(),
    size_bytes: z.number().int().nullable().describe('The stored size; null before confirm or complete.'),
    duration_ms: z.number().int().nullable(),
    has_audio: z.boolean(),
    dimensions: z.object({ width: z.number().int(), height: z.number().int() }).nullable(),
    waveform_peaks: z.array(z.number()).nullable(),
    proxy_status: z.enum(['not_applicable', 'pending', 'ready', 'unknown']),
    group_ids: z.array(z.uuid()),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'MediaItem' });

export type MediaItemView = z.infer<typeof MediaItemSchema>;

/** An item joined with its file's metadata and the ids of the groups it belongs to; `error` in `locale`. */
export function mediaItemView(item: MediaItemRow, file: MediaFileRow, groupIds: string[], locale: Locale = 'en'): MediaItemView {
  return {
    uuid: item.id,
    // an upload folded onto identical content stored before reads as it was uploaded (issue 22)
    media_file_id: item.uploadedFileId ?? file.id,
    display_name: item.displayName ?? null,
    tags: item.tags ?? [],
    behavior_defaults: item.behaviorDefaults ?? {},
    scope: item.scope,
    scope_project_id: item.scopeProjectId ?? null,
    // a replace edit in progress: the item reads pending (its old file's metadata) until the edit settles
    status: item.pendingFileId ? 'pending' : itemStatus[file.status as MediaFileStatus],
    error: file.status === 'FAILED' ? failureText(locale, file.errorCode, file.errorParams, file.error ?? '') || null : null,
    kind: file.kind ?? null,
    content_type: file.contentType,
    original_filename: item.uploadedFilename ?? file.originalFilename,
    size_bytes: file.sizeBytes ?? null,
    duration_ms: file.durationMs ?? null,
    has_audio: file.hasAudio,
    dimensions: file.width && file.height ? { width: file.width, height: file.height } : null,
    waveform_peaks: file.waveformJson ?? null,
    proxy_status: file.proxyStatus,
    group_ids: groupIds,
    created_at: item.createdAt.toISOString(),
    updated_at: item.updatedAt.toISOString(),
  };
}
