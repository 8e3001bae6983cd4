import type { ProgramName } from '../../../crds/contract/programs.ts';
import type { JobRow } from './entities.ts';

/**
 * What a job is for beyond its user, project and media file, by program: the api's
 * bookkeeping, kept in the job row's `subject_id`, never in the program's input.
 */
interface Subjects {
  /** The export the render makes. */
  render: { subjectId: string };
  /** The analysis run the job fills. */
  analyze: { subjectId: string };
  /** With save_mode replace, the media item repointed at the edited file once it is ready. */
  'media-edit': { subjectId?: string };
}

/** The subject field of a request for program `P` (none for programs without a subject). */
export type SubjectOf<P extends ProgramName> = P extends keyof Subjects ? Subjects[P] : { subjectId?: never };

/**
 * Where a version before `subject_id` kept the subject, inside the program's input: rows an
 * older api wrote during a rolling upgrade (after this version's migration ran) still settle.
 */
const LEGACY_INPUT_FIELD: Partial<Record<ProgramName, string>> = { render: 'export_id', analyze: 'run_id', 'media-edit': 'replaceItemId' };

/** The job's subject: its column, or for a row an older version wrote, the input field it used. */
export function subjectOf(job: Pick<JobRow, 'program' | 'subjectId' | 'input'>): string | undefined {
  if (job.subjectId) return job.subjectId;
  const legacy = LEGACY_INPUT_FIELD[job.program as ProgramName];
  const value = legacy ? job.input[legacy] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** The subject of a job whose program requires one. */
export function requiredSubject(job: Pick<JobRow, 'id' | 'program' | 'subjectId' | 'input'>): string {
  const subject = subjectOf(job);
  if (!subject) throw new Error(`job ${job.id} (${job.program}) has no subject`);
  return subject;
}
