// A stand-in for a job image's entry point that ends the way its input asks: some
// behaviours run through job-images/lib like a real program, others deliberately do not
// (a crash, a silent exit, a hang) so that only the backend can say what happened.
import { z } from 'zod';
import { formatJobEvent } from '../../crds/contract/job-events.ts';
import { JobFailure } from '../../job-images/lib/job-failure.ts';
import type { AnyJobProgram } from '../../job-images/lib/job-program.ts';
import { runJob } from '../../job-images/lib/run-job.ts';

export const behaviours = ['coded', 'crash', 'no-result', 'unreadable-result', 'hang', 'wait'] as const;
export type Behaviour = (typeof behaviours)[number];

const inputSchema = z.object({
  behaviour: z.enum(behaviours),
  failure: z.object({ message: z.string(), code: z.string(), params: z.record(z.string(), z.union([z.string(), z.number()])) }).optional(),
});
type Input = z.infer<typeof inputSchema>;

/** Through the job runtime: result.json / error.json are written by job-images/lib, as in a real image. */
const artifactStandIn: AnyJobProgram = {
  name: 'artifact',
  inputSchema: inputSchema as z.ZodType<unknown>,
  async run(spec, ctx) {
    const input = spec.input as Input;
    if (input.behaviour === 'coded' && input.failure) throw new JobFailure(input.failure.message, { code: input.failure.code, params: input.failure.params });
    if (input.behaviour === 'unreadable-result') return ['not', 'an', 'object'];
    // 'wait': running until stopped (a timer keeps Node alive); the runtime turns the SIGTERM into its own failure.
    ctx.progress.report('waiting', 10);
    const alive = setInterval(() => {}, 60_000);
    return new Promise((_resolve, reject) =>
      ctx.signal.addEventListener('abort', () => {
        clearInterval(alive);
        reject(ctx.signal.reason);
      }),
    );
  },
};

const behaviour = (JSON.parse(process.env.CUTROOM_JOB_SPEC ?? '{}') as { input?: { behaviour?: string } }).input?.behaviour;
switch (behaviour) {
  case 'crash':
    process.stderr.write('Segmentation fault (core dumped)\n');
    process.exit(3);
    break;
  case 'no-result':
    process.exit(0);
    break;
  case 'hang':
    // No job runtime: nothing here stops at the spec's timeout or answers SIGTERM but the default.
    process.stdout.write(formatJobEvent({ event: 'progress', step: 'hanging', progress: 5 }));
    setInterval(() => {}, 60_000);
    break;
  case undefined:
  default:
    process.exitCode = await runJob({ programs: [artifactStandIn] });
}
