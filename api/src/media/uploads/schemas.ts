import { z } from 'zod';
import { mediaFileStatuses, mediaScopes, proxyStatuses, type MediaFileRow } from '../entities.ts';
import { issueKey } from '../../i18n/index.ts';

/** The request of presign and multipart/initiate (the spec gives both the same fields). */
export const UploadRequest = z.object({
  filename: z.string().min(1).max(255),
  content_type: z.string().min(1).max(255),
  size_bytes: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  scope: z.enum(mediaScopes),
  scope_project_id: z.uuid().nullish(),
  display_name: z.string().trim().min(1).max(255).nullish(),
  tags: z.array(z.string().trim().min(1).max(64)).max(50).optional(),
});
export type UploadInput = z.infer<typeof UploadRequest>;

export const PresignResponse = z
  .object({ media_file_id: z.uuid(), media_item_id: z.uuid(), upload_url: z.url(), content_type: z.string(), expires_in: z.number().int() })
  .meta({ id: 'PresignResponse' });

const PartUrl = z.object({ part_number: z.number().int(), url: z.url() });

export const MultipartInitiateResponse = z
  .object({
    media_file_id: z.uuid(),
    media_item_id: z.uuid(),
    upload_id: z.string(),
    key: z.string(),
    part_size_bytes: z.number().int(),
    parts_count: z.number().int(),
    parts: z.array(PartUrl),
    expires_in: z.number().int(),
  })
  .meta({ id: 'MultipartInitiateResponse' });

export const MediaFileIdParams = z.object({ media_file_id: z.uuid() });
export const MediaItemIdParams = z.object({ media_item_id: z.uuid() });
export const MediaFileIdBody = z.object({ media_file_id: z.uuid() });
export const MediaFileIdQuery = z.object({ media_file_id: z.uuid() });

/**
 * Range rules are the spec's 400s, so the numbers are only typed here: as the digits the
 * query carries, so the document shows them required (a coerced number reads as nullable).
 */
const partNumber = z.string().regex(/^-?\d{1,9}$/, issueKey('validation.integer')).transform(Number);
export const PartUrlsQuery = z.object({ media_file_id: z.uuid(), from_part: partNumber, to_part: partNumber });
export const PartUrlsResponse = z.object({ parts: z.array(PartUrl), expires_in: z.number().int() }).meta({ id: 'MultipartPartUrls' });

export const UploadedParts = z
  .object({ uploaded_parts: z.array(z.object({ part_number: z.number().int(), etag: z.string(), size_bytes: z.number().int() })) })
  .meta({ id: 'MultipartUploadedParts' });

export const CompleteRequest = z.object({
  media_file_id: z.uuid(),
  parts: z.array(z.object({ part_number: z.number().int(), etag: z.string().min(1).max(256) })).min(1).max(10_000),
});

export const ReorderRequest = z.object({ project_id: z.uuid(), media_item_ids: z.array(z.uuid()).max(10_000) });

export const MediaFileRead = z
  .object({
    id: z.uuid(),
    status: z.enum(mediaFileStatuses),
    size_bytes: z.number().int().nullable(),
    declared_size_bytes: z.number().int(),
    content_type: z.string(),
    original_filename: z.string(),
    kind: z.string().nullable(),
    duration_ms: z.number().int().nullable(),
    has_audio: z.boolean(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    proxy_status: z.enum(proxyStatuses),
    sha256_hash: z.string().nullable(),
    external_video_id: z.string().nullable(),
    /** Waveform peaks (0..1, 20 per second) once the artifact task made them. */
    waveform_json: z.array(z.number()).nullable(),
    /** Object keys of the artifacts (the thumbnail JPEG, the 16 kHz mono WAV), null until made. */
    thumbnail_key: z.string().nullable(),
    audio_key: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'MediaFileRead' });

export function mediaFileRead(file: MediaFileRow): z.infer<typeof MediaFileRead> {
  return {
    id: file.id,
    status: file.status,
    size_bytes: file.sizeBytes ?? null,
    declared_size_bytes: file.declaredSizeBytes,
    content_type: file.contentType,
    original_filename: file.originalFilename,
    kind: file.kind ?? null,
    duration_ms: file.durationMs ?? null,
    has_audio: file.hasAudio,
    width: file.width ?? null,
    height: file.height ?? null,
    proxy_status: file.proxyStatus,
    sha256_hash: file.sha256Hash ?? null,
    external_video_id: file.externalVideoId ?? null,
    waveform_json: file.waveformJson ?? null,
    thumbnail_key: file.thumbnailKey ?? null,
    audio_key: file.audioKey ?? null,
    created_at: file.createdAt.toISOString(),
    updated_at: file.updatedAt.toISOString(),
  };
}
