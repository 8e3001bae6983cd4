import type { AnyJobProgram } from '../../lib/job-program.ts';
import { runJob } from '../../lib/run-job.ts';
import { analyzeProgram } from './analyze-program.ts';

/** The programs this image hosts. */
const programs: readonly AnyJobProgram[] = [analyzeProgram];

process.exitCode = await runJob({ programs });
