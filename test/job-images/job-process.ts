import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Support for running a job image's real entrypoint (ffmpeg by default, or whisper) as a child process against an embedded S3. */
import { parseProgressLine, type ProgressLine } from '../../crds/contract/progress-lines.ts';
import type { ErrorFile } from '../../crds/contract/outcome.ts';
import { FFMPEG_IMAGE_MAIN, readProgramOutcome, runProgram, startJobBucket as startFixtureBucket } from '../../hack/fixtures/job-program.ts';

export type { JobBucket } from '../../hack/fixtures/job-program.ts';
/** The bucket the job-image tests run against (its name appears in the programs' messages). */
export const startJobBucket = () => startFixtureBucket('job-images-test');

export { FFMPEG_IMAGE_MAIN, WHISPER_IMAGE_MAIN } from '../../hack/fixtures/job-program.ts';

export interface JobProcessOutcome {
  exitCode: number | null;
  /** Every stdout line, in order. */
  lines: string[];
  /** The progress reports among them. */
  progress: ProgressLine[];
  /** result.json of the run, null when it wrote none. */
  result: Record<string, unknown> | null;
  /** error.json of the run, null when it wrote none. */
  error: ErrorFile | null;
  stderr: string;
  wallSeconds: number;
}

/**
 * Runs an image's entrypoint (ffmpeg by default) with a spec and a clean environment (no
 * inherited S3_*); its stdout parsed as progress, its outcome files read from the bucket.
 */
export async function runJobProcess(spec: { outputPrefix: string; [field: string]: unknown }, env: Record<string, string>, main = FFMPEG_IMAGE_MAIN): Promise<JobProcessOutcome> {
  const { exitCode, lines, stderr, wallSeconds } = await runProgram(main, spec, env);
  const { result, error } = await readProgramOutcome(env, spec.outputPrefix);
  return { exitCode, lines, progress: lines.map(parseProgressLine).filter((line): line is ProgressLine => line !== null), result, error, stderr, wallSeconds };
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
