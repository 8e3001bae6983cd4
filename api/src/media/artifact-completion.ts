import { LockMode, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { EventBus } from '../events/bus.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import type { AfterCommit, CompletionHandler, JobFailed } from '../jobs/completion.ts';
import type { JobRow } from '../jobs/entities.ts';
import type { JobService } from '../jobs/service.ts';
import { MediaFile, MediaItem, type MediaFileRow } from './entities.ts';
import { deleteObjects } from './file-objects.ts';
import { failureColumns, failureTextsForOwners } from './failure-events.ts';

/** The artifact program's result.json, as far as the api relies on it. */
const artifactResultSchema = z.object({
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size_bytes: z.number().int().min(0),
  kind: z.enum(['video', 'audio', 'image']),
  duration_ms: z.number().int().min(0).nullable(),
  width: z.number().int().positive().nullable(),
  height: z.number().int().positive().nullable(),
  has_audio: z.boolean(),
  video_codec: z.string().nullable(),
  audio_codec: z.string().nullable(),
  container: z.string(),
  // `ready` only from artifact jobs of before the proxy task, which made the proxy themselves.
  proxy_status: z.enum(['pending', 'ready', 'not_applicable']),
  artifacts: z.object({
    waveform_key: z.string().nullable(),
    thumbnail_key: z.string().nullable(),
    audio_key: z.string().nullable(),
    proxy_key: z.string().nullable(),
    sprite_key: z.string().nullable(),
  }),
  sprite: z.record(z.string(), z.number()).nullable(),
});

export type ArtifactResult = z.infer<typeof artifactResultSchema>;

export interface ArtifactCompletionDeps {
  bus: EventBus;
  storage: ObjectStorage;
  orm: MikroORM;
  /** Resolved when used: the job service is built from the completion this handler belongs to. */
  jobs: () => JobService;
}

/**
 * Settles artifact jobs: the file becomes UPLOADED with its metadata (or FAILED), and
 * each of its items' owners hears `media_ready` (or `media_failed`). Identical content
 * already stored is kept once: this file's items move onto the existing file (serialised
 * per hash by an advisory lock; a partial unique index on UPLOADED hashes backs it).
 * Video browsers cannot play gets its proxy from the `proxy` job started after the commit.
 */
export function artifactCompletion(deps: ArtifactCompletionDeps): CompletionHandler {
  return {
    async succeeded(em, job, raw) {
      const parsed = artifactResultSchema.safeParse(raw);
      if (!parsed.success) return markFailed(em, job, { error: `The artifact job returned an unreadable result: ${z.prettifyError(parsed.error)}` }, deps);
      const result = parsed.data;
      if (!job.mediaFileId) return;
      const file = await em.findOne(MediaFile, job.mediaFileId, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const outputKeys = Object.values(result.artifacts).filter((key): key is string => key !== null);
      // deleted while processing: the delete ran before these outputs existed
      if (!file) return () => deleteObjects(deps.storage, outputKeys);

      // one completion per hash at a time, so a concurrent identical upload's commit is seen here (the unique index is the backstop)
      await em.getConnection().execute(`select pg_advisory_xact_lock(hashtext('media_files.sha256:' || ?))`, [result.sha256], 'all', em.getTransactionContext());
      // share-locked so a concurrent delete of the twin cannot leave the moved items pointing at nothing
      const twin = await em.findOne(MediaFile, { sha256Hash: result.sha256, status: 'UPLOADED', id: { $ne: file.id } }, { lockMode: LockMode.PESSIMISTIC_READ });
      if (twin) {
        await em.nativeUpdate(MediaItem, { file: file.id }, { file: twin.id });
        const orphanKeys = [file.storageKey, ...outputKeys];
        em.remove(file);
        await em.flush();
        const publish = await readyEvents(em, twin, deps.bus);
        return async () => {
          await publish();
          await deleteObjects(deps.storage, orphanKeys);
        };
      }

      em.assign(file, {
        status: 'UPLOADED',
        sha256Hash: result.sha256,
        kind: result.kind,
        durationMs: result.duration_ms,
        width: result.width,
        height: result.height,
        hasAudio: result.has_audio,
        videoCodec: result.video_codec,
        audioCodec: result.audio_codec,
        container: result.container,
        waveformJson: result.artifacts.waveform_key ? await deps.storage.readJson<number[] | { peaks: number[] }>(result.artifacts.waveform_key).then(peaksOf) : null,
        thumbnailKey: result.artifacts.thumbnail_key,
        audioKey: result.artifacts.audio_key,
        proxyKey: result.artifacts.proxy_key,
        spriteKey: result.artifacts.sprite_key,
        sprite: result.sprite,
        proxyStatus: result.proxy_status,
        error: null,
      });
      await em.flush();
      const publish = await readyEvents(em, file, deps.bus);
      if (result.proxy_status !== 'pending') return publish;
      const proxyJob = {
        program: 'proxy',
        userId: job.userId,
        ...(job.projectId ? { projectId: job.projectId } : {}),
        mediaFileId: file.id,
        input: { sourceKey: file.storageKey, contentType: file.contentType },
      } as const;
      return async () => {
        await publish();
        await deps.jobs().submit(deps.orm.em.fork(), proxyJob);
      };
    },
    failed: (em, job, failure) => markFailed(em, job, failure, deps),
  };
}

function peaksOf(waveform: number[] | { peaks: number[] }): number[] {
  return Array.isArray(waveform) ? waveform : waveform.peaks;
}

/** media_ready for every item of the file, to each item's owner, after the commit. */
async function readyEvents(em: EntityManager, file: MediaFileRow, bus: EventBus): Promise<AfterCommit> {
  const items = await em.find(MediaItem, { file: file.id });
  return async () => {
    for (const item of items) {
      await bus.publishToUser(item.userId, {
        type: 'media_ready',
        data: { media_file_uuid: file.id, media_item_uuid: item.id, display_name: item.displayName ?? null, proxy_status: file.proxyStatus },
      });
    }
  };
}

async function markFailed(em: EntityManager, job: JobRow, failure: JobFailed, deps: { bus: EventBus }) {
  if (!job.mediaFileId) return;
  const file = await em.findOne(MediaFile, job.mediaFileId);
  if (!file) return;
  em.assign(file, { status: 'FAILED', ...failureColumns(failure) });
  await em.flush();
  const items = await em.find(MediaItem, { file: file.id });
  const textFor = await failureTextsForOwners(em, items.map((item) => item.userId), failure);
  return async () => {
    for (const item of items) {
      await deps.bus.publishToUser(item.userId, {
        type: 'media_failed',
        data: { media_file_uuid: file.id, media_item_uuid: item.id, display_name: item.displayName ?? null, error: textFor(item.userId) },
      });
    }
  };
}
