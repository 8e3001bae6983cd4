import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { jobPrograms, type InputOf, type ProgramName } from '../../../crds/contract/programs.ts';
import { Job, type JobRow } from './entities.ts';
import type { SubjectOf } from './subjects.ts';

/**
 * A program, its input and its subject, for each program: the triple the api may request.
 * The input is what the program's registry schema accepts, so one it would refuse does not compile.
 */
type ProgramRequest = { [P in ProgramName]: { program: P; input: InputOf<P> } & SubjectOf<P> }[ProgramName];

interface JobRequestFields {
  userId: string;
  projectId?: string;
  mediaFileId?: string;
  /** Overrides JOB_TIMEOUT_SECONDS for this job. */
  timeoutSeconds?: number;
  /** AI minutes to hold for the job: reserved with the row, deducted on success, released otherwise. */
  creditMinutes?: number;
  /** Not handed to a backend before this media file is settled (`releaseWaitingJobs`): its bytes are not where the job reads yet. */
  waitsForFileId?: string;
}

export type JobRequest = JobRequestFields & ProgramRequest;

/**
 * A job a completion asks for next (Settlement.followUps): the finished job's user unless
 * it names another, no credits. Program and input stay paired (`Omit` over the union would
 * not keep them so).
 */
export type FollowUpRequest = Omit<JobRequestFields, 'userId' | 'creditMinutes'> & { userId?: string } & ProgramRequest;

/** The ledger reference of a job's reservation. */
export const jobCreditReference = (jobId: string) => `job:${jobId}`;

/** The row of a new job, in `em`'s unit of work (also used for the follow-ups a completion asks for). */
export function recordJob(em: EntityManager, backend: string, defaultTimeoutSeconds: number, request: JobRequest): JobRow {
  const id = randomUUID();
  return em.create(Job, {
    id,
    kind: jobPrograms[request.program].kind,
    program: request.program,
    userId: request.userId,
    projectId: request.projectId ?? null,
    mediaFileId: request.mediaFileId ?? null,
    subjectId: request.subjectId ?? null,
    input: request.input,
    outputPrefix: `jobs/${request.program}/${id}`,
    status: 'queued',
    backend,
    timeoutSeconds: request.timeoutSeconds ?? defaultTimeoutSeconds,
    creditMinutes: request.creditMinutes ?? null,
    waitsForFileId: request.waitsForFileId ?? null,
  });
}

/**
 * What a job waiting for a media file learns when the file settles: where its bytes are
 * now and how long it is. Only `media-edit` waits (an edit of a file still processing).
 */
export type WaitingJobPatch = Pick<InputOf<'media-edit'>, 'sourceKey' | 'durationMs'>;

/**
 * Lets the jobs waiting for a media file go, in the settling transaction, with what their
 * input could not know before. A file that failed or went releases them too, unpatched:
 * they fail on their own, with the program's message.
 */
export async function releaseWaitingJobs(em: EntityManager, fileId: string, patch?: WaitingJobPatch): Promise<void> {
  await em.execute(`update jobs set waits_for_file_id = null, input = input || ?::jsonb where waits_for_file_id = ? and completed_at is null`, [JSON.stringify(patch ?? {}), fileId]);
}
