import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { BillingService } from '../billing/billing-service.ts';
import { tierLimits, watermarkRequired } from '../billing/tiers.ts';
import { Draft, type DraftRow } from '../drafts/entities.ts';
import { checkEditOverrides } from '../drafts/service.ts';
import { Job } from '../jobs/entities.ts';
import { removeJobFiles } from '../jobs/outcome.ts';
import type { JobService } from '../jobs/service.ts';
import type { ProjectRow } from '../projects/entities.ts';
import type { ProjectService } from '../projects/service.ts';
import type { Clock } from '../shared/clock.ts';
import { Conflict, Gone, Invalid, NotFound } from '../shared/errors.ts';
import { offsetOf, type PageRequest } from '../shared/page.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import { ownedBy } from '../accounts/ownership.ts';
import { Export, type ExportRow, type StoredExportSettings } from './entities.ts';
import { renderRequest } from './render-request.ts';
import { EXPORT_DEFAULTS, type ExportCreateInput } from './schemas.ts';

/** api.md Limits: the export download URL works for an hour. */
const DOWNLOAD_URL_TTL_SECONDS = 3600;
const DAY_MS = 24 * 3600 * 1000;

export interface ExportServiceDeps {
  projects: ProjectService;
  jobs: JobService;
  billing: BillingService;
  storage: ObjectStorage;
  clock: Clock;
  /** Exports of one user queued or rendering at once (EXPORT_MAX_ACTIVE_PER_USER). */
  maxActivePerUser: number;
  /** What one render may make and how long it may take (EXPORT_MAX_*, RENDER_TIMEOUT_*, JOB_TIMEOUT_SECONDS). */
  renderLimits: RenderLimits;
}

export interface RenderLimits {
  maxOutputSeconds: number;
  maxSegments: number;
  timeoutBaseSeconds: number;
  timeoutPerOutputSecond: number;
  /** JOB_TIMEOUT_SECONDS: the longest any job may run. */
  maxTimeoutSeconds: number;
}

/** A render's deadline follows its output's length: a short export that hangs is stopped soon, a long one gets its time. */
export function renderTimeoutSeconds(limits: RenderLimits, outputMs: number): number {
  return Math.min(limits.maxTimeoutSeconds, Math.ceil(limits.timeoutBaseSeconds + (limits.timeoutPerOutputSecond * outputMs) / 1000));
}

/**
 * Exports of a project: created with their render job in one transaction, listed, and
 * downloaded through a presigned URL; the sweep deletes outputs past `expires_at`.
 */
export class ExportService {
  readonly #d: ExportServiceDeps;

  constructor(deps: ExportServiceDeps) {
    this.#d = deps;
  }

  /**
   * The export and its render job, or nothing: settings resolved (request, then draft,
   * then defaults), inline overrides checked against the timeline, the tier's retention and
   * watermark fixed now. 409 while a source is processing or too many renders are running.
   */
  async create(em: EntityManager, userId: string, projectId: string, input: ExportCreateInput): Promise<ExportRow> {
    const project = await this.#d.projects.owned(em, userId, projectId);
    const draft = input.draft_id ? await this.#draft(em, project.id, input.draft_id) : null;
    if (draft && input.export_settings.edit_overrides) throw Invalid('exports.overrides_with_draft', { code: 'ValidationError' });
    const inline = input.export_settings.edit_overrides;
    // A saved draft's overrides were checked when it was saved (api.md); inline ones are checked here.
    if (inline) await checkEditOverrides(em, project.id, inline);
    const settings = resolveSettings(input.export_settings, draft);
    const tier = await this.#d.billing.tierOf(em, userId);
    const now = this.#d.clock.now();

    return em.transactional(async (tx) => {
      // One user's creations queue behind each other, so the cap counts what the others committed.
      await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`exports:${userId}`]);
      const active = await tx.count(Export, { userId, status: { $in: ['queued', 'rendering'] } });
      if (active >= this.#d.maxActivePerUser) throw Conflict('exports.too_many_active', { params: { max: this.#d.maxActivePerUser } });
      const id = randomUUID();
      const required = watermarkRequired(tier);
      const renderInput = await renderRequest(tx, project, settings, required);
      const outputMs = this.#checkRenderSize(renderInput);
      const row = tx.create(Export, {
        id,
        project,
        userId,
        draftId: draft?.id ?? null,
        name: input.name,
        exportSettings: settings,
        status: 'queued',
        expiresAt: new Date(now.getTime() + tierLimits(tier).exportRetentionDays * DAY_MS),
        watermarkRequired: required,
        filename: downloadFilename(project, input.name, settings),
      });
      const timeoutSeconds = renderTimeoutSeconds(this.#d.renderLimits, outputMs);
      const job = await this.#d.jobs.submit(tx, { program: 'render', userId, projectId: project.id, subjectId: id, input: renderInput, timeoutSeconds });
      row.jobId = job.id;
      await tx.flush();
      return row;
    });
  }

  /** The project's exports, newest first. */
  async list(em: EntityManager, userId: string, projectId: string, page: PageRequest): Promise<{ rows: ExportRow[]; total: number }> {
    await this.#d.projects.owned(em, userId, projectId);
    const [rows, total] = await em.findAndCount(Export, { project: projectId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: page.items_per_page, offset: offsetOf(page) });
    return { rows, total };
  }

  async get(em: EntityManager, userId: string, exportId: string): Promise<ExportRow> {
    return ownedBy(await em.findOne(Export, exportId), userId, { notFound: 'exports.not_found' });
  }

  /** A presigned GET saved under the export's filename: 409 before it completed or after it failed, 410 once expired. */
  async download(em: EntityManager, userId: string, exportId: string): Promise<{ uuid: string; url: string; expires_in: number; filename: string; sidecars: Sidecar[] }> {
    const row = await this.get(em, userId, exportId);
    if (row.status === 'expired' || (row.status === 'completed' && row.expiresAt <= this.#d.clock.now())) throw Gone('exports.expired', { params: { expired_at: row.expiresAt.toISOString() } });
    if (row.status !== 'completed' || !row.storageKey) throw Conflict('exports.not_ready', { params: { status: row.status } });
    const url = await this.#d.storage.presignGet(row.storageKey, DOWNLOAD_URL_TTL_SECONDS, { contentType: 'video/mp4', disposition: { attachment: row.filename } });
    return { uuid: row.id, url, expires_in: DOWNLOAD_URL_TTL_SECONDS, filename: row.filename, sidecars: sidecarsOf(row) };
  }

  /**
   * Deletes an export whatever its state: a render still queued or running is cancelled
   * first (the local runner stops its process, the cluster's resource is deleted; the job
   * settles once, as cancelled), then the row goes and its output with it. A render that
   * ends after the row went leaves nothing behind (the completion deletes its output).
   */
  async remove(em: EntityManager, userId: string, exportId: string): Promise<void> {
    const row = await this.get(em, userId, exportId);
    const { jobId, storageKey } = row;
    if (jobId) await this.#d.jobs.cancel(em, jobId);
    await em.fork().nativeDelete(Export, { id: row.id });
    if (storageKey) await this.#d.storage.delete(storageKey);
    // a job settled already (rendered, failed, cancelled before it ran) leaves its files to us; one still ending removes them as it settles
    const job = jobId ? await em.fork().findOne(Job, jobId) : null;
    if (job?.completedAt) await removeJobFiles(this.#d.storage, job.outputPrefix);
  }

  /** 409 naming the limit when the output is longer, or joins more pieces, than one render may; the output's length otherwise. */
  #checkRenderSize(input: { segments: readonly { sourceStartMs: number; sourceEndMs: number }[] }): number {
    const { maxOutputSeconds, maxSegments } = this.#d.renderLimits;
    if (input.segments.length > maxSegments) throw Conflict('exports.too_many_segments', { params: { segments: input.segments.length, max: maxSegments } });
    const outputMs = input.segments.reduce((sum, segment) => sum + (segment.sourceEndMs - segment.sourceStartMs), 0);
    if (outputMs > maxOutputSeconds * 1000) throw Conflict('exports.too_long', { params: { seconds: Math.ceil(outputMs / 1000), max_seconds: maxOutputSeconds } });
    return outputMs;
  }

  /** Account deletion: the outputs go after the commit (the rows go with the projects). */
  async deleteAccountExports(tx: EntityManager, userId: string): Promise<() => Promise<void>> {
    const rows = await tx.execute<{ storage_key: string }[]>(`select storage_key from exports where user_id = ? and storage_key is not null`, [userId]);
    return async () => {
      for (const row of rows) await this.#d.storage.delete(row.storage_key).catch(() => undefined);
    };
  }

  async #draft(em: EntityManager, projectId: string, draftId: string): Promise<DraftRow> {
    const draft = await em.findOne(Draft, { id: draftId, project: projectId });
    if (!draft) throw NotFound('exports.draft_not_found');
    return draft;
  }
}

interface Sidecar {
  format: 'srt' | 'vtt' | 'words' | 'chapters';
  filename: string;
  path: string;
}

/** The files beside an export's video (api/src/interchange serves them), named after it. */
function sidecarsOf(row: ExportRow): Sidecar[] {
  const stem = row.filename.replace(/\.mp4$/, '');
  const names = { srt: `${stem}.srt`, vtt: `${stem}.vtt`, words: `${stem}.words.json`, chapters: `${stem}.chapters.txt` } as const;
  return (['srt', 'vtt', 'words', 'chapters'] as const).map((format) => ({ format, filename: names[format], path: `/api/v1/projects/${row.project.id}/captions?format=${format}&export_id=${row.id}` }));
}

/**
 * Completed exports past `expires_at` become `expired` and lose their output. Rows are
 * claimed with SKIP LOCKED and a conditional update, so instances sweeping at once delete
 * each object once; a delete that fails is reported (the row stays expired, the key is
 * left for the storage reconciler).
 */
export async function sweepExpiredExports(em: EntityManager, storage: ObjectStorage, now: Date, limit = 100): Promise<{ expired: number; failedDeletes: string[] }> {
  const claimed = await em.getConnection().execute<{ id: string; storage_key: string | null }[]>(
    `update exports set status = 'expired', updated_at = now()
      where id in (select id from exports where status = 'completed' and expires_at <= ? order by expires_at limit ? for update skip locked)
      returning id, storage_key`,
    [now, limit],
  );
  const failedDeletes: string[] = [];
  for (const row of claimed) {
    if (!row.storage_key) continue;
    const key = row.storage_key;
    await storage.delete(key).catch(() => failedDeletes.push(key));
  }
  return { expired: claimed.length, failedDeletes };
}

/** What is rendered: each field from the request, else the draft's, else the default. */
export function resolveSettings(request: ExportCreateInput['export_settings'], draft: Pick<DraftRow, 'editOverrides' | 'exportSettings'> | null): StoredExportSettings {
  const saved = draft?.exportSettings ?? {};
  const crop = saved.crop_enabled ? { zoom: saved.crop_zoom ?? 1, pan_x: saved.crop_pan_x ?? 0, pan_y: saved.crop_pan_y ?? 0 } : null;
  return {
    resolution: request.resolution ?? saved.resolution ?? EXPORT_DEFAULTS.resolution,
    aspect_ratio: request.aspect_ratio ?? saved.aspect_ratio ?? EXPORT_DEFAULTS.aspect_ratio,
    letterbox_background: (request.letterbox_background ?? EXPORT_DEFAULTS.letterbox_background).toLowerCase(),
    audio_censorship: request.audio_censorship ?? EXPORT_DEFAULTS.audio_censorship,
    video_flip_h: request.video_flip_h ?? EXPORT_DEFAULTS.video_flip_h,
    video_flip_v: request.video_flip_v ?? EXPORT_DEFAULTS.video_flip_v,
    audio: { ...EXPORT_DEFAULTS.audio, ...definedOf(request.audio ?? {}) },
    captions: { ...EXPORT_DEFAULTS.captions, ...definedOf(request.captions ?? {}) },
    edit_overrides: request.edit_overrides ?? draft?.editOverrides ?? {},
    crop: crop && crop.zoom > 1 ? crop : null,
    // a draft holds no such key (api.md DraftSettings): the request's, else the default
    snap_cuts_to_keyframes: request.snap_cuts_to_keyframes ?? EXPORT_DEFAULTS.snap_cuts_to_keyframes,
  };
}

function definedOf<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}

/** "<project> - <export> - 1080p 9x16.mp4", safe on every file system. */
export function downloadFilename(project: Pick<ProjectRow, 'name'>, exportName: string, settings: Pick<StoredExportSettings, 'resolution' | 'aspect_ratio'>): string {
  const clean = (text: string) => text.replace(/[\\/:*?"<>|\p{Cc}]+/gu, ' ').replace(/\s+/g, ' ').trim();
  const names = [clean(project.name), clean(exportName)].filter((name, index, all) => name !== '' && all.indexOf(name) === index);
  const stem = [...names, `${settings.resolution} ${settings.aspect_ratio.replace(':', 'x')}`].join(' - ');
  return `${stem.slice(0, 240).trim()}.mp4`;
}
