// API errors as the Kubernetes API server sends them: a metav1.Status body with code and reason.

export type StatusCause = { reason: string; message: string; field?: string };

export type StatusDetails = {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
};

export type KubeStatus = {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
};

export class StatusError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;

  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): KubeStatus {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

// How the API server names a resource in messages: `jobs.batch`, `pods`, `renderjobs.cutroom.dev`.
export type ResourceName = { group: string; plural: string };

const qualified = (r: ResourceName) => (r.group ? `${r.plural}.${r.group}` : r.plural);

export function notFound(r: ResourceName, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualified(r)} "${name}" not found`, {
    name,
    group: r.group,
    kind: r.plural,
  });
}

export function alreadyExists(r: ResourceName, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, {
    name,
    group: r.group,
    kind: r.plural,
  });
}

export function conflict(r: ResourceName, name: string, why: string): StatusError {
  return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${why}`, {
    name,
    group: r.group,
    kind: r.plural,
  });
}

export const staleResourceVersion =
  'the object has been modified; please apply your changes to the latest version and try again';

export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): StatusError {
  const list = causes.map((c) => c.message);
  const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  return new StatusError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, {
    name,
    group,
    kind,
    causes,
  });
}

export function badRequest(message: string): StatusError {
  return new StatusError(400, 'BadRequest', message);
}

export function expired(message: string): StatusError {
  return new StatusError(410, 'Expired', message);
}

export function unsupportedMediaType(contentType: string): StatusError {
  return new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json (got ${contentType})`);
}

export function pathNotFound(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource');
}

export function methodNotAllowed(method: string): StatusError {
  return new StatusError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource (${method})`);
}
