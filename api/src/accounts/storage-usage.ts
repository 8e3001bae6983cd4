import type { EntityManager } from '@mikro-orm/postgresql';
import { query, statement } from '../db/statements.ts';

/**
 * A user's storage_used_bytes changes only through these single atomic statements, so
 * concurrent confirms and deletes never lose an update.
 */

/** Adds `bytes` if the total stays within `quotaBytes`; false (nothing changed) when it would not. */
export async function chargeStorage(em: EntityManager, userId: string, bytes: number, quotaBytes: number): Promise<boolean> {
  const rows = await em.execute(
    `update users set storage_used_bytes = storage_used_bytes + ? where id = ? and storage_used_bytes + ? <= ? returning storage_used_bytes`,
    [bytes, userId, bytes, quotaBytes],
  );
  return rows.length > 0;
}

/** Gives `bytes` back, never below zero. */
export async function refundStorage(em: EntityManager, userId: string, bytes: number): Promise<void> {
  await em.execute(`update users set storage_used_bytes = greatest(storage_used_bytes - ?, 0) where id = ?`, [bytes, userId]);
}

const STORAGE_USED = statement<{ storage_used_bytes: string }>('accounts.storage_used', 'select storage_used_bytes from users where id = ?');

export async function storageUsed(em: EntityManager, userId: string): Promise<number> {
  const [row] = await query(em, STORAGE_USED, [userId]);
  return Number(row?.storage_used_bytes ?? 0);
}
