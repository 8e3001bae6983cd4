import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Support for running a job image's real entrypoint (ffmpeg by default, or whisper) as a child process against an embedded S3. */
import { parseJobEvent } from '../../crds/contract/job-events.ts';
import type { JobEvent } from '../../crds/contract/job-events.ts';
import { FFMPEG_IMAGE_MAIN, runProgram, startJobBucket as startFixtureBucket } from '../../hack/fixtures/job-program.ts';

export type { JobBucket } from '../../hack/fixtures/job-program.ts';
/** The bucket the job-image tests run against (its name appears in the programs' messages). */
export const startJobBucket = () => startFixtureBucket('job-images-test');

export { FFMPEG_IMAGE_MAIN, WHISPER_IMAGE_MAIN } from '../../hack/fixtures/job-program.ts';

export interface JobProcessOutcome {
  exitCode: number | null;
  /** Every stdout line, in order. */
  lines: string[];
  events: JobEvent[];
  stderr: string;
  wallSeconds: number;
}

/** Runs an image's entrypoint (ffmpeg by default) with a spec and a clean environment (no inherited S3_*), its stdout parsed as job events. */
export async function runJobProcess(spec: object, env: Record<string, string>, main = FFMPEG_IMAGE_MAIN): Promise<JobProcessOutcome> {
  const { exitCode, lines, stderr, wallSeconds } = await runProgram(main, spec, env);
  return { exitCode, lines, events: lines.map(parseJobEvent).filter((event): event is JobEvent => event !== null), stderr, wallSeconds };
}

/**
 * An ffmpeg that records each invocation's arguments (one line each) to the file named
 * by CUTROOM_TEST_FFMPEG_LOG, then runs the real one: how tests count decode passes.
 */
export async function recordingFfmpeg(dir: string): Promise<string> {
  const path = join(dir, 'ffmpeg-recording');
  await writeFile(path, '#!/bin/sh\nprintf "%s\\n" "$*" >> "$CUTROOM_TEST_FFMPEG_LOG"\nexec ffmpeg "$@"\n');
  await chmod(path, 0o755);
  return path;
}
