import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobContext } from '../../../lib/job-program.ts';
import type { JobSpec } from '../../../lib/job-spec.ts';
import { artifactProgram } from '../artifact/artifact-program.ts';
import type { ArtifactResult } from '../../../../crds/contract/programs/artifact.ts';
import { percentOf, type StepOf } from '../../../../crds/contract/programs.ts';

/**
 * Runs the artifact program on an object this job just stored (an edit's output, an
 * imported video), in the same job: the new file then settles in one completion with
 * its metadata, so no second job has to be chained from a completion handler.
 * The artifact program's progress is this job's `describe` step.
 */
export async function artifactsOfStoredOutput(
  spec: JobSpec<unknown>,
  ctx: JobContext<'describe'>,
  stored: { key: string; contentType: string },
): Promise<ArtifactResult> {
  const workDir = join(ctx.workDir, 'artifact');
  await mkdir(workDir, { recursive: true });
  const progress: JobContext<StepOf<'artifact'>>['progress'] = {
    report: (step, fraction) => ctx.progress.report('describe', percentOf('artifact', step, fraction) / 100),
    flush: () => ctx.progress.flush(),
  };
  return artifactProgram.run({ ...spec, input: { sourceKey: stored.key, contentType: stored.contentType } }, { ...ctx, workDir, progress, outputKey: ctx.outputKey });
}
