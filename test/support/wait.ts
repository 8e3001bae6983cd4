import type { MikroORM } from '@mikro-orm/postgresql';
import { MediaFile, type MediaFileRow } from '../../api/src/media/entities.ts';

/** Polls `probe` until it returns a value (not undefined); fails naming `what` after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string | (() => string), timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${typeof what === 'string' ? what : what()}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

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
