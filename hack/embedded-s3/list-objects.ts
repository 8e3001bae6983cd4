import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** s3rver keeps an object's bytes in `<key dirs>/<last segment>._S3rver_object`, its ETag beside it in `….md5`. */
const OBJECT_SUFFIX = '._S3rver_object';
/** s3rver keeps multipart uploads in `<bucket>/._S3rver_uploads/`: no object lives there. */
const UPLOADS_DIRECTORY = '._S3rver_uploads';

/** How many objects' files are read at once while a page is assembled. */
const LOOKUPS_AT_ONCE = 64;

export interface ListedObject {
  key: string;
  size: number;
  lastModified: Date;
  etag: string;
}

export interface ListingPage {
  objects: ListedObject[];
  commonPrefixes: string[];
  /** Where the next page starts (after this key, or after every key under this common prefix); null on the last page. */
  next: ListingMarker | null;
}

/** A page starts after `key`; when `prefix` is set, also after every key under it (a common prefix rolled up). */
export interface ListingMarker {
  after: string;
  prefix: boolean;
}

/** S3 orders keys by their UTF-8 bytes, which differs from JavaScript's UTF-16 order above U+FFFF. */
export const compareKeys = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/**
 * One page of a bucket listing, read from s3rver's directory layout (POSIX paths: s3rver
 * encodes keys only on Windows) in S3's key order. A key whose object vanishes during the
 * walk, or whose write has not finished (no ETag file yet: S3 lists only completed writes),
 * is not listed; a directory removed under the walk has no keys.
 */
export async function listPage(bucketPath: string, options: { prefix: string; delimiter: string; start: ListingMarker | null; maxKeys: number }): Promise<ListingPage> {
  const { prefix, delimiter, start, maxKeys } = options;
  const keys = (await keysUnder(bucketPath, '', prefix))
    .filter((key) => !start || (compareKeys(key, start.after) > 0 && !(start.prefix && key.startsWith(start.after))))
    .sort(compareKeys);
  const rolledUp = (key: string): string | null => {
    const at = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
    return at >= 0 ? key.slice(0, at + delimiter.length) : null;
  };
  const page: ListingPage = { objects: [], commonPrefixes: [], next: null };
  let last: ListingMarker | null = null;
  for (let from = 0; from < keys.length; from += LOOKUPS_AT_ONCE) {
    const batch = keys.slice(from, from + LOOKUPS_AT_ONCE);
    // the objects of a batch are looked up together, then taken in key order
    const objects = await Promise.all(batch.map((key) => (rolledUp(key) === null ? completedObject(bucketPath, key) : null)));
    for (const [index, key] of batch.entries()) {
      const commonPrefix = rolledUp(key);
      const object = objects[index];
      if (commonPrefix === null && !object) continue;
      if (commonPrefix !== null && last?.prefix && last.after === commonPrefix) continue;
      if (page.objects.length + page.commonPrefixes.length >= maxKeys) return { ...page, next: last };
      if (object) {
        page.objects.push(object);
        last = { after: key, prefix: false };
      } else if (commonPrefix !== null) {
        page.commonPrefixes.push(commonPrefix);
        last = { after: commonPrefix, prefix: true };
      }
    }
  }
  return page;
}

/** The keys of objects under `directory` (a key prefix ending in `/`, or '') that can start with `prefix`. */
async function keysUnder(bucketPath: string, directory: string, prefix: string): Promise<string[]> {
  const entries = await readdir(join(bucketPath, directory), { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return [];
    throw error;
  });
  const keys: string[] = [];
  const below: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory()) {
      const folder = `${directory}${entry.name}/`;
      if (directory === '' && entry.name === UPLOADS_DIRECTORY) continue;
      if (folder.startsWith(prefix) || prefix.startsWith(folder)) below.push(folder);
    } else if (entry.name.endsWith(OBJECT_SUFFIX)) {
      const key = `${directory}${entry.name.slice(0, -OBJECT_SUFFIX.length)}`;
      if (key.startsWith(prefix)) keys.push(key);
    }
  }
  for (const folderKeys of await Promise.all(below.map((folder) => keysUnder(bucketPath, folder, prefix)))) keys.push(...folderKeys);
  return keys;
}

async function completedObject(bucketPath: string, key: string): Promise<ListedObject | null> {
  const path = join(bucketPath, `${key}${OBJECT_SUFFIX}`);
  try {
    const [info, md5] = await Promise.all([stat(path), readFile(`${path}.md5`, 'utf8')]);
    return { key, size: info.size, lastModified: info.mtime, etag: JSON.stringify(md5) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
