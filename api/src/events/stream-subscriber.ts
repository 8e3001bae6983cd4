import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Unavailable } from '../shared/errors.ts';

type Listener = (message: string) => void;
/** Told once, after `listen` resolved, if the channel stops being subscribed: the subscriber connection closed. */
type LostListener = (error: Error) => void;

interface Subscription {
  deliver: Listener;
  lost: LostListener;
  /** Its `listen` resolved: from now on a lost channel is reported to `lost`, not thrown. */
  live: boolean;
}

/** One socket of the subscriber connection, from its opening to its close: what was subscribed on it ends with it. */
interface Link {
  /** Rejects when the socket closes: no reply to a command sent on it will come any more. */
  dropped: Promise<never>;
  drop(error: Error): void;
}

interface ChannelEntry {
  subscriptions: Set<Subscription>;
  /** The channel's SUBSCRIBE: every listener awaits it, not only the one that sent it. */
  subscribed: Promise<void>;
  /** The socket Redis confirmed the subscription on. */
  link: Link | undefined;
}

interface Connection {
  redis: Redis;
  link: Link;
  /** Resolves at the connection's next `ready` or `end`; shared by every SUBSCRIBE waiting for it. */
  settled: Promise<void> | undefined;
}

export interface ChannelSubscriberOptions {
  /** How long `listen` may wait for a ready connection and Redis's confirmation (retries included) before failing with 503. */
  subscribeTimeoutMs?: number;
}

/** ioredis statuses from which the connection is still on its way to `ready`. */
const CONNECTING = new Set(['wait', 'connecting', 'connect', 'reconnecting', 'close']);

/**
 * One Redis subscriber connection per api process, shared by every open stream:
 * a channel is subscribed while at least one stream listens to it.
 *
 * SUBSCRIBE is only sent on a ready connection: sent during ioredis's handshake, it puts the
 * connection in subscriber mode before the handshake's INFO, the ready check fails, and
 * ioredis reconnects, failing the pending SUBSCRIBEs and forgetting the confirmed ones
 * (ioredis #2037, since 5.8.2). Nothing is resubscribed behind a listener's back either: a
 * subscription lives as long as the socket that confirmed it, and its listeners are told
 * when that socket closes (the stream ends; its client reconnects and subscribes anew).
 */
export class ChannelSubscriber {
  readonly #redis: Redis;
  readonly #logger: Logger;
  readonly #subscribeTimeoutMs: number;
  readonly #channels = new Map<string, ChannelEntry>();
  #connection: Connection | undefined;

  constructor(redis: Redis, logger: Logger, options: ChannelSubscriberOptions = {}) {
    this.#redis = redis;
    this.#logger = logger;
    this.#subscribeTimeoutMs = options.subscribeTimeoutMs ?? 5000;
  }

  /**
   * Starts delivering the channel's messages to `deliver`; resolves once Redis confirmed the
   * subscription on the current socket, fails with 503 when no ready connection came in time.
   * Should that socket close later, `lost` is told once and nothing more is delivered.
   */
  async listen(channel: string, deliver: Listener, lost: LostListener = () => {}): Promise<() => Promise<void>> {
    const connection = this.#connect();
    let entry = this.#channels.get(channel);
    if (!entry) {
      const created: ChannelEntry = {
        subscriptions: new Set(),
        link: undefined,
        subscribed: this.#subscribe(connection, channel).then(
          (link) => void (created.link = link),
          (error: unknown) => {
            if (this.#channels.get(channel) === created) this.#channels.delete(channel);
            throw error;
          },
        ),
      };
      entry = created;
      this.#channels.set(channel, entry);
    }
    const joined = entry;
    const subscription: Subscription = { deliver, lost, live: false };
    joined.subscriptions.add(subscription);
    try {
      await joined.subscribed;
      // The socket that confirmed it closed before this listener resumed.
      if (this.#channels.get(channel) !== joined) throw new Error('the Redis subscriber connection closed');
    } catch (error) {
      joined.subscriptions.delete(subscription);
      this.#logger.warn({ err: error, channel }, 'subscribing a stream channel failed');
      throw Unavailable('http.503', { cause: error });
    }
    subscription.live = true;
    let stopped = false;
    return async () => {
      if (stopped) return;
      stopped = true;
      const current = this.#channels.get(channel);
      if (current !== joined || !current.subscriptions.delete(subscription) || current.subscriptions.size > 0) return;
      this.#channels.delete(channel);
      const link = connection.link;
      // A socket that closes meanwhile takes the subscription with it: nothing to report then.
      await Promise.race([connection.redis.unsubscribe(channel), link.dropped]).catch((error: unknown) => {
        if (link === connection.link) this.#logger.warn({ err: error, channel }, 'unsubscribe failed');
      });
    };
  }

  /** Channels with at least one listener in this process. */
  channels(): string[] {
    return [...this.#channels.keys()];
  }

  close(): void {
    this.#channels.clear();
    this.#connection?.redis.disconnect();
    this.#connection = undefined;
  }

  /**
   * SUBSCRIBE on a ready connection, again on the next socket if the one it was sent on
   * closes before the reply; the socket that confirmed it. Redis refusing it is final, and
   * so is the deadline: a request waits for a subscription no longer than that.
   */
  async #subscribe(connection: Connection, channel: string): Promise<Link> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      const message = `the Redis subscriber connection did not confirm the subscription within ${this.#subscribeTimeoutMs} ms`;
      timer = setTimeout(() => reject(new Error(message)), this.#subscribeTimeoutMs);
    });
    try {
      for (;;) {
        const { redis } = connection;
        if (redis.status === 'end') throw new Error('the Redis subscriber connection is closed');
        if (CONNECTING.has(redis.status)) {
          await Promise.race([this.#settled(connection), late]);
          continue;
        }
        const link = connection.link;
        try {
          await Promise.race([redis.subscribe(channel), link.dropped, late]);
        } catch (error) {
          if (link === connection.link) throw error;
          continue;
        }
        // Confirmed on a socket that is already gone: the subscription went with it.
        if (link === connection.link) return link;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** Resolves at the connection's next ready (or end). */
  #settled(connection: Connection): Promise<void> {
    connection.settled ??= new Promise<void>((resolve) => {
      const settle = () => {
        connection.redis.off('ready', settle).off('end', settle);
        connection.settled = undefined;
        resolve();
      };
      connection.redis.on('ready', settle).on('end', settle);
    });
    return connection.settled;
  }

  #connect(): Connection {
    if (this.#connection) return this.#connection;
    // A connection in subscriber mode can run no other command, hence its own. Subscriptions
    // are this class's to restore (see above): ioredis must not replay them on a new socket.
    const redis = this.#redis.duplicate({ autoResubscribe: false, autoResendUnfulfilledCommands: false });
    const connection: Connection = { redis, link: openLink(), settled: undefined };
    // With lazyConnect nothing else would connect it: SUBSCRIBE waits for ready instead of connecting.
    if (redis.status === 'wait') redis.connect().catch(() => {});
    redis.on('error', (error) => this.#logger.warn({ err: error }, 'redis subscriber error'));
    redis.on('message', (channel: string, message: string) => {
      for (const subscription of this.#channels.get(channel)?.subscriptions ?? []) subscription.deliver(message);
    });
    redis.on('close', () => this.#dropLink(connection));
    this.#connection = connection;
    return connection;
  }

  /** The socket closed: its subscriptions are gone, and every live listener of them is told. */
  #dropLink(connection: Connection): void {
    const dropped = connection.link;
    connection.link = openLink();
    const error = new Error('the Redis subscriber connection closed');
    dropped.drop(error);
    const lost = [...this.#channels].filter(([, entry]) => entry.link === dropped);
    for (const [channel] of lost) this.#channels.delete(channel);
    if (lost.length) this.#logger.warn({ channels: lost.length }, 'the redis subscriber connection closed: ending the streams of its channels');
    for (const [, entry] of lost) for (const subscription of entry.subscriptions) if (subscription.live) subscription.lost(error);
  }
}

function openLink(): Link {
  let drop!: (error: Error) => void;
  const dropped = new Promise<never>((_, reject) => (drop = reject));
  // Commands race it; a socket with nothing in flight closes unobserved.
  dropped.catch(() => {});
  return { dropped, drop };
}
