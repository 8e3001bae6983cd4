import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import { MediaFile, type MediaFileRow } from '../../api/src/media/entities.ts';
import { eventually } from '../../hack/fixtures/wait.ts';

/** The one polling helper (shared with the benchmarks: hack/fixtures/wait.ts). */
export { eventually };

/** A media file's row once `done` holds for it. */
export function fileWhen(orm: MikroORM, id: string, done: (file: MediaFileRow) => boolean, timeoutMs = 30_000): Promise<MediaFileRow> {
  let last: MediaFileRow | undefined;
  return eventually(
    async () => {
      last = await orm.em.fork().findOneOrFail(MediaFile, id);
      return done(last) ? last : undefined;
    },
    () => `file ${id} (last seen ${last?.status}/${last?.proxyStatus})`,
    timeoutMs,
  );
}

/**
 * A barrier on a pub/sub channel: publishes a marker on `channel` and resolves once it is
 * among the `received` messages. Redis delivers a channel's messages in the order it ran the
 * PUBLISHes, so everything published before this call has then been received too: what
 * is missing then was never published (no waiting a fixed time and seeing nothing).
 */
export async function channelFlushed(redis: Redis, channel: string, received: readonly { type: string }[]): Promise<void> {
  const marker = `barrier-${randomUUID()}`;
  await redis.publish(channel, JSON.stringify({ type: marker, data: {} }));
  await eventually(async () => (received.some((message) => message.type === marker) ? true : undefined), `the barrier message on ${channel}`, 10_000, 10);
}
