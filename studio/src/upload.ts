// Uploads a file into a project the way the api asks: one presigned PUT below the multipart
// cutoff, parts above it. A multipart upload is remembered in localStorage, so after a reload
// choosing the same file again sends only the parts the store does not hold yet.
import { ApiError, get, post, query, type MediaItem } from './api.ts';

/** MULTIPART_CUTOFF_BYTES (the spec's 25 MiB unless configured), as the api's page names it: from it on, uploads go in parts. */
export const MULTIPART_CUTOFF_BYTES = Number(document.querySelector('meta[name="cutroom-multipart-cutoff"]')?.getAttribute('content')) || 25 * 1024 * 1024;
/** The part URLs asked for at once when resuming (the api mints 50 at initiate). */
const URL_BATCH = 50;
const STORAGE_PREFIX = 'cutroom.upload.';

export interface UploadProgress {
  loaded: number;
  total: number;
}

interface PresignAnswer {
  media_file_id: string;
  media_item_id: string;
  upload_url: string;
  content_type: string;
}

interface PartUrl {
  part_number: number;
  url: string;
}

interface InitiateAnswer {
  media_file_id: string;
  media_item_id: string;
  part_size_bytes: number;
  parts_count: number;
  parts: PartUrl[];
}

/** What a reload needs to go on with a multipart upload. */
interface SavedUpload {
  media_file_id: string;
  media_item_id: string;
  part_size_bytes: number;
  parts_count: number;
}

/** The same file chosen again: its name, size and modification time. */
function fileKey(projectId: string, file: File): string {
  return `${STORAGE_PREFIX}${projectId}:${file.name}:${file.size}:${file.lastModified}`;
}

export function savedUpload(projectId: string, file: File): SavedUpload | null {
  const raw = localStorage.getItem(fileKey(projectId, file));
  if (!raw) return null;
  try {
    return JSON.parse(raw) as SavedUpload;
  } catch {
    return null;
  }
}

/** The names of uploads of this project left unfinished (a reload, a closed tab). */
export function unfinishedUploads(projectId: string): string[] {
  const names: string[] = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (key?.startsWith(`${STORAGE_PREFIX}${projectId}:`)) names.push(key.slice(STORAGE_PREFIX.length + projectId.length + 1).split(':')[0] ?? '');
  }
  return names;
}

/** A file's type for the api: the browser's guess, or one from the extension. */
export function contentTypeOf(file: File): string {
  if (file.type) return file.type;
  const extension = file.name.split('.').pop()?.toLowerCase() ?? '';
  const known: Record<string, string> = { mp4: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm', mkv: 'video/x-matroska', mp3: 'audio/mpeg', wav: 'audio/wav', m4a: 'audio/mp4' };
  return known[extension] ?? 'application/octet-stream';
}

/** One upload; `cancel()` stops it and, for parts, tells the api to drop what was sent. */
export class Upload {
  readonly file: File;
  readonly projectId: string;
  #request: XMLHttpRequest | null = null;
  #cancelled = false;
  #multipartId: string | null = null;
  #onProgress: (progress: UploadProgress) => void;

  constructor(projectId: string, file: File, onProgress: (progress: UploadProgress) => void) {
    this.projectId = projectId;
    this.file = file;
    this.#onProgress = onProgress;
  }

  /** Sends the file; resolves with the media item id once the api has it (processing follows). */
  async run(): Promise<string> {
    try {
      return await (this.file.size >= MULTIPART_CUTOFF_BYTES ? this.#multipart() : this.#single());
    } catch (error) {
      if (!this.#cancelled) throw error;
      // cancelled: the parts sent so far are dropped at the store, and the api forgets the upload
      if (this.#multipartId) {
        localStorage.removeItem(fileKey(this.projectId, this.file));
        await post('/api/v1/media/multipart/abort', { media_file_id: this.#multipartId }).catch(() => undefined);
      }
      throw new UploadCancelled();
    }
  }

  /** Stops the upload; `run()` then rejects with UploadCancelled once the api has dropped it. */
  cancel(): void {
    this.#cancelled = true;
    this.#request?.abort();
  }

  #fields() {
    return { filename: this.file.name, content_type: contentTypeOf(this.file), size_bytes: this.file.size, scope: 'project', scope_project_id: this.projectId };
  }

  async #single(): Promise<string> {
    const presign = await post<PresignAnswer>('/api/v1/media/presign', this.#fields());
    await this.#put(presign.upload_url, this.file, presign.content_type, (loaded) => this.#onProgress({ loaded, total: this.file.size }));
    await post<MediaItem>(`/api/v1/media/${presign.media_file_id}/confirm`);
    return presign.media_item_id;
  }

  async #multipart(): Promise<string> {
    const key = fileKey(this.projectId, this.file);
    let saved = savedUpload(this.projectId, this.file);
    const done = new Map<number, { etag: string; size: number }>();
    let urls: PartUrl[] = [];
    if (saved) {
      try {
        const listed = await get<{ uploaded_parts: { part_number: number; etag: string; size_bytes: number }[] }>(`/api/v1/media/multipart/parts${query({ media_file_id: saved.media_file_id })}`);
        for (const part of listed.uploaded_parts) done.set(part.part_number, { etag: part.etag, size: part.size_bytes });
      } catch (error) {
        // the upload was aborted or swept meanwhile: start afresh
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        saved = null;
        localStorage.removeItem(key);
      }
    }
    if (!saved) {
      const initiated = await post<InitiateAnswer>('/api/v1/media/multipart/initiate', this.#fields());
      saved = { media_file_id: initiated.media_file_id, media_item_id: initiated.media_item_id, part_size_bytes: initiated.part_size_bytes, parts_count: initiated.parts_count };
      localStorage.setItem(key, JSON.stringify(saved));
      urls = initiated.parts;
    }
    this.#multipartId = saved.media_file_id;
    const { part_size_bytes: partSize, parts_count: count, media_file_id: fileId } = saved;
    const sent = () => [...done.values()].reduce((sum, part) => sum + part.size, 0);
    this.#onProgress({ loaded: sent(), total: this.file.size });
    for (let number = 1; number <= count; number++) {
      if (this.#cancelled) throw new UploadCancelled();
      if (done.has(number)) continue;
      let url = urls.find((part) => part.part_number === number)?.url;
      if (!url) {
        const batch = await get<{ parts: PartUrl[] }>(`/api/v1/media/multipart/parts/urls${query({ media_file_id: fileId, from_part: number, to_part: Math.min(count, number + URL_BATCH - 1) })}`);
        urls = batch.parts;
        url = urls.find((part) => part.part_number === number)?.url;
        if (!url) throw new Error(`the api minted no URL for part ${number}`);
      }
      const blob = this.file.slice((number - 1) * partSize, Math.min(this.file.size, number * partSize));
      const before = sent();
      const etag = await this.#put(url, blob, null, (loaded) => this.#onProgress({ loaded: before + loaded, total: this.file.size }));
      // the ETag goes back byte-exact, quotes included
      done.set(number, { etag, size: blob.size });
    }
    const parts = [...done.entries()].sort(([a], [b]) => a - b).map(([part_number, part]) => ({ part_number, etag: part.etag }));
    await post('/api/v1/media/multipart/complete', { media_file_id: fileId, parts });
    localStorage.removeItem(key);
    this.#multipartId = null;
    return saved.media_item_id;
  }

  /** A PUT with upload progress (fetch reports none); resolves with the ETag the store answered. */
  #put(url: string, body: Blob, contentType: string | null, onLoaded: (loaded: number) => void): Promise<string> {
    return new Promise((resolve, reject) => {
      const request = new XMLHttpRequest();
      this.#request = request;
      request.open('PUT', url);
      if (contentType) request.setRequestHeader('Content-Type', contentType);
      request.upload.onprogress = (event) => onLoaded(event.loaded);
      request.onload = () => {
        if (request.status >= 200 && request.status < 300) resolve(request.getResponseHeader('ETag') ?? '');
        else reject(new Error(`the object store refused the upload (${request.status})`));
      };
      request.onerror = () => reject(new Error('the upload could not reach the object store'));
      request.onabort = () => reject(new UploadCancelled());
      if (this.#cancelled) request.abort();
      else request.send(body);
    });
  }
}

export class UploadCancelled extends Error {
  constructor() {
    super('upload cancelled');
  }
}
