// A stand-in for a job image's entry point that ends the way its input asks: some
// behaviours run through job-images/lib like a real program, others deliberately do not
// (a crash, a silent exit, a hang) so that only the backend can say what happened.
import { formatProgressLine } from '../../crds/contract/progress-lines.ts';
import type { ResultOf } from '../../crds/contract/programs.ts';
import type { ErrorFile } from '../../crds/contract/outcome.ts';
import { JobFailure } from '../../job-images/lib/job-failure.ts';
import type { JobProgram } from '../../job-images/lib/job-program.ts';
import { runJob } from '../../job-images/lib/run-job.ts';

export const behaviours = ['coded', 'crash', 'no-result', 'unreadable-result', 'hang', 'wait'] as const;
export type Behaviour = (typeof behaviours)[number];

/** What the test asked for, beside the artifact input (which the registry's schema parses, dropping these). */
const requested = (JSON.parse(process.env.CUTROOM_JOB_SPEC ?? '{}') as { input?: { behaviour?: Behaviour; failure?: ErrorFile } }).input ?? {};

/** Through the job runtime: result.json / error.json are written by job-images/lib, as in a real image. */
const artifactStandIn: JobProgram<'artifact'> = {
  name: 'artifact',
  async run(_spec, ctx) {
    const { behaviour, failure } = requested;
    if (behaviour === 'coded' && failure) throw new JobFailure(failure.message, { code: failure.code ?? undefined, params: failure.params ?? undefined });
    if (behaviour === 'unreadable-result') return ['not', 'an', 'object'] as unknown as ResultOf<'artifact'>;
    // 'wait': running until stopped (a timer keeps Node alive); the runtime turns the SIGTERM into its own failure.
    ctx.progress.report('process', 0.1);
    const alive = setInterval(() => {}, 60_000);
    return new Promise((_resolve, reject) =>
      ctx.signal.addEventListener('abort', () => {
        clearInterval(alive);
        reject(ctx.signal.reason);
      }),
    );
  },
};

switch (requested.behaviour) {
  case 'crash':
    process.stderr.write('Segmentation fault (core dumped)\n');
    process.exit(3);
    break;
  case 'no-result':
    process.exit(0);
    break;
  case 'hang':
    // No job runtime: nothing here stops at the spec's timeout or answers SIGTERM but the default.
    process.stdout.write(formatProgressLine({ event: 'progress', step: 'download', progress: 5 }));
    setInterval(() => {}, 60_000);
    break;
  // through the job runtime, like a real image
  case 'coded':
  case 'unreadable-result':
  case 'wait':
  case undefined:
    process.exitCode = await runJob({ programs: [artifactStandIn] });
}
