// The Kubernetes REST surface over the object store: discovery, CRUD with the
// status subresource, list/watch streams (bookmarks, 410), Table output, pod logs.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ObjectStore, PropagationPolicy, Subresource } from './object-store.ts';
import type { KubeObject, ResourceType } from './resource-types.ts';
import { badRequest, methodNotAllowed, notFound, pathNotFound, StatusError } from './status-error.ts';
import { toTable, wantsTable } from './table.ts';
import type { IncludeObject } from './table.ts';

export type RecordedRequest = {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string | undefined;
};

export type InjectedFault = {
  method?: string;
  path?: string | RegExp;
  code: number;
  reason?: string;
  message?: string;
};

type WatchStream = {
  bookmark(): void;
  end(abrupt: boolean): void;
};

const maxBodyBytes = 3 * 1024 * 1024;
const maxRecordedRequests = 10_000;
const objectVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export type ApiServerOptions = { bookmarkIntervalMs: number };

export class ApiServer {
  readonly store: ObjectStore;
  readonly requests: RecordedRequest[] = [];
  readonly podLogs = new Map<string, string>();
  readonly #faults: (InjectedFault & { times: number })[] = [];
  readonly #watches = new Set<WatchStream>();
  readonly #server: Server;
  readonly #options: ApiServerOptions;

  constructor(store: ObjectStore, options: ApiServerOptions) {
    this.store = store;
    this.#options = options;
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => this.#fail(res, error));
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async close(): Promise<void> {
    this.dropWatches();
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  get openWatches(): number {
    return this.#watches.size;
  }

  // Ends every open watch; `abrupt` resets the connections as a crashed API server would.
  dropWatches(abrupt = false): number {
    const count = this.#watches.size;
    for (const watch of [...this.#watches]) watch.end(abrupt);
    return count;
  }

  sendBookmarks(): void {
    for (const watch of this.#watches) watch.bookmark();
  }

  injectFault(fault: InjectedFault, times: number): void {
    this.#faults.push({ ...fault, times });
  }

  #takeFault(method: string, path: string): InjectedFault | undefined {
    const index = this.#faults.findIndex(
      (f) =>
        (!f.method || f.method.toUpperCase() === method) &&
        (!f.path || (typeof f.path === 'string' ? f.path === path : f.path.test(path))),
    );
    if (index < 0) return undefined;
    const fault = this.#faults[index]!;
    if (--fault.times <= 0) this.#faults.splice(index, 1);
    return fault;
  }

  #fail(res: ServerResponse, error: unknown): void {
    const status =
      error instanceof StatusError
        ? error
        : new StatusError(500, 'InternalError', `kube-sim: ${error instanceof Error ? error.message : String(error)}`);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    this.#json(res, status.code, status.toStatus());
  }

  #json(res: ServerResponse, code: number, body: unknown, warnings: string[] = []): void {
    const text = JSON.stringify(body);
    const headers: Record<string, string | string[]> = {
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(text)),
    };
    if (warnings.length > 0) headers['Warning'] = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
    res.writeHead(code, headers);
    res.end(text);
  }

  async #readBody(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > maxBodyBytes) throw new StatusError(413, 'RequestEntityTooLarge', 'request entity too large');
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw badRequest('the body of the request could not be decoded as JSON');
    }
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://kube-sim');
    const method = (req.method ?? 'GET').toUpperCase();
    const contentType = req.headers['content-type']?.split(';')[0]?.trim();
    this.requests.push({ method, path: url.pathname, query: url.searchParams, contentType });
    if (this.requests.length > maxRecordedRequests) this.requests.shift();

    const fault = this.#takeFault(method, url.pathname);
    if (fault) {
      await this.#readBody(req).catch(() => undefined);
      throw new StatusError(fault.code, fault.reason ?? 'InternalError', fault.message ?? 'fault injected by kube-sim');
    }

    const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    if (url.pathname === '/version') return this.#json(res, 200, versionInfo);
    if (['/healthz', '/livez', '/readyz'].includes(url.pathname)) {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('ok');
      return;
    }
    let group: string;
    let rest: string[];
    if (segments[0] === 'api') {
      if (segments.length === 1) return this.#json(res, 200, this.#apiVersions(req));
      group = '';
      rest = segments.slice(1);
    } else if (segments[0] === 'apis') {
      if (segments.length === 1) return this.#json(res, 200, this.#groupList());
      if (segments.length === 2) return this.#json(res, 200, this.#group(segments[1]!));
      group = segments[1]!;
      rest = segments.slice(2);
    } else {
      throw pathNotFound();
    }
    const version = rest[0]!;
    rest = rest.slice(1);
    if (rest.length === 0) return this.#json(res, 200, this.#resourceList(group, version));

    const watchPath = rest[0] === 'watch';
    if (watchPath) rest = rest.slice(1);
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const [plural, name, subresource, ...extra] = rest;
    const type = plural ? this.store.types.find(group, version, plural) : undefined;
    if (!type || extra.length > 0) throw pathNotFound();
    const query = url.searchParams;
    // Better a clear refusal than a dry run that writes.
    if (query.has('dryRun')) throw badRequest('kube-sim does not implement dryRun');
    const watch = watchPath || query.get('watch') === 'true' || query.get('watch') === '1';

    if (watch) {
      if (method !== 'GET') throw methodNotAllowed(method);
      return this.#watch(res, type, namespace, name, query);
    }
    if (name === undefined) return this.#collection(req, res, method, type, namespace, query);
    if (namespace === undefined) throw pathNotFound();
    if (subresource === 'log' && type.plural === 'pods' && type.group === '') {
      if (method !== 'GET') throw methodNotAllowed(method);
      this.store.get(type, namespace, name);
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(this.podLogs.get(`${namespace}/${name}`) ?? '');
      return;
    }
    if (subresource !== undefined && !(subresource === 'status' && type.statusSubresource)) throw notFound(type, name);
    return this.#item(req, res, method, type, namespace, name, subresource as Subresource, query);
  }

  async #collection(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    type: ResourceType,
    namespace: string | undefined,
    query: URLSearchParams,
  ): Promise<void> {
    const listOptions = {
      labelSelector: query.get('labelSelector') ?? undefined,
      fieldSelector: query.get('fieldSelector') ?? undefined,
      limit: query.has('limit') ? Number(query.get('limit')) : undefined,
      continue: query.get('continue') ?? undefined,
      resourceVersion: query.get('resourceVersion') ?? undefined,
      resourceVersionMatch: query.get('resourceVersionMatch') ?? undefined,
    };
    switch (method) {
      case 'GET': {
        const list = this.store.list(type, namespace, listOptions);
        if (wantsTable(req.headers.accept)) {
          return this.#json(res, 200, toTable(type, list.items, list, includeObject(query)));
        }
        const metadata: Record<string, unknown> = { resourceVersion: list.resourceVersion };
        if (list.continue) {
          metadata['continue'] = list.continue;
          metadata['remainingItemCount'] = list.remainingItemCount;
        }
        return this.#json(res, 200, { apiVersion: type.apiVersion, kind: type.listKind, metadata, items: list.items });
      }
      case 'POST': {
        if (namespace === undefined) throw methodNotAllowed(method);
        const { object, warnings } = this.store.create(type, namespace, await this.#readBody(req));
        return this.#json(res, 201, object, warnings);
      }
      case 'DELETE': {
        if (namespace === undefined) throw methodNotAllowed(method);
        const options = deleteOptions(await this.#readBody(req), query);
        const items = this.store.deleteCollection(type, namespace, { ...listOptions, ...options });
        return this.#json(res, 200, { apiVersion: type.apiVersion, kind: type.listKind, metadata: { resourceVersion: String(this.store.revision) }, items });
      }
      default:
        throw methodNotAllowed(method);
    }
  }

  async #item(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    type: ResourceType,
    namespace: string,
    name: string,
    subresource: Subresource,
    query: URLSearchParams,
  ): Promise<void> {
    switch (method) {
      case 'GET': {
        const object = this.store.get(type, namespace, name);
        if (wantsTable(req.headers.accept)) {
          return this.#json(res, 200, toTable(type, [object], { resourceVersion: object.metadata.resourceVersion ?? '' }, includeObject(query)));
        }
        return this.#json(res, 200, object);
      }
      case 'PUT': {
        const { object, warnings } = this.store.replace(type, namespace, name, await this.#readBody(req), subresource);
        return this.#json(res, 200, object, warnings);
      }
      case 'PATCH': {
        const contentType = req.headers['content-type']?.split(';')[0]?.trim() ?? '';
        const body = await this.#readBody(req);
        const { object, warnings } = this.store.patch(type, namespace, name, contentType, body, subresource);
        return this.#json(res, 200, object, warnings);
      }
      case 'DELETE': {
        if (subresource) throw methodNotAllowed(method);
        const options = deleteOptions(await this.#readBody(req), query);
        return this.#json(res, 200, this.store.delete(type, namespace, name, options));
      }
      default:
        throw methodNotAllowed(method);
    }
  }

  #watch(res: ServerResponse, type: ResourceType, namespace: string | undefined, name: string | undefined, query: URLSearchParams): void {
    const fieldSelector = [query.get('fieldSelector'), name !== undefined ? `metadata.name=${name}` : undefined]
      .filter(Boolean)
      .join(',');
    // Events produced while the watch starts are held until the response head is out.
    let pending: string[] | undefined = [];
    const write = (eventType: string, object: unknown) => {
      const line = `${JSON.stringify({ type: eventType, object })}\n`;
      if (pending) pending.push(line);
      else res.write(line);
    };
    let stop = () => {};
    try {
      stop = this.store.watch(
        type,
        namespace,
        { labelSelector: query.get('labelSelector') ?? undefined, fieldSelector, resourceVersion: query.get('resourceVersion') ?? undefined },
        (eventType, object) => write(eventType, object),
      );
    } catch (error) {
      // A compacted resourceVersion is reported in the stream, as the API server does.
      if (!(error instanceof StatusError) || error.code !== 410) throw error;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`${JSON.stringify({ type: 'ERROR', object: error.toStatus() })}\n`);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    res.flushHeaders();
    for (const line of pending) res.write(line);
    pending = undefined;

    const timers: NodeJS.Timeout[] = [];
    const stream: WatchStream = {
      bookmark: () => {
        if (query.get('allowWatchBookmarks') !== 'true') return;
        write('BOOKMARK', { kind: type.kind, apiVersion: type.apiVersion, metadata: { resourceVersion: String(this.store.revision) } });
      },
      end: (abrupt) => {
        cleanup();
        if (abrupt) res.socket?.destroy();
        else res.end();
      },
    };
    const cleanup = () => {
      stop();
      for (const timer of timers) clearTimeout(timer);
      this.#watches.delete(stream);
    };
    this.#watches.add(stream);
    res.on('close', cleanup);
    if (this.#options.bookmarkIntervalMs > 0) {
      const timer = setInterval(stream.bookmark, this.#options.bookmarkIntervalMs);
      timer.unref();
      timers.push(timer);
    }
    const timeoutSeconds = Number(query.get('timeoutSeconds'));
    if (timeoutSeconds > 0) {
      const timer = setTimeout(() => stream.end(false), timeoutSeconds * 1000);
      timer.unref();
      timers.push(timer);
    }
  }

  #apiVersions(req: IncomingMessage) {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: req.headers.host ?? '127.0.0.1' }],
    };
  }

  #apiGroup(group: string, versions: string[]) {
    const entries = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
    return { name: group, versions: entries, preferredVersion: entries[0] };
  }

  #groupList() {
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: this.store.types
        .groups()
        .filter((g) => g.group !== '')
        .map((g) => this.#apiGroup(g.group, g.versions)),
    };
  }

  #group(group: string) {
    const found = this.store.types.groups().find((g) => g.group === group && group !== '');
    if (!found) throw pathNotFound();
    return { kind: 'APIGroup', apiVersion: 'v1', ...this.#apiGroup(group, found.versions) };
  }

  #resourceList(group: string, version: string) {
    const types = this.store.types.all.filter((t) => t.group === group && t.version === version);
    if (types.length === 0) throw pathNotFound();
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group ? `${group}/${version}` : version,
      resources: types.flatMap((t) => [
        {
          name: t.plural,
          singularName: t.singular,
          namespaced: true,
          kind: t.kind,
          verbs: objectVerbs,
          ...(t.shortNames.length ? { shortNames: t.shortNames } : {}),
          ...(t.categories.length ? { categories: t.categories } : {}),
        },
        ...(t.statusSubresource
          ? [{ name: `${t.plural}/status`, singularName: '', namespaced: true, kind: t.kind, verbs: ['get', 'patch', 'update'] }]
          : []),
        ...(t.plural === 'pods' && t.group === '' ? [{ name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] }] : []),
      ]),
    };
  }
}

const versionInfo = {
  major: '1',
  minor: '33',
  gitVersion: 'v1.33.0-kube-sim',
  gitCommit: '',
  gitTreeState: 'clean',
  buildDate: '1970-01-01T00:00:00Z',
  goVersion: 'none',
  compiler: 'none',
  platform: 'linux/amd64',
};

function includeObject(query: URLSearchParams): IncludeObject {
  const value = query.get('includeObject');
  return value === 'None' || value === 'Object' ? value : 'Metadata';
}

function deleteOptions(body: unknown, query: URLSearchParams): { propagationPolicy?: PropagationPolicy; preconditions?: { uid?: string; resourceVersion?: string } } {
  const options = (body && typeof body === 'object' ? body : {}) as {
    propagationPolicy?: string;
    orphanDependents?: boolean;
    preconditions?: { uid?: string; resourceVersion?: string };
  };
  let policy = query.get('propagationPolicy') ?? options.propagationPolicy;
  if (policy === undefined && (query.get('orphanDependents') === 'true' || options.orphanDependents === true)) policy = 'Orphan';
  if (policy !== undefined && !['Background', 'Foreground', 'Orphan'].includes(policy)) {
    throw badRequest(`unsupported propagationPolicy "${policy}"`);
  }
  return {
    ...(policy ? { propagationPolicy: policy as PropagationPolicy } : {}),
    ...(options.preconditions ? { preconditions: options.preconditions } : {}),
  };
}
