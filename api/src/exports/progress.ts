import { fractionOf, isStepAfter } from '../../../crds/contract/programs.ts';
import type { StreamEvent } from '../events/catalog.ts';
import type { ProgressPolicy, ProgressReport, ProjectJob } from '../events/progress-relay.ts';
import { jobText } from '../i18n/job-texts.ts';
import { negotiateLocale, type Locale } from '../i18n/locales.ts';

/** The spec's export progress marks. */
const EXPORT_PROGRESS_MARKS = [5, 30, 85] as const;
type ExportProgressMark = (typeof EXPORT_PROGRESS_MARKS)[number];

/** export_uuid: a user may run several exports at once, several in one project (declared in events/catalog.ts). */
type ExportProgressEvent = StreamEvent<'export_progress'>;

/** Share of the encode after which the render is "rendering" (30) rather than "preparing" (5). */
const RENDERING_FROM = 0.3;

/**
 * The spec's marks a `render` report has reached, from the program's own steps: 5 once
 * the sources are in and the encode began, 30 once the encode is well under way, 85 once
 * the encode is done (loudness, mux and upload are the finish).
 */
function reachedExportMarks(report: ProgressReport): ExportProgressMark[] {
  if (isStepAfter('render', report.step, 'encode')) return [5, 30, 85];
  if (report.step !== 'encode') return [];
  return fractionOf('render', 'encode', report.progress) >= RENDERING_FROM ? [5, 30] : [5];
}

/** The text of an export_progress mark, in the owner's language, with the encoder's own estimate of the time left. */
function exportProgressText(locale: Locale, mark: ExportProgressMark, etaSeconds: number | null): string {
  const stage = jobText(locale, `exports.progress.${mark}`);
  if (etaSeconds === null) return stage;
  return jobText(locale, 'exports.progress.eta', { stage, eta: formatEta(etaSeconds) });
}

function formatEta(seconds: number): string {
  if (seconds < 60) return `${Math.max(1, Math.round(seconds))} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = Math.round(seconds % 60);
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}

/** `render` progress → export_progress at 5/30/85, each once per job, texts in the export owner's language (read once per mark). */
export function renderProgress(ownerLocaleOfExport: (exportId: string) => Promise<string | null>): ProgressPolicy {
  return {
    kind: 'marks',
    reached: reachedExportMarks,
    event: async (job: ProjectJob, mark: number, report: ProgressReport): Promise<ExportProgressEvent> => {
      const progress = mark as ExportProgressMark;
      const locale = negotiateLocale((job.subjectId ? await ownerLocaleOfExport(job.subjectId) : null) ?? undefined);
      return { type: 'export_progress', data: { export_uuid: job.subjectId ?? null, progress, message: exportProgressText(locale, progress, report.etaSeconds) } };
    },
  };
}
