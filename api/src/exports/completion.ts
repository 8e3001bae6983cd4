import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { parseRenderStep, renderInputSchema, renderResultSchema } from '../../../crds/contract/programs/render.ts';
import { exportProgress, type ExportProgressMark, type ProgressPolicy } from '../events/progress-relay.ts';
import { translate, negotiateLocale, type Locale } from '../i18n/index.ts';
import type { CompletionHandler, JobFailed } from '../jobs/completion.ts';
import type { JobRow } from '../jobs/entities.ts';
import { failureColumns, failureTextsForOwners } from '../media/failure-events.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import { Export } from './entities.ts';

/** The project-stream events of an export (events/ delivers them). */
export type ExportEvent =
  | { type: 'export_started'; data: { export_uuid: string } }
  | { type: 'export_complete'; data: { export_uuid: string; storage_key: string } }
  | { type: 'export_failed'; data: { export_uuid: string; error: string } };

export interface RenderCompletionDeps {
  storage: ObjectStorage;
  logger: Logger;
  publish(projectId: string, event: ExportEvent): Promise<void>;
}

const exportIdOf = (job: Pick<JobRow, 'input'>) => renderInputSchema.shape.export_id.parse(job.input['export_id']);

/**
 * Settles `render` jobs. Started: the export is `rendering` and `export_started` goes out.
 * The outcome events are the settlement's (saved with it, published once after it).
 * Success: `completed` with its output, then `export_complete`. Failure (the program's, a
 * timeout, a kill, a lost job): `failed` with a stable code, then `export_failed` in the
 * owner's language. An export deleted meanwhile (its project or account went) leaves
 * nothing behind: its output is deleted.
 */
export function renderCompletion(deps: RenderCompletionDeps): CompletionHandler {
  return {
    async started(em, job) {
      const exportId = exportIdOf(job);
      const moved = await em.nativeUpdate(Export, { id: exportId, status: 'queued' }, { status: 'rendering' });
      if (moved === 0 || !job.projectId) return;
      const projectId = job.projectId;
      return () => deps.publish(projectId, { type: 'export_started', data: { export_uuid: exportId } });
    },

    async succeeded(em, job, raw) {
      const parsed = renderResultSchema.safeParse(raw);
      if (!parsed.success) return fail(em, job, { error: 'The render wrote a result that could not be read.', code: 'job.invalid_result' }, deps);
      const result = parsed.data;
      const exportId = exportIdOf(job);
      const row = await em.findOne(Export, exportId);
      if (!row || !job.projectId) return { afterCommit: () => deps.storage.delete(result.output_key) };
      em.assign(row, {
        status: 'completed',
        storageKey: result.output_key,
        sizeBytes: result.size_bytes,
        durationMs: result.duration_ms,
        renderPath: result.path,
        completedAt: new Date(),
      });
      await em.flush();
      deps.logger.info({ job_id: job.id, export_id: exportId, path: result.path, fallback_reason: result.fallback_reason, duration_ms: result.duration_ms, size_bytes: result.size_bytes }, 'export rendered');
      return { events: [{ to: 'project', projectId: job.projectId, event: { type: 'export_complete', data: { export_uuid: exportId, storage_key: result.output_key } } satisfies ExportEvent }] };
    },

    failed: (em, job, failure) => fail(em, job, failure, deps),
  };
}

async function fail(em: EntityManager, job: JobRow, failure: JobFailed, deps: RenderCompletionDeps) {
  const exportId = exportIdOf(job);
  const row = await em.findOne(Export, exportId);
  if (!row || !job.projectId) return;
  em.assign(row, { status: 'failed', ...failureColumns(failure), completedAt: new Date() });
  await em.flush();
  const error = (await failureTextsForOwners(em, [job.userId], failure))(job.userId);
  deps.logger.info({ job_id: job.id, export_id: exportId, code: failure.code }, 'export failed');
  return { events: [{ to: 'project' as const, projectId: job.projectId, event: { type: 'export_failed', data: { export_uuid: exportId, error } } satisfies ExportEvent }] };
}

/** The text of an export_progress mark, in the owner's language, with the encoder's own estimate of the time left. */
export function exportProgressText(locale: Locale, mark: ExportProgressMark, etaSeconds: number | null): string {
  const stage = translate(locale, `exports.progress.${mark}`);
  if (etaSeconds === null) return stage;
  return translate(locale, 'exports.progress.eta', { stage, eta: formatEta(etaSeconds) });
}

function formatEta(seconds: number): string {
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = Math.round(seconds % 60);
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}

/** `render` progress → export_progress at 5/30/85, texts in the export owner's language (read once per mark). */
export function renderProgress(ownerLocaleOfExport: (exportId: string) => Promise<string | null>): ProgressPolicy {
  return exportProgress(async (mark, job, report) => {
    const { etaSeconds } = parseRenderStep(report.step);
    const locale = negotiateLocale((await ownerLocaleOfExport(exportIdOf(job))) ?? undefined);
    return exportProgressText(locale, mark, etaSeconds);
  });
}
