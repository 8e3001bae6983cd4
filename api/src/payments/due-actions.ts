import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.ts';
import type { DueActionKind } from './entities.ts';

/** What runs when an action falls due; it gets the claiming transaction and the moment it was due. */
export type DueActionHandler = (tx: EntityManager, action: { userId: string; dueAt: Date }) => Promise<void>;

/** A failed action is tried again later, at most this many times. */
const MAX_ATTEMPTS = 8;

/**
 * Work due at a moment, kept in `payment_due_actions` so a restart loses none of it:
 * scheduling is an insert in the caller's transaction; a sweep claims due rows with
 * SKIP LOCKED (so replicas share them) and runs each in its own transaction.
 */
export class DueActions {
  readonly #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Schedules once: the same user, kind and moment again is a no-op. */
  async schedule(em: EntityManager, userId: string, kind: DueActionKind, dueAt: Date): Promise<void> {
    await em.execute(
      `insert into payment_due_actions (id, user_id, kind, due_at, attempts, created_at) values (?, ?, ?, ?, 0, ?)
       on conflict (user_id, kind, due_at) do nothing`,
      [randomUUID(), userId, kind, dueAt, this.#clock.now()],
    );
  }

  /** Drops the user's pending actions of a kind (a replaced beta grant, a canceled plan's reminder). */
  async cancelPending(em: EntityManager, userId: string, kind: DueActionKind): Promise<void> {
    await em.execute(`delete from payment_due_actions where user_id = ? and kind = ? and done_at is null`, [userId, kind]);
  }

  async pending(em: EntityManager, userId: string, kind: DueActionKind): Promise<Date[]> {
    const rows = await em.execute<{ due_at: Date }[]>(
      `select due_at from payment_due_actions where user_id = ? and kind = ? and done_at is null order by due_at`,
      [userId, kind],
    );
    return rows.map((row) => new Date(row.due_at));
  }

  async deleteAllOf(em: EntityManager, userId: string): Promise<void> {
    await em.execute(`delete from payment_due_actions where user_id = ?`, [userId]);
  }

  /** Runs every action due by now, one transaction each; returns how many ran. */
  async sweep(orm: MikroORM, handlers: Record<DueActionKind, DueActionHandler>, logger: Logger): Promise<number> {
    let ran = 0;
    for (;;) {
      const now = this.#clock.now();
      let failure: { id: string; attempts: number; error: unknown } | undefined;
      const claimed = await orm.em.fork().transactional(async (tx) => {
        const [row] = await tx.execute<{ id: string; user_id: string; kind: DueActionKind; due_at: Date; attempts: number }[]>(
          `select id, user_id, kind, due_at, attempts from payment_due_actions
           where done_at is null and due_at <= ? order by due_at limit 1 for update skip locked`,
          [now],
        );
        if (!row) return false;
        try {
          // A savepoint, so a failing handler's writes go while the claim stays to record the failure.
          await tx.transactional((inner) => handlers[row.kind](inner, { userId: row.user_id, dueAt: new Date(row.due_at) }));
          await tx.execute(`update payment_due_actions set done_at = ?, attempts = attempts + 1 where id = ?`, [now, row.id]);
        } catch (error) {
          failure = { id: row.id, attempts: row.attempts + 1, error };
          const giveUp = failure.attempts >= MAX_ATTEMPTS;
          // Back off 1, 2, 4 … minutes; after the last attempt the row is closed with its error.
          const retryAt = new Date(now.getTime() + 60_000 * 2 ** (failure.attempts - 1));
          await tx.execute(
            `update payment_due_actions set attempts = ?, last_error = ?, due_at = case when ? then due_at else ? end, done_at = case when ? then ?::timestamptz else null end where id = ?`,
            [failure.attempts, String(error), giveUp, retryAt, giveUp, now, row.id],
          );
        }
        return true;
      });
      if (!claimed) return ran;
      if (failure) logger.warn({ err: failure.error, action: failure.id, attempts: failure.attempts }, 'a due payment action failed');
      else ran++;
    }
  }
}

/** Sweeps on a timer (and once at start, for what fell due while no api ran); the stop function waits for a running sweep. */
export function startDueActionSweep(run: () => Promise<number>, everyMs: number, logger: Logger): () => Promise<void> {
  let running: Promise<void> | undefined;
  const tick = () => {
    if (running) return;
    running = run()
      .then(
        (ran) => void (ran && logger.info({ ran }, 'due payment actions ran')),
        (error: unknown) => logger.warn({ err: error }, 'the due payment action sweep failed'),
      )
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, everyMs);
  timer.unref();
  const first = setTimeout(tick, 0);
  first.unref();
  return async () => {
    clearInterval(timer);
    clearTimeout(first);
    await running;
  };
}
