import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ObjectStorage } from '../../api/src/storage/storage.ts';
import { MediaFile, MediaItem } from '../../api/src/media/entities.ts';

/** A file stored at S3 with its PROCESSING row and one library item, as the upload confirm leaves it. */
export async function storedUpload(deps: { storage: ObjectStorage; orm: MikroORM }, path: string, contentType: string, owner?: string) {
  const userId = owner ?? randomUUID();
  const fileId = randomUUID();
  const key = `media/${fileId}/source`;
  await deps.storage.client.send(new PutObjectCommand({ Bucket: deps.storage.bucket, Key: key, Body: await readFile(path), ContentType: contentType }));
  const em = deps.orm.em.fork();
  const file = em.create(MediaFile, {
    id: fileId,
    uploaderId: userId,
    status: 'PROCESSING',
    storageKey: key,
    contentType,
    originalFilename: 'clip',
    declaredSizeBytes: 1,
    sizeBytes: 1,
  });
  const item = em.create(MediaItem, { id: randomUUID(), userId, file, scope: 'library', displayName: 'My clip' });
  await em.flush();
  return { userId, file, item, key };
}
