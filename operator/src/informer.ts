import { makeInformer } from '@kubernetes/client-node';
import type { Informer, KubeConfig, KubernetesListObject, KubernetesObject, ObjectCache } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { backoffDelay } from './queue.ts';

type ChangeType = 'add' | 'update' | 'delete';

export interface WatchOptions<T extends KubernetesObject> {
  /** What is watched, for logs and metrics (a plural: `artifactjobs`, `jobs`). */
  resource: string;
  kubeConfig: KubeConfig;
  /** The watch path, e.g. /apis/batch/v1/namespaces/<ns>/jobs. */
  path: string;
  /** The list call, with the same selector as the watch. */
  list(): Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  onChange(type: ChangeType, object: T): void;
  /** Called each time a stopped informer is restarted after an error. */
  onRestart?(): void;
  retryBaseMs: number;
  retryMaxMs: number;
  logger: Logger;
}

/**
 * client-node's list+watch informer, kept alive: it recovers from 410 Gone by itself,
 * but any other error (a dropped connection, a failed list) stops it for good, so it is
 * started again with backoff. stop() aborts the watch, which the informer also reports
 * as an error: that one must not restart it.
 */
export class WatchedResources<T extends KubernetesObject> {
  readonly #options: WatchOptions<T>;
  readonly #informer: Informer<T> & ObjectCache<T>;
  #stopped = true;
  #restartTimer: NodeJS.Timeout | undefined;
  #failures = 0;
  #lastFailureAt = 0;

  constructor(options: WatchOptions<T>) {
    this.#options = options;
    this.#informer = makeInformer(options.kubeConfig, options.path, () => options.list(), options.labelSelector);
    for (const type of ['add', 'update', 'delete'] as const) {
      this.#informer.on(type, (object) => {
        // One bad object or handler must not take the watch down.
        try {
          options.onChange(type, object);
        } catch (error) {
          options.logger.error({ err: error, resource: options.resource, name: object.metadata?.name }, 'watch handler failed');
        }
      });
    }
    this.#informer.on('error', (error: unknown) => this.#failed(error));
  }

  async start(): Promise<void> {
    this.#stopped = false;
    await this.#informer.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#restartTimer);
    await this.#informer.stop();
  }

  get(name: string, namespace: string): T | undefined {
    return this.#informer.get(name, namespace);
  }

  list(namespace?: string): readonly T[] {
    return this.#informer.list(namespace);
  }

  #failed(error: unknown): void {
    if (this.#stopped) return;
    const now = Date.now();
    // Failures far apart are each a first failure; a run of them backs off.
    if (now - this.#lastFailureAt > this.#options.retryMaxMs) this.#failures = 0;
    this.#failures += 1;
    this.#lastFailureAt = now;
    const delay = backoffDelay(this.#failures, this.#options.retryBaseMs, this.#options.retryMaxMs);
    this.#options.logger.warn({ err: error, resource: this.#options.resource, retry_in_ms: delay }, 'watch stopped; restarting');
    clearTimeout(this.#restartTimer);
    this.#restartTimer = setTimeout(() => {
      if (this.#stopped) return;
      this.#options.onRestart?.();
      this.#informer.start().catch((startError: unknown) => this.#failed(startError));
    }, delay);
  }
}
