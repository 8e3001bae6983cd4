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

/** The subject of a job whose program requires one. */
export function requiredSubject(job: Pick<JobRow, 'id' | 'program' | 'subjectId'>): string {
  if (!job.subjectId) throw new Error(`job ${job.id} (${job.program}) has no subject`);
  return job.subjectId;
}
