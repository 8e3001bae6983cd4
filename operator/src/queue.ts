export interface WorkQueueOptions {
  /** Reconciles one key; a rejection schedules a retry. */
  process(key: string): Promise<void>;
  /** Keys processed at once (never the same key twice). */
  concurrency: number;
  /** First retry delay after a failure; doubles per consecutive failure up to retryMaxMs. */
  retryBaseMs: number;
  retryMaxMs: number;
  onError?(key: string, error: unknown, attempt: number, retryInMs: number): void;
  /** Called whenever the number of keys waiting changes. */
  onDepth?(depth: number): void;
}

/** Exponential backoff: base, 2×base, 4×base, … capped at max. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
}

/**
 * A FIFO of keys (`<kind>/<namespace>/<name>`): one key is never processed twice at
 * once, events for a waiting key coalesce into one run, an event for a key being
 * processed runs it once more afterwards (the state may have moved meanwhile), and a
 * failed run is retried with backoff.
 */
export class WorkQueue {
  readonly #options: WorkQueueOptions;
  // A Set keeps insertion order: first added, first processed; a second add is a no-op.
  readonly #waiting = new Set<string>();
  readonly #active = new Map<string, Promise<void>>();
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #retries = new Map<string, NodeJS.Timeout>();
  #stopped = false;

  constructor(options: WorkQueueOptions) {
    this.#options = options;
  }

  get depth(): number {
    return this.#waiting.size;
  }

  /** Keys being processed right now (tests check that no key is ever there twice). */
  get active(): readonly string[] {
    return [...this.#active.keys()];
  }

  add(key: string): void {
    if (this.#stopped) return;
    if (this.#active.has(key)) {
      this.#dirty.add(key);
      return;
    }
    this.#waiting.add(key);
    this.#pump();
  }

  /** Stops taking work and waits for the runs in flight; retries and waiting keys are dropped. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#waiting.clear();
    this.#dirty.clear();
    for (const timer of this.#retries.values()) clearTimeout(timer);
    this.#retries.clear();
    this.#options.onDepth?.(0);
    await Promise.all([...this.#active.values()]);
  }

  #pump(): void {
    for (const key of this.#waiting) {
      if (this.#active.size >= this.#options.concurrency) break;
      this.#waiting.delete(key);
      this.#active.set(key, this.#run(key));
    }
    this.#options.onDepth?.(this.#waiting.size);
  }

  async #run(key: string): Promise<void> {
    // Let add() return before the work starts, so callers never run reconciles inline.
    await Promise.resolve();
    try {
      await this.#options.process(key);
      this.#failures.delete(key);
      this.#cancelRetry(key);
    } catch (error) {
      this.#retryLater(key, error);
    } finally {
      this.#active.delete(key);
      if (this.#dirty.delete(key)) this.#waiting.add(key);
      if (!this.#stopped) this.#pump();
    }
  }

  #retryLater(key: string, error: unknown): void {
    const attempt = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, attempt);
    const delay = backoffDelay(attempt, this.#options.retryBaseMs, this.#options.retryMaxMs);
    this.#options.onError?.(key, error, attempt, delay);
    if (this.#stopped) return;
    this.#cancelRetry(key);
    const timer = setTimeout(() => {
      this.#retries.delete(key);
      this.add(key);
    }, delay);
    timer.unref();
    this.#retries.set(key, timer);
  }

  #cancelRetry(key: string): void {
    const timer = this.#retries.get(key);
    if (timer) clearTimeout(timer);
    this.#retries.delete(key);
  }
}
