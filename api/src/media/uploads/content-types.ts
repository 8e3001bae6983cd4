/**
 * What may be uploaded: formats the artifact job (ffmpeg/ffprobe) reads and browsers
 * send under these names. Compared case-insensitively, without parameters.
 */
export const allowedContentTypes = [
  'video/mp4',
  'video/quicktime',
  'video/webm',
  'video/x-matroska',
  'audio/mpeg',
  'audio/mp4',
  'audio/x-m4a',
  'audio/aac',
  'audio/wav',
  'audio/x-wav',
  'audio/wave',
  'audio/ogg',
  'audio/opus',
  'audio/flac',
  'audio/webm',
  'image/jpeg',
  'image/png',
  'image/webp',
] as const;

const allowed = new Set<string>(allowedContentTypes);

/** The allow-listed form of a declared type, or null when it is not allowed. */
export function normalizeContentType(declared: string): string | null {
  const type = declared.split(';')[0]!.trim().toLowerCase();
  return allowed.has(type) ? type : null;
}

/**
 * A file name is kept for display and Content-Disposition only (object keys come from
 * ids), yet one that carries folders, control characters or dot segments is refused so
 * that no client can believe it placed a file somewhere. With no separator allowed, a dot
 * segment can only be the whole name: `my..video.mp4` is a plain name.
 */
export function isPlainFilename(name: string): boolean {
  // eslint-disable-next-line no-control-regex
  if (/[/\\\u0000-\u001f\u007f]/.test(name)) return false;
  const trimmed = name.trim();
  return trimmed !== '' && trimmed !== '.' && trimmed !== '..';
}
