import { randomUUID } from 'node:crypto';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ownedBy } from '../../accounts/ownership.ts';
import { Conflict, Invalid } from '../../shared/errors.ts';
import type { MessageKey, MessageParams } from '../../i18n/index.ts';
import type { JobService } from '../../jobs/service.ts';
import { MediaFile, MediaItem, type MediaFileRow } from '../entities.ts';

const Cut = z.object({ start_ms: z.number().int().min(0), end_ms: z.number().int().min(0) });

export const EditRequest = z
  .object({
    start_ms: z.number().int().min(0).optional().describe('Default 0.'),
    end_ms: z.number().int().min(0).optional().describe('Default: the whole file.'),
    extract_audio: z.boolean().describe('Audio only, as .m4a (AAC).'),
    save_mode: z.enum(['copy', 'replace']).describe('copy: a new library item; replace: this item is repointed at the edited file once it is ready.'),
    fast_mode: z.boolean().describe('Stream copy with cuts snapped to keyframes (H.264/AAC sources); otherwise an exact re-encode.'),
    cuts: z.array(Cut).max(1000).optional().describe('Regions to remove; clipped to [start_ms, end_ms), overlapping cuts merge.'),
  })
  .meta({ id: 'MediaEditRequest' });

export type EditInput = z.infer<typeof EditRequest>;

export const EditAccepted = z.object({ new_media_item_uuid: z.uuid() }).meta({ id: 'MediaEditAccepted' });

const invalid = (key: MessageKey, params: MessageParams = {}) => Invalid(key, { code: 'ValidationError', params });

/**
 * The spec's media edit bounds: start, end and every cut's end within duration_ms
 * (skipped while it is null: the worker clamps), end > start, each cut's end > its start.
 * Cuts that remove the whole known range are refused too, as nothing would be left.
 */
function checkEditBounds(input: EditInput, durationMs: number | null): void {
  const cuts = input.cuts ?? [];
  if (durationMs !== null) {
    const fields: [string, number | undefined][] = [['start_ms', input.start_ms], ['end_ms', input.end_ms], ...cuts.map((cut, index): [string, number] => [`cuts[${index}].end_ms`, cut.end_ms])];
    for (const [field, value] of fields) {
      if (value !== undefined && value > durationMs) throw invalid('media_edit.beyond_duration', { field, value_ms: value, duration_ms: durationMs });
    }
  }
  const start = input.start_ms ?? 0;
  const end = input.end_ms ?? durationMs;
  if (end !== null && end <= start) throw invalid('media_edit.end_before_start', { start_ms: start, end_ms: end });
  cuts.forEach((cut, index) => {
    if (cut.end_ms <= cut.start_ms) throw invalid('media_edit.cut_end_before_start', { index, start_ms: cut.start_ms, end_ms: cut.end_ms });
  });
  if (end !== null && coveredMs(cuts, start, end) >= end - start) throw invalid('media_edit.nothing_left');
}

/** How much of [start, end) the cuts cover together. */
function coveredMs(cuts: readonly { start_ms: number; end_ms: number }[], start: number, end: number): number {
  let covered = 0;
  let cursor = start;
  for (const cut of [...cuts].sort((a, b) => a.start_ms - b.start_ms)) {
    const from = Math.max(cut.start_ms, cursor);
    const to = Math.min(cut.end_ms, end);
    if (to > from) covered += to - from;
    cursor = Math.max(cursor, to);
  }
  return covered;
}

function editedName(file: MediaFileRow, audioOnly: boolean): string {
  const stem = file.originalFilename.replace(/\.[^.]*$/, '') || 'media';
  return `${stem}-edited.${audioOnly ? 'm4a' : 'mp4'}`.slice(-255);
}

/** POST /media/{id}/edit: validates, creates the edited file (and for copy its item), queues the media-edit job. */
export class MediaEditService {
  readonly #jobs: JobService;

  constructor(deps: { jobs: JobService }) {
    this.#jobs = deps.jobs;
  }

  async requestEdit(em: EntityManager, userId: string, itemId: string, input: EditInput): Promise<z.infer<typeof EditAccepted>> {
    const created = await em.transactional(async (tx) => {
      // the item's row alone is locked (two replace edits of it cannot both see it not pending); its file is only read
      const item = ownedBy(await tx.findOne(MediaItem, itemId, { lockMode: LockMode.PESSIMISTIC_WRITE }), userId, { notFound: 'media_edit.item_not_found' });
      if (item.scope !== 'library') throw invalid('media_edit.project_scoped');
      const source = await tx.findOneOrFail(MediaFile, item.file.id);
      // A source still PROCESSING is edited too (duration_ms null: bounds unchecked, the worker
      // clamps), but its job waits until the file settles: until then its bytes are at no key the
      // job may read (an upload's at its client-writable staging key, an import's in its job's outputs).
      const processing = source.status === 'PROCESSING';
      if (source.status !== 'UPLOADED' && !processing) throw Conflict('media_edit.not_ready', { params: { status: source.status.toLowerCase() } });
      if (input.save_mode === 'replace' && item.pendingFileId) throw Conflict('media_edit.replace_pending');
      if (source.kind === 'image' || source.contentType.startsWith('image/')) throw invalid('media_edit.not_editable');
      if (input.extract_audio && !processing && !source.hasAudio) throw invalid('media_edit.no_audio');
      checkEditBounds(input, source.durationMs ?? null);

      const audioOnly = input.extract_audio || source.kind === 'audio';
      const fileId = randomUUID();
      // PENDING until the job settles it: the spec shows an edit's item as pending, then uploaded.
      const file = tx.create(MediaFile, {
        id: fileId,
        uploaderId: userId,
        status: 'PENDING',
        storageKey: `media/${fileId}/edited`,
        contentType: audioOnly ? 'audio/mp4' : 'video/mp4',
        originalFilename: editedName(source, audioOnly),
        declaredSizeBytes: 0,
      });
      const target =
        input.save_mode === 'copy'
          ? tx.create(MediaItem, {
              id: randomUUID(),
              userId,
              file,
              scope: 'library',
              displayName: item.displayName,
              tags: [...item.tags],
              behaviorDefaults: { ...item.behaviorDefaults },
            })
          : item;
      // replace: the item reads pending until the job settles (the spec's "created with status pending")
      if (input.save_mode === 'replace') item.pendingFileId = fileId;
      await tx.flush();
      // the job row is written with the edit's rows: both commit, or neither (the outbox dispatches it)
      await this.#jobs.submit(tx, {
        program: 'media-edit',
        userId,
        mediaFileId: file.id,
        ...(processing ? { waitsForFileId: source.id } : {}),
        ...(input.save_mode === 'replace' ? { subjectId: target.id } : {}),
        input: {
          sourceKey: source.storageKey,
          contentType: source.contentType,
          durationMs: source.durationMs ?? null,
          ...(input.start_ms !== undefined ? { startMs: input.start_ms } : {}),
          ...(input.end_ms !== undefined ? { endMs: input.end_ms } : {}),
          extractAudio: input.extract_audio,
          fastMode: input.fast_mode,
          cuts: (input.cuts ?? []).map((cut) => ({ startMs: cut.start_ms, endMs: cut.end_ms })),
        },
      });
      return { itemId: target.id };
    });
    return { new_media_item_uuid: created.itemId };
  }
}
