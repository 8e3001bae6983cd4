import { Redis } from 'ioredis';
import type { EventBus, UserEvent } from '../../api/src/events/bus.ts';

/** Listens on a user's event channel the way the user stream does, for assertions. */
export async function listenToUser(bus: EventBus, userId: string) {
  const subscriber = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
  const events: UserEvent[] = [];
  const waiters: (() => void)[] = [];
  subscriber.on('message', (_channel: string, message: string) => {
    events.push(JSON.parse(message) as UserEvent);
    for (const wake of waiters.splice(0)) wake();
  });
  await subscriber.subscribe(bus.userChannel(userId));
  return {
    events,
    /** Resolves with the first event of that type, or fails after `timeoutMs`. */
    async next(type: UserEvent['type'], timeoutMs = 30_000): Promise<UserEvent> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find((event) => event.type === type);
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no ${type} event within ${timeoutMs} ms (saw: ${events.map((e) => e.type).join(', ') || 'nothing'})`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    close: () => subscriber.quit(),
  };
}
