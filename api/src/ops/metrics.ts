import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The request duration histogram, labelled by route template (never the raw path). */
export class HttpMetrics {
  readonly #duration: Histogram<'method' | 'route' | 'status'>;

  constructor(registry: Registry) {
    this.#duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Duration of HTTP requests by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    this.#duration.observe({ method, route, status: String(status) }, seconds);
  }
}

/**
 * Event streams open on this process, by kind and by what holds them: `socket` once taken
 * off the HTTP server, `response` when written through the response (a pipelined request
 * behind it, or a Node whose HTTP server fields changed: each such stream holds about
 * 2.5 times the memory).
 */
export class StreamMetrics {
  readonly #open: Gauge<'stream' | 'held_by'>;

  constructor(registry: Registry) {
    this.#open = new Gauge({
      name: 'cutroom_event_streams_open',
      help: 'Event streams open on this process, by stream kind and by what holds them (socket: taken off the HTTP server; response: written through it).',
      labelNames: ['stream', 'held_by'],
      registers: [registry],
    });
  }

  /** Counts an open stream; the function returned uncounts it, once. */
  opened(stream: 'user' | 'project', heldBy: 'socket' | 'response'): () => void {
    const labels = { stream, held_by: heldBy };
    this.#open.inc(labels);
    let counted = true;
    return () => {
      if (!counted) return;
      counted = false;
      this.#open.dec(labels);
    };
  }
}

/** Job metrics shared by the local runner and the operator. */
export class JobMetrics {
  readonly created: Counter<'kind'>;
  readonly succeeded: Counter<'kind'>;
  readonly failed: Counter<'kind'>;
  readonly duration: Histogram<'kind' | 'outcome'>;
  readonly queueDepth: Gauge<'kind'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.created = new Counter({ name: 'cutroom_jobs_created_total', help: 'Jobs created, by kind.', labelNames: ['kind'], registers });
    this.succeeded = new Counter({ name: 'cutroom_jobs_succeeded_total', help: 'Jobs that succeeded, by kind.', labelNames: ['kind'], registers });
    this.failed = new Counter({ name: 'cutroom_jobs_failed_total', help: 'Jobs that failed, by kind.', labelNames: ['kind'], registers });
    this.duration = new Histogram({
      name: 'cutroom_job_duration_seconds',
      help: 'Wall time of jobs, by kind and outcome.',
      labelNames: ['kind', 'outcome'],
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 3600],
      registers,
    });
    this.queueDepth = new Gauge({ name: 'cutroom_job_queue_depth', help: 'Jobs waiting to run, by kind.', labelNames: ['kind'], registers });
  }
}

export function createMetricsRegistry(prefix = ''): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix });
  return registry;
}
