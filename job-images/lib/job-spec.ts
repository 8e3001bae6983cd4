import { z } from 'zod';
import { jobSpecSchema } from '../../crds/contract/resources.ts';
import { JobFailure } from './job-failure.ts';

/** The spec of the job's custom resource (crds/contract/resources.ts), with the program's own input type. */
export type JobSpec<Input = unknown> = Omit<z.infer<typeof jobSpecSchema>, 'input'> & { input: Input };

export function parseJobSpec(raw: string | undefined): JobSpec {
  if (!raw) throw new JobFailure('CUTROOM_JOB_SPEC is not set: the job has no spec');
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new JobFailure('CUTROOM_JOB_SPEC is not valid JSON');
  }
  const parsed = jobSpecSchema.safeParse(json);
  if (!parsed.success) throw new JobFailure(`Invalid job spec: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** Parses a program's own `input` against its schema, naming the program in the message. */
export function parseJobInput<Input>(program: string, schema: z.ZodType<Input>, input: unknown): Input {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new JobFailure(`Invalid input for program "${program}": ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export { outputKey } from '../../crds/contract/outcome.ts';
