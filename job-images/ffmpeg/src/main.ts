import { enableCompileCache } from 'node:module';

// A start after the first reuses the modules' compiled code from NODE_COMPILE_CACHE (the
// image bakes it at build time; see job-images/whisper/src/main.ts); enabled before they load.
enableCompileCache();
const { runJob } = await import('../../lib/run-job.ts');
const { artifactProgram } = await import('./artifact/artifact-program.ts');
const { mediaEditProgram } = await import('./edit/edit-program.ts');
const { mediaImportProgram } = await import('./import/import-program.ts');
const { proxyProgram } = await import('./proxy/proxy-program.ts');
const { renderProgram } = await import('./render/render-program.ts');

/** The programs this image hosts; a new one joins by adding its module here. */
process.exitCode = await runJob({ programs: [artifactProgram, mediaEditProgram, mediaImportProgram, proxyProgram, renderProgram] });
