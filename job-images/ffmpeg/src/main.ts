import type { AnyJobProgram } from '../../lib/job-program.ts';
import { runJob } from '../../lib/run-job.ts';
import { artifactProgram } from './artifact/artifact-program.ts';
import { mediaEditProgram } from './edit/edit-program.ts';
import { mediaImportProgram } from './import/import-program.ts';
import { proxyProgram } from './proxy/proxy-program.ts';
import { renderProgram } from './render/render-program.ts';

/** The programs this image hosts; a new one joins by adding its module here. */
const programs: readonly AnyJobProgram[] = [artifactProgram, mediaEditProgram, mediaImportProgram, proxyProgram, renderProgram];

process.exitCode = await runJob({ programs });
