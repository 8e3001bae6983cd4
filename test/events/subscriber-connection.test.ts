import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { ChannelSubscriber } from '../../api/src/events/stream-subscriber.ts';
import { DomainError } from '../../api/src/shared/errors.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { eventually } from '../support/wait.ts';

const silent = pino({ level: 'silent' });
const redisUrl = () => process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';

/** How many connections Redis counts as subscribed to each channel. */
async function numsub(redis: Redis, channels: string[]): Promise<number[]> {
  const reply = (await redis.pubsub('NUMSUB', ...channels)) as (string | number)[];
  return channels.map((_, index) => Number(reply[index * 2 + 1]));
}

/** A subscriber connection with ioredis's statuses, whose SUBSCRIBE replies only when the test says so. */
class FakeConnection extends EventEmitter {
  status = 'connecting';
  readonly commands: string[] = [];
  readonly #replies: (() => void)[] = [];

  subscribe(channel: string): Promise<number> {
    this.commands.push(`subscribe ${channel}`);
    return new Promise((resolve) => this.#replies.push(() => resolve(1)));
  }

  async unsubscribe(channel: string): Promise<number> {
    this.commands.push(`unsubscribe ${channel}`);
    return 0;
  }

  /** Redis answers the latest SUBSCRIBE (one sent on a socket that closed never is). */
  confirm(): void {
    this.#replies.pop()!();
  }

  become(status: 'ready' | 'close' | 'reconnecting'): void {
    this.status = status;
    this.emit(status);
  }

  disconnect(): void {}
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('channel subscriber connection: SUBSCRIBE only on a ready connection, and a subscription ends with its socket (ioredis #2037)', () => {
  let redis: Redis;

  before(() => {
    redis = new Redis(redisUrl());
  });
  after(() => {
    redis.disconnect();
  });

  it('subscribes issued while the connection is still connecting are all confirmed and all subscribed in Redis, over 5 fresh connections', async () => {
    for (let round = 0; round < 5; round++) {
      const subscriber = new ChannelSubscriber(redis, silent);
      const channels = Array.from({ length: 40 }, () => `test:${randomUUID()}`);
      try {
        // One a millisecond: some while ioredis connects, some during its handshake, some after.
        const listens: Promise<unknown>[] = [];
        for (const channel of channels) {
          listens.push(subscriber.listen(channel, () => {}));
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
        const outcomes = await Promise.allSettled(listens);
        expect(outcomes.filter((outcome) => outcome.status === 'rejected'), `round ${round}`).to.deep.equal([]);
        expect(await numsub(redis, channels), `round ${round}: channels subscribed in Redis`).to.deep.equal(channels.map(() => 1));
      } finally {
        subscriber.close();
      }
    }
  });

  it('no SUBSCRIBE before the connection is ready; one in flight when the socket closes is sent again on the next socket', async () => {
    const connection = new FakeConnection();
    const subscriber = new ChannelSubscriber({ duplicate: () => connection } as unknown as Redis, silent);
    const listening = subscriber.listen('user:1', () => {});
    await tick();
    expect(connection.commands).to.deep.equal([]);
    connection.become('ready');
    await tick();
    expect(connection.commands).to.deep.equal(['subscribe user:1']);
    connection.become('close');
    connection.become('reconnecting');
    await tick();
    connection.become('ready');
    await tick();
    expect(connection.commands).to.deep.equal(['subscribe user:1', 'subscribe user:1']);
    connection.confirm();
    await listening;
    expect(subscriber.channels()).to.deep.equal(['user:1']);
  });

  it('a Redis blink: the listeners of the channels subscribed on the closed socket are told once (their streams end), a listen during the blink is confirmed once Redis is back, and messages flow again', async function () {
    this.timeout(20_000);
    const url = new URL(redisUrl());
    const proxy: TcpProxy = await startTcpProxy(url.hostname, Number(url.port || 6379));
    const throughProxy = new Redis({ host: '127.0.0.1', port: proxy.port, db: Number(url.pathname.slice(1) || 0) });
    throughProxy.on('error', () => {});
    const subscriber = new ChannelSubscriber(throughProxy, silent, { subscribeTimeoutMs: 10_000 });
    const [before, during] = [`test:${randomUUID()}`, `test:${randomUUID()}`];
    try {
      const lost: string[] = [];
      await subscriber.listen(before, () => {}, (error) => lost.push(error.message));
      expect(await numsub(redis, [before])).to.deep.equal([1]);

      proxy.cut();
      await eventually(async () => (lost.length ? true : undefined), 'the listener told its channel is lost', 5000, 10);
      expect(subscriber.channels()).to.deep.equal([]);
      const received: string[] = [];
      const listening = subscriber.listen(during, (message) => received.push(message));
      await new Promise((resolve) => setTimeout(resolve, 300));
      proxy.restore();
      await listening;

      expect(await numsub(redis, [before, during])).to.deep.equal([0, 1]);
      await redis.publish(during, 'after the blink');
      await eventually(async () => (received.length ? true : undefined), 'the message published after the blink', 5000, 10);
      expect(received).to.deep.equal(['after the blink']);
      expect(lost).to.have.length(1);
    } finally {
      subscriber.close();
      throughProxy.disconnect();
      await proxy.close();
    }
  });

  it('no ready connection within the budget → the listen fails as unavailable (503), leaving no channel behind', async () => {
    const url = new URL(redisUrl());
    const proxy = await startTcpProxy(url.hostname, Number(url.port || 6379));
    proxy.cut();
    const throughProxy = new Redis({ host: '127.0.0.1', port: proxy.port, lazyConnect: true });
    throughProxy.on('error', () => {});
    const subscriber = new ChannelSubscriber(throughProxy, silent, { subscribeTimeoutMs: 300 });
    try {
      const started = Date.now();
      const error = await subscriber.listen(`test:${randomUUID()}`, () => {}).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).to.be.instanceOf(DomainError);
      expect((error as DomainError).kind).to.equal('unavailable');
      expect(Date.now() - started).to.be.below(2000);
      expect(subscriber.channels()).to.deep.equal([]);
    } finally {
      subscriber.close();
      throughProxy.disconnect();
      await proxy.close();
    }
  });
});
