// A fault-injecting TLS proxy in front of the test control plane's API server, for the failures
// a real server gives only by chance: a request answered 500, watches dropped (cleanly or with
// the connection cut), a history compacted under a watch (410 Gone). Everything else reaches
// the real server unchanged, and every request is recorded.
//
// The proxy serves the API server's own certificate (its names include 127.0.0.1). A request
// with a bearer token is forwarded with it, so RBAC judges the token's owner; one without goes
// on with the admin's client certificate.
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { Agent, createServer, request } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { eventually } from '../../hack/fixtures/wait.ts';
import type { KubeCluster } from './kube-cluster.ts';

export interface InjectedFault {
  method: string;
  /** The request's path (no query). */
  path: string;
  code: number;
  /** The Status body's reason and message (defaults: InternalError, a fault injected by the test proxy). */
  reason?: string;
  message?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
}

export interface FaultProxy {
  url: string;
  /** A client configuration through the proxy: as the admin, or as the token's owner. */
  kubeConfig(namespace?: string, token?: string): KubeConfig;
  /**
   * The next `times` requests matching `fault` are answered with its code and a Status body;
   * `hits()` counts them so far, `clear()` lets the rest through.
   */
  failNext(fault: InjectedFault, times?: number): { hits(): number; clear(): void };
  /**
   * Ends every open watch: cleanly, or cutting the connection (`abrupt`). After `compacted`,
   * each watch that resumes from a resourceVersion older than the server's current one is
   * answered as a compacted history answers it: one ERROR event, 410 Expired.
   */
  dropWatches(options?: { abrupt?: boolean }): number;
  compact(): Promise<void>;
  openWatches(): number;
  waitForWatches(count: number, timeoutMs?: number): Promise<void>;
  readonly requests: readonly RecordedRequest[];
  close(): Promise<void>;
}

const isWatch = (query: URLSearchParams) => query.get('watch') === 'true' || query.get('watch') === '1';

function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

export async function startFaultProxy(cluster: KubeCluster): Promise<FaultProxy> {
  const file = (name: string) => readFile(join(cluster.dir, name));
  const ca = await file('ca.crt');
  const asAdmin = new Agent({ ca, cert: await file('admin.crt'), key: await file('admin.key'), keepAlive: true });
  const asCaller = new Agent({ ca, keepAlive: true });
  const upstream = new URL(cluster.url);
  const faults: { fault: InjectedFault; left: number }[] = [];
  const requests: RecordedRequest[] = [];
  const watches = new Set<{ response: ServerResponse; upstream?: IncomingMessage }>();
  let compactedAt: bigint | undefined;

  const server = createServer({ cert: await file('apiserver.crt'), key: await file('apiserver.key') }, (incoming: IncomingMessage, response: ServerResponse) => {
    const url = new URL(incoming.url ?? '/', 'https://proxy');
    requests.push({ method: incoming.method ?? 'GET', path: url.pathname, query: url.searchParams });
    const fault = faults.find((f) => f.left > 0 && f.fault.method === incoming.method && f.fault.path === url.pathname);
    if (fault) {
      fault.left -= 1;
      incoming.resume();
      response.writeHead(fault.fault.code, { 'content-type': 'application/json' });
      response.end(JSON.stringify(status(fault.fault.code, fault.fault.reason ?? 'InternalError', fault.fault.message ?? 'a fault injected by the test proxy')));
      return;
    }
    const watch = isWatch(url.searchParams);
    const from = url.searchParams.get('resourceVersion');
    if (watch && compactedAt !== undefined && from && /^\d+$/.test(from) && BigInt(from) < compactedAt) {
      incoming.resume();
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(`${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', `too old resource version: ${from} (${compactedAt})`) })}\n`);
      return;
    }
    const headers = { ...incoming.headers, host: upstream.host };
    const forwarded = request(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers, agent: incoming.headers.authorization ? asCaller : asAdmin },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        // A watch's headers go at once, as the server sends them, not with its first event.
        response.flushHeaders();
        answer.pipe(response);
        if (entry) entry.upstream = answer;
      },
    );
    const entry: { response: ServerResponse; upstream?: IncomingMessage } | undefined = watch ? { response } : undefined;
    if (entry) {
      watches.add(entry);
      response.once('close', () => {
        watches.delete(entry);
        forwarded.destroy();
      });
    }
    forwarded.on('error', () => response.destroy());
    incoming.pipe(forwarded);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;

  return {
    url,
    kubeConfig(namespace = 'default', token?: string) {
      const kc = cluster.kubeConfig(namespace, token);
      const current = kc.getCurrentCluster()!;
      kc.clusters = [{ ...current, server: url }];
      return kc;
    },
    failNext(fault, times = 1) {
      const entry = { fault, left: times };
      faults.push(entry);
      return {
        hits: () => times - entry.left,
        clear: () => {
          entry.left = 0;
        },
      };
    },
    dropWatches(options = {}) {
      const open = [...watches];
      for (const watch of open) {
        // Counted as closed at once: a wait for the watches that follow counts only those.
        watches.delete(watch);
        if (options.abrupt) watch.response.socket?.destroy();
        else watch.response.end();
        watch.upstream?.destroy();
      }
      return open.length;
    },
    async compact() {
      // A write, so that the server's resourceVersion is newer than any a watch holds now: a watch
      // resuming from before it finds its history gone.
      const written = await cluster.kubeConfig().makeApiClient(CoreV1Api).createNamespacedConfigMap({ namespace: 'default', body: { metadata: { generateName: 'compaction-' } } });
      compactedAt = BigInt(written.metadata!.resourceVersion!);
    },
    openWatches: () => watches.size,
    async waitForWatches(count, timeoutMs = 5000) {
      await eventually(async () => (watches.size >= count ? true : undefined), () => `${count} open watches (open: ${watches.size})`, timeoutMs, 20);
    },
    requests,
    async close() {
      for (const watch of watches) watch.response.socket?.destroy();
      server.closeAllConnections();
      server.close();
      asAdmin.destroy();
      asCaller.destroy();
    },
  };
}
