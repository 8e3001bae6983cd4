/**
 * A failure the job program understands and can explain to a person: the input is
 * empty, corrupt, missing, unsupported… Its message ends up in the `error` event,
 * in `/dev/termination-log` and, through the completion handlers, in front of the user.
 */
export class JobFailure extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'JobFailure';
  }
}

/** The human message for any error: a JobFailure speaks for itself, anything else is an internal error. */
export function failureMessage(error: unknown): string {
  if (error instanceof JobFailure) return error.message;
  const detail = error instanceof Error ? error.message : String(error);
  return `Internal error in the job program: ${detail}`;
}
