import { open, stat } from 'node:fs/promises';
import type { Client } from './users.ts';

export interface UploadOptions {
  contentType: string;
  scope?: 'library' | 'project';
  scopeProjectId?: string;
  displayName?: string;
  tags?: string[];
  /** Sent as the file name (defaults to the file's own name). */
  filename?: string;
}

export interface UploadedMedia {
  mediaFileId: string;
  mediaItemId: string;
  /** The MediaFileRead of confirm or complete (status PROCESSING: the artifact job is queued). */
  file: Record<string, unknown>;
}

/**
 * Uploads a real file the way the front end does: presign, PUT to the presigned URL,
 * confirm; or, from MULTIPART_CUTOFF_BYTES on, initiate, PUT each part, complete.
 * Wait for `media_ready` (listenToUser) when the test needs the file UPLOADED.
 */
export async function uploadMedia(client: Client, path: string, options: UploadOptions): Promise<UploadedMedia> {
  const size = (await stat(path)).size;
  const request = {
    filename: options.filename ?? path.split('/').pop()!,
    content_type: options.contentType,
    size_bytes: size,
    scope: options.scope ?? (options.scopeProjectId ? 'project' : 'library'),
    ...(options.scopeProjectId ? { scope_project_id: options.scopeProjectId } : {}),
    ...(options.displayName ? { display_name: options.displayName } : {}),
    ...(options.tags ? { tags: options.tags } : {}),
  };
  const multipart = size >= client.app.services.config.MULTIPART_CUTOFF_BYTES;
  const started = await client.post(multipart ? '/api/v1/media/multipart/initiate' : '/api/v1/media/presign', request);
  if (started.status !== 201) throw new Error(`upload start failed: ${started.status} ${await started.text()}`);
  const body = (await started.json()) as { media_file_id: string; media_item_id: string; upload_url?: string; part_size_bytes?: number; parts_count?: number; parts?: PartUrl[] };

  let settled: Response;
  if (!multipart) {
    await putBytes(body.upload_url!, await readRange(path, 0, size), options.contentType);
    settled = await client.post(`/api/v1/media/${body.media_file_id}/confirm`);
  } else {
    const etags = await putParts(client, path, body.media_file_id, body.part_size_bytes!, body.parts_count!, body.parts!);
    settled = await client.post('/api/v1/media/multipart/complete', { media_file_id: body.media_file_id, parts: etags });
  }
  if (settled.status !== 200) throw new Error(`upload settle failed: ${settled.status} ${await settled.text()}`);
  return { mediaFileId: body.media_file_id, mediaItemId: body.media_item_id, file: (await settled.json()) as Record<string, unknown> };
}

interface PartUrl {
  part_number: number;
  url: string;
}

/** PUTs every part (asking for more URLs past the first batch) and returns their ETags exactly as the store sent them. */
export async function putParts(client: Client, path: string, mediaFileId: string, partSize: number, partsCount: number, first: PartUrl[]) {
  const urls = new Map(first.map((part) => [part.part_number, part.url]));
  const etags: { part_number: number; etag: string }[] = [];
  for (let part = 1; part <= partsCount; part++) {
    if (!urls.has(part)) {
      const to = Math.min(partsCount, part + 49);
      const fresh = await client.get(`/api/v1/media/multipart/parts/urls?media_file_id=${mediaFileId}&from_part=${part}&to_part=${to}`);
      for (const p of ((await fresh.json()) as { parts: PartUrl[] }).parts) urls.set(p.part_number, p.url);
    }
    const bytes = await readRange(path, (part - 1) * partSize, partSize);
    etags.push({ part_number: part, etag: await putBytes(urls.get(part)!, bytes) });
  }
  return etags;
}

/** A PUT to a presigned URL; returns the ETag header as sent (quotes included). */
export async function putBytes(url: string, bytes: Uint8Array, contentType?: string): Promise<string> {
  const response = await fetch(url, { method: 'PUT', body: bytes, ...(contentType ? { headers: { 'Content-Type': contentType } } : {}) });
  if (!response.ok) throw new Error(`PUT to the store failed: ${response.status} ${await response.text()}`);
  return response.headers.get('etag') ?? '';
}

async function readRange(path: string, start: number, length: number): Promise<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, start);
    return new Uint8Array(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}
