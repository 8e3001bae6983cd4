// The API server's storage semantics in memory: one global resourceVersion counter,
// a bounded change history for watches (compaction → 410), the status subresource,
// generation, finalizers, and ownerReference garbage collection.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { applyJsonPatch, applyMergePatch } from './patches.ts';
import type { KubeObject, ResourceType, ResourceTypes } from './resource-types.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import {
  alreadyExists,
  badRequest,
  conflict,
  expired,
  invalid,
  notFound,
  staleResourceVersion,
  unsupportedMediaType,
} from './status-error.ts';
import type { StatusCause } from './status-error.ts';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

type Change = {
  revision: number;
  type: ChangeType;
  resource: ResourceType;
  object: KubeObject;
  previous: KubeObject | undefined;
};

export type Subresource = 'status' | undefined;

export type ListOptions = {
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  limit?: number | undefined;
  continue?: string | undefined;
  resourceVersion?: string | undefined;
  resourceVersionMatch?: string | undefined;
};

export type ObjectList = {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
};

export type WriteResult = { object: KubeObject; warnings: string[] };

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export type DeleteOptions = {
  propagationPolicy?: PropagationPolicy | undefined;
  preconditions?: { uid?: string; resourceVersion?: string } | undefined;
};

export type WatchOptions = {
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  resourceVersion?: string | undefined;
};

export type WatchListener = (type: ChangeType, object: KubeObject) => void;

// JSON round trip: deep copy that also drops undefined members, so deep equality means "same JSON".
const jsonClone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const nowTimestamp = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

// The API server's suffix alphabet for generateName (no vowels, no look-alikes).
const suffixAlphabet = 'bcdfghjklmnpqrstvwxz2456789';
const randomSuffix = () =>
  Array.from({ length: 5 }, () => suffixAlphabet[Math.floor(Math.random() * suffixAlphabet.length)]).join('');

function nameCauses(name: string): StatusCause[] {
  if (name.length <= 253 && subdomain.test(name)) return [];
  return [
    {
      reason: 'FieldValueInvalid',
      field: 'metadata.name',
      message: `metadata.name: Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
    },
  ];
}

// Everything but metadata and status is "spec" for the purpose of metadata.generation.
function specOf(object: KubeObject): Record<string, unknown> {
  const { metadata: _metadata, status: _status, ...rest } = object;
  return rest;
}

type Snapshot = Map<string, KubeObject>;

export class ObjectStore {
  readonly types: ResourceTypes;
  #revision = 0;
  #compactedRevision = 0;
  readonly #historyLimit: number;
  readonly #history: Change[] = [];
  readonly #objects = new Map<ResourceType, Snapshot>();
  readonly #listeners = new Set<(change: Change) => void>();

  constructor(types: ResourceTypes, historyLimit: number) {
    this.types = types;
    this.#historyLimit = historyLimit;
  }

  get revision(): number {
    return this.#revision;
  }

  get compactedRevision(): number {
    return this.#compactedRevision;
  }

  // As an etcd compaction after some unrelated write: every resourceVersion a client holds is now too old.
  compact(): void {
    this.#revision++;
    this.#compactedRevision = this.#revision;
    this.#history.length = 0;
  }

  #bucket(type: ResourceType): Snapshot {
    let bucket = this.#objects.get(type);
    if (!bucket) {
      bucket = new Map();
      this.#objects.set(type, bucket);
    }
    return bucket;
  }

  #commit(type: ResourceType, kind: ChangeType, object: KubeObject, previous: KubeObject | undefined): KubeObject {
    this.#revision++;
    const stored = jsonClone(object);
    stored.metadata.resourceVersion = String(this.#revision);
    const key = `${stored.metadata.namespace ?? ''}/${stored.metadata.name}`;
    if (kind === 'DELETED') this.#bucket(type).delete(key);
    else this.#bucket(type).set(key, stored);
    const change: Change = { revision: this.#revision, type: kind, resource: type, object: stored, previous };
    this.#history.push(change);
    if (this.#history.length > this.#historyLimit) this.#compactedRevision = this.#history.shift()!.revision;
    for (const listener of this.#listeners) listener(change);
    return jsonClone(stored);
  }

  find(type: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const found = this.#bucket(type).get(`${namespace}/${name}`);
    return found && jsonClone(found);
  }

  get(type: ResourceType, namespace: string, name: string): KubeObject {
    const found = this.find(type, namespace, name);
    if (!found) throw notFound(type, name);
    return found;
  }

  #admit(type: ResourceType, object: KubeObject): string[] {
    const warnings = type.prune(object).map((path) => `unknown field "${path}"`);
    const causes = [...nameCauses(object.metadata.name ?? ''), ...type.validate(object)];
    if (causes.length > 0) throw invalid(type.kind, type.group, object.metadata.name ?? '', causes);
    return warnings;
  }

  #checkBody(type: ResourceType, namespace: string, body: unknown): KubeObject {
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the request body must be a JSON object');
    const object = jsonClone(body) as KubeObject;
    // Custom resources are decoded as unstructured objects, which must say what they are.
    if (type.custom && (!object.apiVersion || !object.kind)) {
      throw badRequest(`Object '${object.kind ? 'apiVersion' : 'Kind'}' is missing in '${JSON.stringify(body)}'`);
    }
    if (!object.metadata || typeof object.metadata !== 'object') object.metadata = {};
    if (object.apiVersion !== undefined && object.apiVersion !== type.apiVersion) {
      throw badRequest(`the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${type.apiVersion})`);
    }
    if (object.kind !== undefined && object.kind !== type.kind) {
      throw badRequest(`the kind in the data (${String(object.kind)}) does not match the expected kind (${type.kind})`);
    }
    if (object.metadata.namespace && object.metadata.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    return object;
  }

  create(type: ResourceType, namespace: string, body: unknown): WriteResult {
    const object = this.#checkBody(type, namespace, body);
    const meta = object.metadata;
    if (!meta.name) {
      if (!meta.generateName) {
        throw invalid(type.kind, type.group, '', [
          { reason: 'FieldValueRequired', field: 'metadata.name', message: 'metadata.name: Required value: name or generateName is required' },
        ]);
      }
      do meta.name = `${meta.generateName}${randomSuffix()}`;
      while (this.#bucket(type).has(`${namespace}/${meta.name}`));
    }
    if (this.#bucket(type).has(`${namespace}/${meta.name}`)) throw alreadyExists(type, meta.name);
    object.apiVersion = type.apiVersion;
    object.kind = type.kind;
    object.metadata = {
      ...meta,
      namespace,
      uid: randomUUID(),
      generation: 1,
      creationTimestamp: nowTimestamp(),
    };
    delete object.metadata.resourceVersion;
    delete object.metadata.deletionTimestamp;
    delete object.metadata.deletionGracePeriodSeconds;
    // The API server resets status on create: only the status subresource writes it.
    if (type.statusSubresource) {
      const status = type.initialStatus();
      if (status === undefined) delete object.status;
      else object.status = status;
    }
    type.applyDefaults(object);
    const warnings = this.#admit(type, object);
    return { object: this.#commit(type, 'ADDED', object, undefined), warnings };
  }

  replace(type: ResourceType, namespace: string, name: string, body: unknown, subresource: Subresource): WriteResult {
    const candidate = this.#checkBody(type, namespace, body);
    const existing = this.get(type, namespace, name);
    const rv = candidate.metadata.resourceVersion;
    if (rv === undefined || rv === '') {
      if (type.custom) {
        throw invalid(type.kind, type.group, name, [
          { reason: 'FieldValueInvalid', field: 'metadata.resourceVersion', message: 'metadata.resourceVersion: Invalid value: 0x0: must be specified for an update' },
        ]);
      }
    } else if (rv !== existing.metadata.resourceVersion) {
      throw conflict(type, name, staleResourceVersion);
    }
    return this.#update(type, existing, candidate, subresource);
  }

  patch(
    type: ResourceType,
    namespace: string,
    name: string,
    contentType: string,
    patch: unknown,
    subresource: Subresource,
  ): WriteResult {
    const existing = this.get(type, namespace, name);
    let candidate: unknown;
    switch (contentType) {
      case 'application/merge-patch+json':
        candidate = applyMergePatch(existing, patch);
        break;
      case 'application/strategic-merge-patch+json':
        // Custom resources have no patch strategy metadata; the API server refuses, and so do we.
        if (type.custom) throw unsupportedMediaType(contentType);
        candidate = applyMergePatch(existing, patch);
        break;
      case 'application/json-patch+json':
        candidate = applyJsonPatch(existing, patch);
        break;
      default:
        throw unsupportedMediaType(contentType);
    }
    const checked = this.#checkBody(type, namespace, candidate);
    if (checked.metadata.resourceVersion !== existing.metadata.resourceVersion) {
      throw conflict(type, name, staleResourceVersion);
    }
    return this.#update(type, existing, checked, subresource);
  }

  #update(type: ResourceType, existing: KubeObject, candidate: KubeObject, subresource: Subresource): WriteResult {
    const name = existing.metadata.name!;
    if (candidate.metadata.name && candidate.metadata.name !== name) {
      throw badRequest(`the name of the object (${candidate.metadata.name}) does not match the name on the URL (${name})`);
    }
    let next: KubeObject;
    if (subresource === 'status') {
      // The status subresource changes status and nothing else.
      next = jsonClone(existing);
      next.status = candidate.status;
    } else {
      next = jsonClone(candidate);
      next.apiVersion = existing.apiVersion;
      next.kind = existing.kind;
      // With a status subresource, the main resource ignores status writes.
      if (type.statusSubresource) next.status = existing.status;
      const { uid, creationTimestamp, generation, deletionTimestamp, deletionGracePeriodSeconds, namespace } = existing.metadata;
      next.metadata = {
        ...candidate.metadata,
        name,
        namespace,
        uid,
        creationTimestamp,
        generation,
        deletionTimestamp,
        deletionGracePeriodSeconds,
      };
    }
    next.metadata.resourceVersion = existing.metadata.resourceVersion;
    next = jsonClone(next);
    const warnings = this.#admit(type, next);
    if (!isDeepStrictEqual(specOf(next), specOf(existing))) next.metadata.generation = (existing.metadata.generation ?? 1) + 1;
    // A write that changes nothing is not a write: no new resourceVersion, no watch event.
    if (isDeepStrictEqual(next, existing)) return { object: existing, warnings };
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
      return { object: this.#remove(type, next, existing, 'Background'), warnings };
    }
    return { object: this.#commit(type, 'MODIFIED', next, existing), warnings };
  }

  delete(type: ResourceType, namespace: string, name: string, options: DeleteOptions = {}): KubeObject {
    const existing = this.get(type, namespace, name);
    const { uid, resourceVersion } = options.preconditions ?? {};
    if (uid && uid !== existing.metadata.uid) {
      throw conflict(type, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${existing.metadata.uid}`);
    }
    if (resourceVersion && resourceVersion !== existing.metadata.resourceVersion) {
      throw conflict(type, name, `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${existing.metadata.resourceVersion}`);
    }
    return this.#delete(type, existing, options.propagationPolicy ?? type.defaultPropagation);
  }

  #delete(type: ResourceType, existing: KubeObject, policy: PropagationPolicy): KubeObject {
    // Finalizers hold the object, marked for deletion, until their controllers remove them.
    if (existing.metadata.finalizers?.length) {
      if (existing.metadata.deletionTimestamp) return existing;
      const marked = jsonClone(existing);
      marked.metadata.deletionTimestamp = nowTimestamp();
      marked.metadata.deletionGracePeriodSeconds = 0;
      return this.#commit(type, 'MODIFIED', marked, existing);
    }
    return this.#remove(type, existing, existing, policy);
  }

  #remove(type: ResourceType, object: KubeObject, previous: KubeObject, policy: PropagationPolicy): KubeObject {
    const removed = this.#commit(type, 'DELETED', object, previous);
    this.#collectGarbage(removed.metadata.uid!, policy);
    return removed;
  }

  // Dependents of a deleted owner: orphaned on request, otherwise deleted once no owner of theirs is left.
  #collectGarbage(ownerUid: string, policy: PropagationPolicy): void {
    const live = new Set<string>();
    for (const bucket of this.#objects.values()) for (const o of bucket.values()) live.add(o.metadata.uid!);
    for (const [type, bucket] of this.#objects) {
      for (const dependent of [...bucket.values()]) {
        const refs = dependent.metadata.ownerReferences ?? [];
        if (!refs.some((r) => r.uid === ownerUid)) continue;
        if (policy === 'Orphan') {
          const orphan = jsonClone(dependent);
          orphan.metadata.ownerReferences = refs.filter((r) => r.uid !== ownerUid);
          if (orphan.metadata.ownerReferences.length === 0) delete orphan.metadata.ownerReferences;
          this.#commit(type, 'MODIFIED', orphan, dependent);
        } else if (refs.every((r) => !live.has(r.uid))) {
          const current = this.find(type, dependent.metadata.namespace ?? '', dependent.metadata.name!);
          if (current) this.#delete(type, current, 'Background');
        }
      }
    }
  }

  deleteCollection(type: ResourceType, namespace: string, options: ListOptions & DeleteOptions): KubeObject[] {
    const { items } = this.list(type, namespace, { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector });
    return items.map((item) => this.delete(type, namespace, item.metadata.name!, { propagationPolicy: options.propagationPolicy }));
  }

  // The objects of a type as they were at `revision`, rebuilt by undoing later changes.
  #snapshotAt(type: ResourceType, revision: number): Snapshot {
    if (revision < this.#compactedRevision) throw expired('The resourceVersion for the provided list is too old.');
    const snapshot = new Map(this.#bucket(type));
    for (let i = this.#history.length - 1; i >= 0; i--) {
      const change = this.#history[i]!;
      if (change.revision <= revision) break;
      if (change.resource !== type) continue;
      const key = `${change.object.metadata.namespace ?? ''}/${change.object.metadata.name}`;
      if (change.type === 'ADDED') snapshot.delete(key);
      else snapshot.set(key, change.previous!);
    }
    return snapshot;
  }

  #matcher(namespace: string | undefined, options: { labelSelector?: string | undefined; fieldSelector?: string | undefined }) {
    const labels = parseLabelSelector(options.labelSelector);
    const fields = parseFieldSelector(options.fieldSelector);
    return (object: KubeObject) =>
      (namespace === undefined || object.metadata.namespace === namespace) &&
      labels(object.metadata.labels ?? {}) &&
      fields(object);
  }

  list(type: ResourceType, namespace: string | undefined, options: ListOptions = {}): ObjectList {
    let revision = this.#revision;
    let after = '';
    if (options.continue) {
      let token: { rv?: unknown; after?: unknown };
      try {
        token = JSON.parse(Buffer.from(options.continue, 'base64url').toString('utf8')) as typeof token;
      } catch {
        throw badRequest('continue key is not valid');
      }
      revision = Number(token.rv);
      after = String(token.after);
      if (revision < this.#compactedRevision) {
        throw expired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
      }
    } else if (options.resourceVersionMatch === 'Exact') {
      revision = Number(options.resourceVersion);
      if (!Number.isInteger(revision) || revision > this.#revision) throw badRequest(`invalid resource version "${options.resourceVersion}" for an exact list`);
    }
    // Any other resourceVersion means "not older than", which the latest state always satisfies.
    const snapshot = revision === this.#revision ? this.#bucket(type) : this.#snapshotAt(type, revision);
    const matches = this.#matcher(namespace, options);
    const all = [...snapshot]
      .filter(([key, object]) => key > after && matches(object))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const limit = options.limit && options.limit > 0 ? options.limit : all.length;
    const page = all.slice(0, limit);
    const list: ObjectList = {
      // Typed (built-in) lists carry no apiVersion/kind on their items; custom resource lists do.
      items: page.map(([, object]) => {
        const item = jsonClone(object);
        if (!type.custom) {
          delete item.apiVersion;
          delete item.kind;
        }
        return item;
      }),
      resourceVersion: String(revision),
    };
    if (all.length > page.length) {
      list.continue = Buffer.from(JSON.stringify({ rv: revision, after: page[page.length - 1]![0] })).toString('base64url');
      list.remainingItemCount = all.length - page.length;
    }
    return list;
  }

  // Starts a watch: replays what the client missed (or the current state as ADDED), then streams.
  // Throws 410 Expired when the requested resourceVersion was compacted away.
  watch(type: ResourceType, namespace: string | undefined, options: WatchOptions, listener: WatchListener): () => void {
    const matches = this.#matcher(namespace, options);
    const deliver = (change: Change) => {
      if (change.resource !== type) return;
      const now = matches(change.object);
      if (change.type !== 'MODIFIED') {
        if (now) listener(change.type, change.object);
        return;
      }
      // An object that moves into or out of the selector is, to this watcher, added or deleted.
      const before = change.previous !== undefined && matches(change.previous);
      if (now) listener(before ? 'MODIFIED' : 'ADDED', change.object);
      else if (before) listener('DELETED', change.object);
    };
    const from = options.resourceVersion;
    if (from === undefined || from === '' || from === '0') {
      const current = [...this.#bucket(type)].sort(([a], [b]) => (a < b ? -1 : 1));
      for (const [, object] of current) if (matches(object)) listener('ADDED', object);
    } else {
      const revision = Number(from);
      if (!Number.isInteger(revision)) throw badRequest(`invalid resource version "${from}"`);
      if (revision < this.#compactedRevision) {
        throw expired(`too old resource version: ${revision} (${this.#compactedRevision + 1})`);
      }
      for (const change of this.#history) if (change.revision > revision) deliver(change);
    }
    this.#listeners.add(deliver);
    return () => this.#listeners.delete(deliver);
  }

  // Every object of every type, for test assertions and the job controller.
  *objects(type: ResourceType): Iterable<KubeObject> {
    for (const object of this.#bucket(type).values()) yield jsonClone(object);
  }
}
