import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobContext } from '../../../lib/job-program.ts';
import type { JobSpec } from '../../../lib/job-spec.ts';
import type { ProgressReporter } from '../../../lib/progress.ts';
import { artifactProgram } from '../artifact/artifact-program.ts';
import type { ArtifactResult } from '../../../../crds/contract/programs/artifact.ts';

/**
 * Runs the artifact program on an object this job just stored (an edit's output, an
 * imported video), in the same job: the new file then settles in one completion with
 * its metadata, so no second job has to be chained from a completion handler.
 * The artifact's own 0..100 maps onto [fromPercent, 100] of this job.
 */
export async function artifactsOfStoredOutput(
  spec: JobSpec<unknown>,
  ctx: JobContext,
  stored: { key: string; contentType: string },
  fromPercent: number,
): Promise<ArtifactResult> {
  const workDir = join(ctx.workDir, 'artifact');
  await mkdir(workDir, { recursive: true });
  const progress: ProgressReporter = {
    report: (step, percent) => ctx.progress.report(step, fromPercent + ((100 - fromPercent) * percent) / 100),
    flush: () => ctx.progress.flush(),
  };
  return artifactProgram.run({ ...spec, input: { sourceKey: stored.key, contentType: stored.contentType } }, { ...ctx, workDir, progress, outputKey: ctx.outputKey });
}
