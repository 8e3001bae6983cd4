import type { AnyJobProgram } from '../../lib/job-program.ts';
import { runJob } from '../../lib/run-job.ts';
import { artifactProgram } from './artifact/artifact-program.ts';

/** The programs this image hosts; `media-edit` and `render` join by adding their module here. */
const programs: readonly AnyJobProgram[] = [artifactProgram];

process.exitCode = await runJob({ programs });
