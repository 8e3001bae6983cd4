// JSON merge patch (RFC 7386) and JSON patch (RFC 6902), the two PATCH bodies the simulator applies.
import { isDeepStrictEqual } from 'node:util';
import { badRequest, StatusError } from './status-error.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isPlainObject = (v: unknown): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

type Operation = { op: string; path: string; value?: unknown; from?: string };

// A failed patch is the request's fault: the API server answers 422, as for any invalid object.
const unprocessable = (message: string) => new StatusError(422, 'Invalid', message);

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw badRequest(`json patch path "${path}" must start with /`);
  return path
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function parentOf(doc: unknown, tokens: string[], path: string): { parent: unknown; last: string } {
  let at = doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(at)) at = at[Number(token)];
    else if (isPlainObject(at)) at = at[token];
    else at = undefined;
    if (at === undefined) throw unprocessable(`json patch: path ${path} does not exist`);
  }
  return { parent: at, last: tokens[tokens.length - 1]! };
}

function read(doc: unknown, path: string): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) return doc;
  const { parent, last } = parentOf(doc, tokens, path);
  const value = Array.isArray(parent) ? parent[Number(last)] : isPlainObject(parent) ? parent[last] : undefined;
  if (value === undefined) throw unprocessable(`json patch: path ${path} does not exist`);
  return value;
}

function add(doc: unknown, path: string, value: unknown): unknown {
  const tokens = pointer(path);
  if (tokens.length === 0) return value;
  const { parent, last } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw unprocessable(`json patch: index out of range in ${path}`);
    parent.splice(index, 0, value as Json);
  } else if (isPlainObject(parent)) {
    parent[last] = value as Json;
  } else {
    throw unprocessable(`json patch: cannot add at ${path}`);
  }
  return doc;
}

function remove(doc: unknown, path: string): unknown {
  const tokens = pointer(path);
  read(doc, path);
  const { parent, last } = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete (parent as Record<string, unknown>)[last];
  return doc;
}

export function applyJsonPatch(target: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw badRequest('json patch body must be an array of operations');
  let doc = structuredClone(target);
  for (const raw of operations as Operation[]) {
    if (!isPlainObject(raw) || typeof raw.path !== 'string') throw badRequest('json patch operation needs op and path');
    switch (raw.op) {
      case 'add':
        doc = add(doc, raw.path, structuredClone(raw.value));
        break;
      case 'remove':
        doc = remove(doc, raw.path);
        break;
      case 'replace':
        doc = raw.path === '' ? structuredClone(raw.value) : add(remove(doc, raw.path), raw.path, structuredClone(raw.value));
        break;
      case 'move': {
        const value = read(doc, String(raw.from));
        doc = add(remove(doc, String(raw.from)), raw.path, value);
        break;
      }
      case 'copy':
        doc = add(doc, raw.path, structuredClone(read(doc, String(raw.from))));
        break;
      case 'test':
        if (!isDeepStrictEqual(read(doc, raw.path), raw.value)) throw unprocessable(`json patch: test failed at ${raw.path}`);
        break;
      default:
        throw badRequest(`json patch: unknown op "${String(raw.op)}"`);
    }
  }
  return doc;
}
