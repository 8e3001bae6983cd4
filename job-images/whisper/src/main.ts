import { enableCompileCache } from 'node:module';

// Loading modules is most of a job's start (the openai client alone is over 200 of them):
// a start after the first reuses their compiled code (stripped TypeScript, bytecode) from
// NODE_COMPILE_CACHE, which the image bakes at build time; by default a directory under the
// OS temp dir. Enabled before anything else loads, so the program's modules are imported after.
enableCompileCache();
const { runJob } = await import('../../lib/run-job.ts');
const { analyzeProgram } = await import('./analyze-program.ts');

/** The programs this image hosts. */
process.exitCode = await runJob({ programs: [analyzeProgram] });
