import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

type Listener = (message: string) => void;

/**
 * One Redis subscriber connection per api process, shared by every open stream:
 * a channel is subscribed while at least one stream listens to it.
 */
export class ChannelSubscriber {
  readonly #redis: Redis;
  readonly #logger: Logger;
  readonly #listeners = new Map<string, Set<Listener>>();
  #subscriber: Redis | undefined;

  constructor(redis: Redis, logger: Logger) {
    this.#redis = redis;
    this.#logger = logger;
  }

  /** Starts delivering the channel's messages to `listener`; resolves once Redis confirmed the subscription. */
  async listen(channel: string, listener: Listener): Promise<() => Promise<void>> {
    const subscriber = this.#connection();
    let listeners = this.#listeners.get(channel);
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(channel, listeners);
    }
    listeners.add(listener);
    // Commands on one connection run in order, so a later unsubscribe cannot overtake this.
    if (listeners.size === 1) await subscriber.subscribe(channel);
    let stopped = false;
    return async () => {
      if (stopped) return;
      stopped = true;
      const current = this.#listeners.get(channel);
      if (!current?.delete(listener) || current.size > 0) return;
      this.#listeners.delete(channel);
      await subscriber.unsubscribe(channel).catch((error: unknown) => this.#logger.warn({ err: error, channel }, 'unsubscribe failed'));
    };
  }

  /** Channels with at least one listener in this process. */
  channels(): string[] {
    return [...this.#listeners.keys()];
  }

  close(): void {
    this.#listeners.clear();
    this.#subscriber?.disconnect();
    this.#subscriber = undefined;
  }

  #connection(): Redis {
    if (this.#subscriber) return this.#subscriber;
    // A connection in subscriber mode can run no other command, hence its own.
    const subscriber = this.#redis.duplicate();
    subscriber.on('error', (error) => this.#logger.warn({ err: error }, 'redis subscriber error'));
    subscriber.on('message', (channel: string, message: string) => {
      for (const listener of this.#listeners.get(channel) ?? []) listener(message);
    });
    this.#subscriber = subscriber;
    return subscriber;
  }
}
