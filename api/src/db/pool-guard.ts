import type { Pool, PoolClient } from 'pg';

/** How long a checked-out client whose connection ended may stay unreleased before the guard releases it. */
const RELEASE_GRACE_MS = 2000;

/**
 * Gives back to the pool a client whose connection died while it was checked out and that
 * nobody releases. Kysely (0.29, under MikroORM's transactions) releases a transaction's
 * client only after its COMMIT or ROLLBACK succeeded: when the database blinks mid-transaction
 * the ROLLBACK fails and the client stays checked out for good. Each blink then costs the pool
 * one client for the life of the process, and `pool.end()` (shutdown) waits for it forever.
 * A client whose connection ended and is still checked out after a short grace is released
 * with an error, which makes pg-pool drop it.
 */
export function guardPool(pool: Pool): void {
  const checkedOut = new Set<PoolClient>();
  pool.on('acquire', (client) => checkedOut.add(client));
  pool.on('release', (_error, client) => checkedOut.delete(client));
  pool.on('remove', (client) => checkedOut.delete(client as PoolClient));
  pool.on('connect', (client) => {
    client.on('end', () => {
      const timer = setTimeout(() => {
        const lost = client as PoolClient;
        if (!checkedOut.delete(lost)) return;
        lost.release(new Error('the connection ended while the client was checked out, and it was never released'));
      }, RELEASE_GRACE_MS);
      timer.unref();
    });
  });
}
