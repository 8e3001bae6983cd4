/** Parameters of a failure's message, filled into the catalog's `{name}` placeholders. */
export type FailureParams = Record<string, string | number>;

export interface JobFailureOptions extends ErrorOptions {
  /** Stable code the api translates through its catalogs (`failure.<code>`), e.g. `media.corrupt`. */
  code?: string;
  params?: FailureParams;
}

/**
 * A failure the job program understands and can explain to a person: the input is
 * empty, corrupt, missing, unsupported… Its message (English) ends up in the `error`
 * event, in `/dev/termination-log` and in the logs; its `code` and `params` let the
 * api show it in the user's language.
 */
export class JobFailure extends Error {
  readonly code: string | undefined;
  readonly params: FailureParams | undefined;

  constructor(message: string, options?: JobFailureOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'JobFailure';
    this.code = options?.code;
    this.params = options?.params;
  }
}

/** The human message for any error: a JobFailure speaks for itself, anything else is an internal error. */
export function failureMessage(error: unknown): string {
  if (error instanceof JobFailure) return error.message;
  const detail = error instanceof Error ? error.message : String(error);
  return `Internal error in the job program: ${detail}`;
}

/** The code and params of a failure, when it has a code. */
export function failureCode(error: unknown): { code?: string; params?: FailureParams } {
  if (!(error instanceof JobFailure) || !error.code) return {};
  return error.params ? { code: error.code, params: error.params } : { code: error.code };
}
