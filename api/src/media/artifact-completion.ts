import { LockMode, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import type { ArtifactResult } from '../../../crds/contract/programs/artifact.ts';
import type { OutcomeEvent } from '../events/bus.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import { InvalidResult, type AfterCommit, type CompletionHandler, type JobFailed, type Settlement } from '../jobs/completion.ts';
import { isNotFound } from '../../../crds/contract/s3-client.ts';
import { z } from 'zod';
import { releaseWaitingJobs } from '../jobs/requests.ts';
import type { JobRow } from '../jobs/entities.ts';
import { MediaFile, MediaItem, type MediaFileRow, type MediaItemRow } from './entities.ts';
import { deleteObjects } from './file-objects.ts';
import { failureColumns, failureTextsForOwners } from './failure-events.ts';

export interface ArtifactCompletionDeps {
  storage: ObjectStorage;
  orm: MikroORM;
  /** How long an image plays on the timeline (IMAGE_STILL_DURATION_MS): recorded as its duration_ms. */
  stillDurationMs: number;
}

/** What the artifact completion reads from the store before its transaction: the waveform's peaks. */
export interface ArtifactLoaded {
  peaks: number[] | null;
}

/**
 * Settles artifact jobs: the file becomes UPLOADED with its metadata (or FAILED), and
 * each of its items' owners hears `media_ready` (or `media_failed`). Identical content
 * already stored is kept once: this file's items move onto the existing file (serialised
 * per hash by an advisory lock; a partial unique index on UPLOADED hashes backs it), and
 * only their owners hear media_ready, naming this upload's own file id.
 * Video browsers cannot play gets its proxy from the `proxy` job started after the commit.
 */
export function artifactCompletion(deps: ArtifactCompletionDeps): CompletionHandler<'artifact', ArtifactLoaded> & Required<Pick<CompletionHandler<'artifact', ArtifactLoaded>, 'load'>> {
  return {
    async load(_job, result) {
      const waveformKey = result.artifacts.waveform_key;
      return { peaks: waveformKey ? await readPeaks(deps.storage, waveformKey) : null };
    },

    async succeeded(em, job, result, loaded) {
      if (!job.mediaFileId) return;
      const file = await em.findOne(MediaFile, job.mediaFileId, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const outputKeys = Object.values(result.artifacts).filter((key): key is string => key !== null);
      // deleted while processing: the delete ran before these outputs existed
      if (!file) return () => deleteObjects(deps.storage, outputKeys);
      const staging = stagingOf(file);

      // one completion per hash at a time, so a concurrent identical upload's commit is seen here (the unique index is the backstop)
      await em.getConnection().execute(`select pg_advisory_xact_lock(hashtext('media_files.sha256:' || ?))`, [result.sha256], 'all', em.getTransactionContext());
      // share-locked so a concurrent delete of the twin cannot leave the moved items pointing at nothing
      const twin = await em.findOne(MediaFile, { sha256Hash: result.sha256, status: 'UPLOADED', id: { $ne: file.id } }, { lockMode: LockMode.PESSIMISTIC_READ });
      if (twin) {
        // media_ready goes to this upload's own items, naming the file id their client was given: the twin's id, or an
        // event to the twin's other owners, would tell someone that another user had stored the same bytes before.
        // Read as plain rows: managed items of the file removed below would be flushed with it.
        const own = await em.getConnection().execute<{ id: string; user_id: string; display_name: string | null }[]>(
          `select id, user_id, display_name from media_items where media_file_id = ?`,
          [file.id],
          'all',
          em.getTransactionContext(),
        );
        const events = own.map((row) => readyEvent({ id: row.id, userId: row.user_id, displayName: row.display_name }, file.id, twin.proxyStatus));
        // each keeps the id and name its client uploaded (an item folded before keeps its first ones)
        await em.getConnection().execute(
          `update media_items set media_file_id = ?, uploaded_file_id = coalesce(uploaded_file_id, ?), uploaded_filename = coalesce(uploaded_filename, ?) where media_file_id = ?`,
          [twin.id, file.id, file.originalFilename, file.id],
          'run',
          em.getTransactionContext(),
        );
        // the same bytes have the same keyframes: a twin probed before they were listed gains them
        if (result.keyframes_ms) {
          await em.getConnection().execute(`update media_files set keyframes_ms = ?::jsonb where id = ? and keyframes_ms is null`, [JSON.stringify(result.keyframes_ms), twin.id], 'run', em.getTransactionContext());
        }
        // edits asked for while this file processed read the twin's bytes (the same content)
        await releaseWaitingJobs(em, file.id, { sourceKey: twin.storageKey, durationMs: twin.durationMs ?? null });
        const orphanKeys = [file.storageKey, ...staging, ...outputKeys];
        em.remove(file);
        await em.flush();
        return { events, afterCommit: () => deleteObjects(deps.storage, orphanKeys) };
      }

      em.assign(file, {
        status: 'UPLOADED',
        sha256Hash: result.sha256,
        kind: result.kind,
        durationMs: playedDurationMs(result, deps.stillDurationMs),
        width: result.width,
        height: result.height,
        hasAudio: result.has_audio,
        videoCodec: result.video_codec,
        audioCodec: result.audio_codec,
        container: result.container,
        frameRateNum: result.frame_rate?.num ?? null,
        frameRateDen: result.frame_rate?.den ?? null,
        waveformJson: loaded?.peaks ?? null,
        keyframesMs: result.keyframes_ms ?? null,
        thumbnailKey: result.artifacts.thumbnail_key,
        audioKey: result.artifacts.audio_key,
        proxyStatus: result.proxy_status,
        uploadKey: null,
        error: null,
      });
      await em.flush();
      await releaseWaitingJobs(em, file.id, { sourceKey: file.storageKey, durationMs: file.durationMs ?? null });
      const settlement: Settlement = {
        // the staging object goes first (events follow the after-commit work): by the time the uploader hears media_ready it is no longer stored
        afterCommit: () => deleteObjects(deps.storage, staging),
        events: await readyEvents(em, file),
      };
      if (result.proxy_status === 'pending') {
        settlement.followUps = [{ program: 'proxy', ...(job.projectId ? { projectId: job.projectId } : {}), mediaFileId: file.id, input: { sourceKey: file.storageKey, contentType: file.contentType } }];
      }
      return settlement;
    },
    failed: (em, job, failure) => markFailed(em, job, failure, deps),
  };
}

/**
 * How long the file plays: what the program measured, and for an image (which has no
 * length of its own) the still duration, as editors place a still; without it an image kept
 * duration_ms null, so its project's timeline had no total and could never be exported.
 */
function playedDurationMs(result: ArtifactResult, stillDurationMs: number): number | null {
  return result.kind === 'image' ? result.duration_ms ?? stillDurationMs : result.duration_ms;
}

/** The upload's staging object, once the job has read it: nothing serves it, so it goes with the settlement. */
function stagingOf(file: MediaFileRow): string[] {
  return file.uploadKey && file.uploadKey !== file.storageKey ? [file.uploadKey] : [];
}

/** The waveform the program wrote (its peaks, or a document holding them): in the contract's shape, or an invalid result. */
const waveformSchema = z.union([z.array(z.number()), z.object({ peaks: z.array(z.number()) })]);

async function readPeaks(storage: ObjectStorage, key: string): Promise<number[]> {
  let waveform: unknown;
  try {
    waveform = await storage.readJson<unknown>(key);
  } catch (error) {
    // a store outage is thrown (the completion is retried); a missing or unparseable object is the job's fault
    if (isNotFound(error) || error instanceof SyntaxError) throw new InvalidResult(`The artifact result names ${key}, which could not be read.`);
    throw error;
  }
  const parsed = waveformSchema.safeParse(waveform);
  if (!parsed.success) throw new InvalidResult(`The waveform ${key} is not a list of peaks.`);
  return Array.isArray(parsed.data) ? parsed.data : parsed.data.peaks;
}

/** media_ready for every item of the file, to each item's owner. */
async function readyEvents(em: EntityManager, file: MediaFileRow): Promise<OutcomeEvent[]> {
  const items = await em.find(MediaItem, { file: file.id });
  return items.map((item) => readyEvent(item, file.id, file.proxyStatus));
}

/** media_ready of one item to its owner, naming the file id its client holds. */
function readyEvent(item: Pick<MediaItemRow, 'id' | 'userId' | 'displayName'>, mediaFileId: string, proxyStatus: MediaFileRow['proxyStatus']): OutcomeEvent {
  return {
    to: 'user',
    userId: item.userId,
    event: { type: 'media_ready', data: { media_file_uuid: mediaFileId, media_item_uuid: item.id, display_name: item.displayName ?? null, proxy_status: proxyStatus } },
  };
}

async function markFailed(em: EntityManager, job: JobRow, failure: JobFailed, deps: { storage: ObjectStorage }) {
  if (!job.mediaFileId) return;
  const file = await em.findOne(MediaFile, job.mediaFileId);
  if (!file) return;
  const staging = stagingOf(file);
  em.assign(file, { status: 'FAILED', uploadKey: null, ...failureColumns(failure) });
  await em.flush();
  // edits waiting for it run and fail on their own (there are no bytes to read)
  await releaseWaitingJobs(em, file.id);
  const items = await em.find(MediaItem, { file: file.id });
  const textFor = await failureTextsForOwners(em, items.map((item) => item.userId), failure);
  return {
    afterCommit: () => deleteObjects(deps.storage, staging),
    events: items.map((item) => failedEvent(item, file.id, textFor(item.userId))),
  };
}

/** media_failed of one item, to its owner. */
export function failedEvent(item: Pick<MediaItemRow, 'id' | 'userId' | 'displayName'>, fileId: string, error: string): OutcomeEvent {
  return { to: 'user', userId: item.userId, event: { type: 'media_failed', data: { media_file_uuid: fileId, media_item_uuid: item.id, display_name: item.displayName ?? null, error } } };
}
