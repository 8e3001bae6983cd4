import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Announcer } from '../events/announcer.ts';
import type { StreamEvent } from '../events/catalog.ts';
import type { CompletionHandler, JobFailed } from '../jobs/completion.ts';
import type { JobRow } from '../jobs/entities.ts';
import { removeJobFiles } from '../jobs/outcome.ts';
import { requiredSubject } from '../jobs/subjects.ts';
import { failureColumns, failureTextsForOwners } from '../media/failure-events.ts';
import type { ObjectStorage } from '../storage/storage.ts';
import { Export } from './entities.ts';

/** The project-stream events of an export's outcome (declared in events/catalog.ts). */
type ExportEvent = StreamEvent<'export_complete' | 'export_failed'>;

export interface RenderCompletionDeps {
  storage: ObjectStorage;
  logger: Logger;
  /** Sends export_started (and its webhook, recorded in the transaction that marks the export rendering) once it commits. */
  announcer: Pick<Announcer, 'announce'>;
}

/** The export a render makes is its job's subject. */
const exportIdOf = (job: JobRow) => requiredSubject(job);

/**
 * Settles `render` jobs. Started: the export is `rendering` and `export_started` goes out.
 * The outcome events are the settlement's (saved with it, published once after it).
 * Success: `completed` with its output, then `export_complete`. Failure (the program's, a
 * timeout, a kill, a lost job): `failed` with a stable code, then `export_failed` in the
 * owner's language. An export deleted meanwhile (its project or account went) leaves
 * nothing behind: its job's files (output, result.json or error.json) are deleted.
 */
export function renderCompletion(deps: RenderCompletionDeps): CompletionHandler<'render'> {
  return {
    async started(em, job) {
      const exportId = exportIdOf(job);
      const moved = await em.nativeUpdate(Export, { id: exportId, status: 'queued' }, { status: 'rendering' });
      if (moved === 0 || !job.projectId) return;
      return deps.announcer.announce(em, exportId, { to: 'project', projectId: job.projectId, event: { type: 'export_started', data: { export_uuid: exportId } } });
    },

    async succeeded(em, job, result) {
      const exportId = exportIdOf(job);
      const row = await em.findOne(Export, exportId);
      if (!row || !job.projectId) return { afterCommit: () => removeJobFiles(deps.storage, job.outputPrefix) };
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
  // a deleted export's render (cancelled, or ending after the delete) leaves no error.json behind
  if (!row || !job.projectId) return { afterCommit: () => removeJobFiles(deps.storage, job.outputPrefix) };
  em.assign(row, { status: 'failed', ...failureColumns(failure), completedAt: new Date() });
  await em.flush();
  const error = (await failureTextsForOwners(em, [job.userId], failure))(job.userId);
  deps.logger.info({ job_id: job.id, export_id: exportId, code: failure.code }, 'export failed');
  return { events: [{ to: 'project' as const, projectId: job.projectId, event: { type: 'export_failed', data: { export_uuid: exportId, error } } satisfies ExportEvent }] };
}
