import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { pino } from 'pino';
import type { Redis } from 'ioredis';
import { ChannelSubscriber } from '../../api/src/events/stream-subscriber.ts';

/** A subscriber connection whose SUBSCRIBE replies only when the test says so. */
class FakeSubscriberConnection extends EventEmitter {
  readonly commands: string[] = [];
  readonly #replies: { resolve: () => void; reject: (error: Error) => void }[] = [];

  subscribe(channel: string): Promise<number> {
    this.commands.push(`subscribe ${channel}`);
    return new Promise((resolve, reject) => this.#replies.push({ resolve: () => resolve(1), reject }));
  }

  async unsubscribe(channel: string): Promise<number> {
    this.commands.push(`unsubscribe ${channel}`);
    return 0;
  }

  confirm(): void {
    this.#replies.shift()!.resolve();
  }

  refuse(error: Error): void {
    this.#replies.shift()!.reject(error);
  }

  disconnect(): void {}
}

function subscriberWithFakeConnection() {
  const connection = new FakeSubscriberConnection();
  const redis = { duplicate: () => connection } as unknown as Redis;
  return { connection, subscriber: new ChannelSubscriber(redis, pino({ level: 'silent' })) };
}

const settled = async <T>(promise: Promise<T>): Promise<boolean> => {
  let done = false;
  promise.then(() => (done = true), () => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('channel subscriber: one SUBSCRIBE per channel, awaited by every listener', () => {
  it('a second listener of a channel whose SUBSCRIBE is pending waits for its confirmation', async () => {
    const { connection, subscriber } = subscriberWithFakeConnection();
    const first = subscriber.listen('user:1', () => {});
    const second = subscriber.listen('user:1', () => {});
    expect(await settled(second), 'second listener resolved before Redis confirmed').to.equal(false);
    expect(await settled(first)).to.equal(false);
    connection.confirm();
    await Promise.all([first, second]);
    expect(connection.commands).to.deep.equal(['subscribe user:1']);
  });

  it('once confirmed, later listeners resolve at once without another SUBSCRIBE, and the last to stop unsubscribes', async () => {
    const { connection, subscriber } = subscriberWithFakeConnection();
    const first = subscriber.listen('user:2', () => {});
    connection.confirm();
    const stopFirst = await first;
    const stopSecond = await subscriber.listen('user:2', () => {});
    await stopFirst();
    expect(connection.commands).to.deep.equal(['subscribe user:2']);
    await stopSecond();
    expect(connection.commands).to.deep.equal(['subscribe user:2', 'unsubscribe user:2']);
    expect(subscriber.channels()).to.deep.equal([]);
  });

  it('a refused SUBSCRIBE fails every waiting listener and leaves no channel behind; the next listen subscribes again', async () => {
    const { connection, subscriber } = subscriberWithFakeConnection();
    const first = subscriber.listen('user:3', () => {});
    const second = subscriber.listen('user:3', () => {});
    connection.refuse(new Error('connection lost'));
    const outcomes = await Promise.allSettled([first, second]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['rejected', 'rejected']);
    expect(subscriber.channels()).to.deep.equal([]);
    const third = subscriber.listen('user:3', () => {});
    connection.confirm();
    await third;
    expect(connection.commands).to.deep.equal(['subscribe user:3', 'subscribe user:3']);
  });

  it('messages reach every listener of the channel', async () => {
    const { connection, subscriber } = subscriberWithFakeConnection();
    const received: string[] = [];
    const first = subscriber.listen('user:4', (message) => received.push(`a:${message}`));
    const second = subscriber.listen('user:4', (message) => received.push(`b:${message}`));
    connection.confirm();
    await Promise.all([first, second]);
    connection.emit('message', 'user:4', 'hello');
    expect(received).to.deep.equal(['a:hello', 'b:hello']);
  });
});
