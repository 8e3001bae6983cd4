import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { TestApp } from '../support/harness.ts';
import { MediaFile, MediaItem, type MediaFileRow, type MediaScope } from '../../api/src/media/entities.ts';

export interface ItemOptions {
  scope?: MediaScope;
  scopeProjectId?: string | null;
  displayName?: string | null;
  tags?: string[];
  behaviorDefaults?: Record<string, unknown>;
  createdAt?: Date;
  file?: Partial<Pick<MediaFileRow, 'status' | 'durationMs' | 'width' | 'height' | 'hasAudio' | 'waveformJson' | 'proxyStatus' | 'sizeBytes' | 'kind'>>;
}

/** A media item of the user with its file row, straight in the database (no stored object). */
export async function createItem(app: TestApp, userId: string, options: ItemOptions = {}) {
  const em = app.services.orm.em.fork();
  const fileId = randomUUID();
  const file = em.create(MediaFile, {
    id: fileId,
    uploaderId: userId,
    status: 'UPLOADED',
    storageKey: `media/${fileId}/source`,
    contentType: 'video/mp4',
    originalFilename: 'clip.mp4',
    declaredSizeBytes: 1000,
    sizeBytes: 1000,
    ...options.file,
  });
  const item = em.create(MediaItem, {
    id: randomUUID(),
    userId,
    file,
    scope: options.scope ?? 'library',
    scopeProjectId: options.scopeProjectId ?? null,
    displayName: options.displayName ?? null,
    tags: options.tags ?? [],
    behaviorDefaults: options.behaviorDefaults ?? {},
    ...(options.createdAt ? { createdAt: options.createdAt } : {}),
  });
  await em.flush();
  return { file, item };
}

/** A real file stored at S3 with its PROCESSING row and one library item of the user, as confirm leaves it. */
export async function storeItem(app: TestApp, userId: string, path: string, contentType: string, displayName = 'My clip') {
  const { storage } = app.services;
  const { file, item } = await createItem(app, userId, { displayName, file: { status: 'PROCESSING', sizeBytes: null } });
  await storage.client.send(new PutObjectCommand({ Bucket: storage.bucket, Key: file.storageKey, Body: await readFile(path), ContentType: contentType }));
  const em = app.services.orm.em.fork();
  await em.nativeUpdate(MediaFile, { id: file.id }, { contentType });
  return { file, item, key: file.storageKey };
}

/** Runs the artifact job on a stored item's file, as confirm would queue it. */
export function runArtifactJob(app: TestApp, userId: string, stored: { file: MediaFileRow; key: string }, contentType: string) {
  return app.services.jobs.submit(app.services.orm.em.fork(), {
    program: 'artifact',
    userId,
    mediaFileId: stored.file.id,
    input: { sourceKey: stored.key, contentType },
  });
}
