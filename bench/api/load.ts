// A closed-loop load generator: `concurrency` workers, each on its own keep-alive
// connection, send the next request as soon as the previous answer is read.
import { Agent, request as httpRequest } from 'node:http';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers with another status than expected, or transport errors. */
  errors: number;
  firstError?: string;
}

function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

function send(agent: Agent, base: URL, load: LoadRequest): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...load.headers };
    if (load.body !== undefined) headers['Content-Length'] = Buffer.byteLength(load.body);
    const outgoing = httpRequest({ agent, host: base.hostname, port: base.port, method: load.method, path: load.path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(load.body);
  });
}

/**
 * Runs the load for `seconds` after `warmupSeconds` not counted. `next(worker)` gives
 * each worker's next request (workers may act as different users).
 */
export async function runLoad(options: {
  url: string;
  concurrency: number;
  seconds: number;
  warmupSeconds: number;
  expectStatus: number;
  next: (worker: number) => LoadRequest;
}): Promise<LoadResult> {
  const base = new URL(options.url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const warmupEnds = performance.now() + options.warmupSeconds * 1000;
  const ends = warmupEnds + options.seconds * 1000;
  let measuredFrom = Number.NaN;
  const worker = async (index: number) => {
    for (let now = performance.now(); now < ends; now = performance.now()) {
      const started = now;
      let ok = false;
      try {
        const answer = await send(agent, base, options.next(index));
        ok = answer.status === options.expectStatus;
        if (!ok) firstError ??= `status ${answer.status}: ${answer.body.slice(0, 200)}`;
      } catch (error) {
        firstError ??= String(error);
      }
      const finished = performance.now();
      if (started >= warmupEnds) {
        if (Number.isNaN(measuredFrom)) measuredFrom = started;
        latencies.push(finished - started);
        if (!ok) errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, index) => worker(index)));
  agent.destroy();
  const seconds = (performance.now() - measuredFrom) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    errors,
    ...(firstError ? { firstError } : {}),
  };
}
