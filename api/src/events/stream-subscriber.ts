import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

type Listener = (message: string) => void;

interface ChannelEntry {
  listeners: Set<Listener>;
  /** The channel's SUBSCRIBE: every listener awaits it, not only the one that sent it. */
  subscribed: Promise<void>;
}

/**
 * One Redis subscriber connection per api process, shared by every open stream:
 * a channel is subscribed while at least one stream listens to it.
 */
export class ChannelSubscriber {
  readonly #redis: Redis;
  readonly #logger: Logger;
  readonly #channels = new Map<string, ChannelEntry>();
  #subscriber: Redis | undefined;

  constructor(redis: Redis, logger: Logger) {
    this.#redis = redis;
    this.#logger = logger;
  }

  /** Starts delivering the channel's messages to `listener`; resolves once Redis confirmed the subscription. */
  async listen(channel: string, listener: Listener): Promise<() => Promise<void>> {
    const subscriber = this.#connection();
    let entry = this.#channels.get(channel);
    if (!entry) {
      // Commands on one connection run in order, so a later unsubscribe cannot overtake this.
      entry = { listeners: new Set(), subscribed: subscriber.subscribe(channel).then(() => undefined) };
      this.#channels.set(channel, entry);
    }
    const joined = entry;
    joined.listeners.add(listener);
    try {
      await joined.subscribed;
    } catch (error) {
      joined.listeners.delete(listener);
      if (joined.listeners.size === 0 && this.#channels.get(channel) === joined) this.#channels.delete(channel);
      throw error;
    }
    let stopped = false;
    return async () => {
      if (stopped) return;
      stopped = true;
      const current = this.#channels.get(channel);
      if (current !== joined || !current.listeners.delete(listener) || current.listeners.size > 0) return;
      this.#channels.delete(channel);
      await subscriber.unsubscribe(channel).catch((error: unknown) => this.#logger.warn({ err: error, channel }, 'unsubscribe failed'));
    };
  }

  /** Channels with at least one listener in this process. */
  channels(): string[] {
    return [...this.#channels.keys()];
  }

  close(): void {
    this.#channels.clear();
    this.#subscriber?.disconnect();
    this.#subscriber = undefined;
  }

  #connection(): Redis {
    if (this.#subscriber) return this.#subscriber;
    // A connection in subscriber mode can run no other command, hence its own.
    const subscriber = this.#redis.duplicate();
    subscriber.on('error', (error) => this.#logger.warn({ err: error }, 'redis subscriber error'));
    subscriber.on('message', (channel: string, message: string) => {
      for (const listener of this.#channels.get(channel)?.listeners ?? []) listener(message);
    });
    this.#subscriber = subscriber;
    return subscriber;
  }
}
